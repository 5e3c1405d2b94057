/**
 * @module jobs/background
 * The background role of a service process: the outbox dispatcher and one job worker running every job kind
 * the core has handlers for. `server/main.ts` starts it with the HTTP listener and stops it in `close()`.
 * Several processes on one database may each run it: claims are leased and the outbox batch is taken by the
 * UPDATE that marks it, so no work is done twice at once.
 *
 * To add a kind of background work: give the service a `handlers` record (job kind → JobHandler), spread it
 * into `core.jobHandlers` in `createCore` (src/index.ts), and enqueue with `core.jobs.enqueue(...)` or, inside
 * a write transaction, `core.jobs.enqueueIn(tx, ...)`.
 */
import type { Core } from '../index.js';
import { onEventRecorded } from '../events/outbox.js';
import { startPollingLoop } from './polling-loop.js';
import { createWorker, type Worker } from './worker.js';

/** Pause between an event being recorded in this process and the dispatcher running. */
const DISPATCH_DEBOUNCE_MS = 10;

/** Options of {@link startBackgroundWork}. */
export interface BackgroundOptions {
  /** Longest wait between polls, in real milliseconds (default `config.workerPollMs`). */
  pollIntervalMs?: number;
  /** Jobs run at once by this process (default 16: webhook deliveries mostly wait on the network). */
  concurrency?: number;
}

/** The running background role. */
export interface BackgroundWork {
  worker: Worker;
  /** Polls the outbox and the jobs table now (e.g. after a test moved its clock). */
  wake(): void;
  /** Stops dispatching and claiming, and waits for the jobs in progress. */
  stop(): Promise<void>;
}

/** Starts the dispatcher and a worker for `core`. */
export function startBackgroundWork(core: Core, options: BackgroundOptions = {}): BackgroundWork {
  const { clock, logger, newId, config } = core.deps;
  const pollIntervalMs = options.pollIntervalMs ?? config.workerPollMs;

  const dispatcher = startPollingLoop({
    name: 'outbox dispatcher',
    intervalMs: pollIntervalMs,
    logger,
    async step(woken) {
      // Woken by an event of this process: its transaction may not have committed yet, so skip the read of
      // pending rows (the dispatch is a write, queued behind that transaction) but still skip when nobody listens.
      if (!(woken ? await core.outbox.interested() : await core.outbox.hasPending())) return false;
      const taken = await core.outbox.dispatchBatch();
      return taken > 0;
    },
  });
  // Events recorded in this process wake the dispatcher after a short pause, so a burst of changes is fanned
  // out in one transaction rather than one commit per change.
  let debounce: NodeJS.Timeout | undefined;
  const unsubscribe = onEventRecorded(() => {
    debounce ??= setTimeout(() => {
      debounce = undefined;
      dispatcher.wake();
    }, DISPATCH_DEBOUNCE_MS);
  });

  const worker = createWorker({
    queue: core.jobs,
    handlers: core.jobHandlers,
    clock,
    logger,
    owner: `worker-${newId()}`,
    concurrency: options.concurrency ?? 16,
    pollIntervalMs,
    // Longer than the longest webhook attempt (a challenge-free delivery is one request with this deadline).
    leaseMs: Math.max(60_000, 2 * config.webhookTimeoutMs + 10_000),
  });

  return {
    worker,
    wake() {
      dispatcher.wake();
      worker.wake();
    },
    async stop() {
      unsubscribe();
      clearTimeout(debounce);
      await dispatcher.stop();
      await worker.stop();
    },
  };
}
