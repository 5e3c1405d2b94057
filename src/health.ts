/**
 * @module health
 * What the service knows of its own worker threads: each one that stopped on its own (a crash, memory exhausted, a
 * deadline overrun) is logged and counted here, by name, and replaced by its owner. The work it had in flight was
 * answered (a failed parse stores the message raw; a failed write is answered 4xx to the sender, who retries; a
 * checkpoint is simply run again). `GET /healthz` shows the counts.
 */
import type { Logger } from './deps.js';

/** One kind of worker thread's record. */
export interface ThreadHealth {
  /** Times a thread of this kind stopped on its own since start. */
  exits: number;
  /** The latest of them: when (ISO 8601) and why. */
  lastExit?: { at: string; reason: string };
}

/** Creates the registry. `now` dates the records (the core's clock). */
export function createHealth(logger: Logger, now: () => Date) {
  const threads = new Map<string, ThreadHealth>();
  return {
    /** Records (and logs) that a worker thread of kind `thread` stopped on its own. */
    threadExited(thread: string, reason: string): void {
      const record = threads.get(thread) ?? { exits: 0 };
      record.exits++;
      record.lastExit = { at: now().toISOString(), reason };
      threads.set(thread, record);
      logger.error('worker thread stopped; it is replaced', { thread, reason, exits: record.exits });
    },
    /** Every kind of thread that has stopped at least once, by name. */
    threads(): Record<string, ThreadHealth> {
      return Object.fromEntries([...threads].map(([name, record]) => [name, { ...record }]));
    },
  };
}

/** The registry's type. */
export type Health = ReturnType<typeof createHealth>;
