/**
 * @module health
 * What the service knows of its own worker threads: each one that stopped on its own (a crash, memory exhausted, a
 * deadline overrun) is logged and counted here, by name, and replaced by its owner. The work it had in flight was
 * answered (a failed parse stores the message raw; a failed write is answered 4xx to the sender, who retries; a
 * checkpoint is simply run again). `GET /healthz` (alias of `/livez`) shows the counts.
 *
 * It also keeps the heartbeats of the background loops (outbox dispatcher, job worker, retention purge): each
 * reports when it starts and after every step. `GET /readyz` asks {@link readiness}: the database answers and
 * carries every migration, and every loop started in this process reported within its allowance (a process without
 * the `worker` role has none, and says so in the check).
 */
import type { DatabaseProbe } from '../storage/index.js';
import type { Logger } from './ports/index.js';

/**
 * A loop is late when its last report is older than twice its interval plus this: one step may take a while (a
 * large outbox batch, a purge chunk, a busy database) without making the service unready.
 */
const HEARTBEAT_GRACE_MS = 10_000;

/** The answer of {@link readiness}: each check, and why a failed one failed. */
export interface Readiness {
  ready: boolean;
  checks: { database: string; migrations: string; workers: string };
}

/** One kind of worker thread's record. */
export interface ThreadHealth {
  /** Times a thread of this kind stopped on its own since start. */
  exits: number;
  /** The latest of them: when (ISO 8601) and why. */
  lastExit?: { at: string; reason: string };
}

/** What createHealth() returns: the registry of worker threads that stopped and of the background loops' heartbeats. */
export interface Health {
  /**
   * This process runs `roles`, which do not include `worker`: its loops never start, and readiness does not wait
   * for them (another process on the database runs them; `/readyz` there reports on them).
   */
  withoutBackgroundRole(roles: readonly string[]): void;
  /** Registers a background loop; returns the function it calls at each report. */
  heartbeat(loop: string, intervalMs: number): () => void;
  /** A loop stopped on purpose (shutdown): it is no longer expected to report. */
  stopped(loop: string): void;
  /**
   * Whether this process can take work: the database answers and carries every migration (`probe`), and the
   * background loops reported within their allowance. A process whose loops never started is not ready.
   */
  readiness(probe: DatabaseProbe): Promise<Readiness>;
  /** Records (and logs) that a worker thread of kind `thread` stopped on its own. */
  threadExited(thread: string, reason: string): void;
  /** Every kind of thread that has stopped at least once, by name. */
  threads(): Record<string, ThreadHealth>;
}

/** Creates the registry. `now` dates the records (the core's clock). */
export function createHealth(logger: Logger, now: () => Date): Health {
  const threads = new Map<string, ThreadHealth>();
  /** Background loops of this process: their interval and last report (performance.now()). */
  const loops = new Map<string, { intervalMs: number; lastBeat: number }>();
  /** Set when this process does not run the background role (`--roles` without `worker`): no loop is expected. */
  let withoutLoops: string | undefined;
  return {
    /**
     * This process runs `roles`, which do not include `worker`: its loops never start, and readiness does not wait
     * for them (another process on the database runs them; `/readyz` there reports on them).
     */
    withoutBackgroundRole(roles: readonly string[]): void {
      withoutLoops = `not run here (roles: ${roles.join(',')})`;
    },
    /** Registers a background loop; returns the function it calls at each report. */
    heartbeat(loop: string, intervalMs: number): () => void {
      const record = { intervalMs, lastBeat: performance.now() };
      loops.set(loop, record);
      return () => {
        record.lastBeat = performance.now();
      };
    },
    /** A loop stopped on purpose (shutdown): it is no longer expected to report. */
    stopped(loop: string): void {
      loops.delete(loop);
    },
    /**
     * Whether this process can take work: the database answers and carries every migration (`probe`), and the
     * background loops reported within their allowance. A process whose loops never started is not ready.
     */
    async readiness(probe: DatabaseProbe): Promise<Readiness> {
      const database = await probe();
      const at = performance.now();
      const late = [...loops]
        .filter(([, record]) => at - record.lastBeat > 2 * record.intervalMs + HEARTBEAT_GRACE_MS)
        .map(([name, record]) => `${name} (last report ${Math.round((at - record.lastBeat) / 1000)} s ago)`);
      const workers =
        withoutLoops ?? (loops.size === 0 ? 'not started' : late.length > 0 ? `late: ${late.join(', ')}` : 'ok');
      const checks = database.ok
        ? { database: 'ok', migrations: 'ok', workers }
        : database.check === 'migrations'
          ? { database: 'ok', migrations: database.reason, workers }
          : { database: database.reason, migrations: 'unknown', workers };
      return { ready: database.ok && (workers === 'ok' || workers === withoutLoops), checks };
    },
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
