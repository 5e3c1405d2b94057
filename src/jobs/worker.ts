/**
 * @module jobs/worker
 * Runs queued jobs: polls the {@link JobQueue} (waking early when a job is enqueued in this process), claims
 * due jobs with a lease, runs each with the handler of its kind, at most `concurrency` at a time, and records
 * the outcome. Any number of workers, in one process or many, may share a database.
 *
 * A handler returns what should happen to the job:
 * - nothing or `{ type: 'done' }`: the job is deleted;
 * - `{ type: 'retry', at, error }`: it runs again at `at` (the handler owns its backoff schedule);
 * - `{ type: 'give_up', error }`: it is marked dead.
 * A handler that throws is retried with the worker's default exponential backoff, and given up after
 * `maxAttempts`. Handlers must finish well within the lease (`leaseMs`, default 60 s) or call `extendLease`,
 * or another worker may take the job over.
 */
import type { Clock, Logger, Metrics } from '../ports/index.js';
import type { Job, JobOutcome, JobQueue, Settlement } from './contracts.js';
import { startPollingLoop, type PollingLoop } from './polling-loop.js';

/** What a handler gets besides the job. */
export interface JobContext {
  /** Identifies the worker holding the lease. */
  owner: string;
  /** Pushes this job's lease `ms` (default: the worker's lease) into the future; false if it was lost. */
  extendLease(ms?: number): Promise<boolean>;
}

/** Runs one job of a kind. */
export type JobHandler = (job: Job, context: JobContext) => Promise<JobOutcome | void>;

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  queue: JobQueue;
  /** Handlers by job kind; the worker claims only these kinds. */
  handlers: Record<string, JobHandler>;
  clock: Clock;
  logger: Logger;
  /** Unique id of this worker (lease owner), e.g. `worker-<random id>`. */
  owner: string;
  /** Jobs run at once (default 8). */
  concurrency?: number;
  /** Longest wait between polls, in real milliseconds (default 1000). Enqueues in this process wake it at once. */
  pollIntervalMs?: number;
  /** Lease length in clock milliseconds (default 60 000). */
  leaseMs?: number;
  /** Attempts before a job whose handler keeps throwing is given up (default 10). */
  maxAttempts?: number;
  /** Delay before retrying a job whose handler threw, by attempt number (default 5 s doubling, at most 1 h). */
  backoffMs?: (attempt: number) => number;
  /** Called when the worker's loop starts and after each of its steps (the readiness heartbeat). */
  onBeat?: () => void;
  /** Counts each run by kind and outcome (default: none). */
  metrics?: Pick<Metrics, 'jobRun'>;
}

/** A started worker. */
export interface Worker {
  readonly owner: string;
  /** Polls now instead of at the next interval (e.g. after moving a test clock). */
  wake(): void;
  /** Stops claiming and waits for the jobs in progress to finish. */
  stop(): Promise<void>;
}

/** Default backoff for handlers that throw: 5 s, 10 s, 20 s … capped at one hour. */
export function defaultBackoffMs(attempt: number): number {
  return Math.min(5_000 * 2 ** Math.max(0, attempt - 1), 60 * 60 * 1000);
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Creates and starts a worker. */
export function createWorker(options: WorkerOptions): Worker {
  const { queue, handlers, clock, logger, owner } = options;
  const concurrency = options.concurrency ?? 8;
  const leaseMs = options.leaseMs ?? 60_000;
  const maxAttempts = options.maxAttempts ?? 10;
  const backoffMs = options.backoffMs ?? defaultBackoffMs;
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const kinds = Object.keys(handlers);
  const inFlight = new Set<Promise<void>>();

  /** Outcomes of finished handlers, recorded together with the next claim (one transaction per round). */
  let pending: Settlement[] = [];
  /** The last claim filled every free slot, so more jobs are probably due: claim again without asking first. */
  let backlog = false;

  function report(settlements: readonly Settlement[], kept: readonly boolean[]): void {
    settlements.forEach(({ job, outcome }, index) => {
      if (!kept[index])
        logger.warn('job lease lapsed before the job finished; another worker may run it again', {
          job_id: job.id,
          kind: job.kind,
          owner,
        });
      if (outcome.type === 'give_up')
        logger.warn('job given up', { job_id: job.id, kind: job.kind, attempts: job.attempts, error: outcome.error });
    });
  }

  async function run(job: Job): Promise<JobOutcome> {
    const started = performance.now();
    const outcome = await attempt(job);
    // A released job did not run: it is not counted.
    if (outcome.type !== 'release')
      options.metrics?.jobRun(job.kind, outcome.type, (performance.now() - started) / 1000);
    return outcome;
  }

  async function attempt(job: Job): Promise<JobOutcome> {
    const handler = handlers[job.kind];
    try {
      if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
      return (
        (await handler(job, { owner, extendLease: (ms = leaseMs) => queue.extendLease(job, owner, ms) })) ?? {
          type: 'done',
        }
      );
    } catch (error) {
      const message = describeError(error);
      logger.warn('job failed', { job_id: job.id, kind: job.kind, attempt: job.attempts, error: message });
      return job.attempts >= maxAttempts
        ? { type: 'give_up', error: message }
        : { type: 'retry', at: new Date(clock.now().getTime() + backoffMs(job.attempts)), error: message };
    }
  }

  /** Records the pending outcomes and claims up to `limit` jobs (0: settle only), in one transaction. */
  async function round(limit: number): Promise<Job[]> {
    const settlements = pending;
    pending = [];
    try {
      const { settled, claimed } = await queue.settleAndClaim(
        settlements,
        limit > 0 ? { owner, kinds, limit, leaseMs } : undefined,
      );
      report(settlements, settled);
      return claimed;
    } catch (error) {
      // Keep the outcomes for the next round; if this process dies first, the leases lapse and the jobs run
      // again (at-least-once).
      pending = [...settlements, ...pending];
      throw error;
    }
  }

  // The loop's callbacks may run before startPollingLoop returns: until then `loop` is undefined, not in its TDZ.
  let loop: PollingLoop | undefined;
  // eslint-disable-next-line prefer-const
  loop = startPollingLoop({
    name: 'job worker',
    intervalMs: pollIntervalMs,
    logger,
    ...(options.onBeat ? { onBeat: options.onBeat } : {}),
    async step(woken) {
      const free = concurrency - inFlight.size;
      let claim = free > 0 && kinds.length > 0;
      if (claim && !woken && !backlog) {
        const next = await queue.nextClaimableAt(kinds);
        claim = next !== undefined && next <= clock.now().getTime();
        if (!claim && pending.length === 0) return next === undefined ? false : next - clock.now().getTime();
      }
      if (!claim && pending.length === 0) return false;
      const jobs = await round(claim ? free : 0);
      backlog = claim && jobs.length === free;
      for (const job of jobs) {
        const running: Promise<void> = run(job).then((outcome) => {
          inFlight.delete(running);
          pending.push({ job, owner, outcome });
          loop?.nudge();
        });
        inFlight.add(running);
      }
      return pending.length > 0;
    },
  });
  const unsubscribe = queue.onEnqueue(() => loop?.wake());

  return {
    owner,
    wake: () => loop?.wake(),
    async stop() {
      unsubscribe();
      await loop?.stop();
      await Promise.all([...inFlight]);
      if (pending.length > 0)
        await round(0).catch((error: unknown) =>
          logger.error('could not record job outcomes at stop', { error: describeError(error) }),
        );
    },
  };
}
