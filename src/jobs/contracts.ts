/**
 * @module jobs/contracts
 * The jobs area's declared interface: the durable job queue as producers and workers see it, and the job types they
 * share.
 */
import type { Tx } from '../../storage/index.js';

/** What to enqueue. */
export interface JobInput {
  /** Selects the handler, e.g. `webhook.deliver`. Use `<area>.<action>`. */
  kind: string;
  /** JSON the handler reads; keep it self-contained (the job may run after its source rows changed). */
  payload: Record<string, unknown>;
  /** Earliest time to run (default: now). */
  runAt?: Date;
  /** Makes enqueueing idempotent: while a job with this key exists, no second one is added. */
  dedupeKey?: string;
  /**
   * Jobs with the same order key run one at a time, in enqueue order, when claimed with {@link JobQueue.claimOrdered}
   * (`<group> <rest>`; see the `jobs.order_key` column).
   */
  orderKey?: string;
}

/** A job as stored. Times are unix milliseconds. */
export interface Job {
  id: string;
  kind: string;
  payload: Record<string, unknown>;
  runAt: number;
  /** Claims so far, this one included: 1 on the first run. */
  attempts: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  lastError: string | null;
  dedupeKey: string | null;
  createdAt: number;
  deadAt: number | null;
  orderKey: string | null;
}

/**
 * What happens to a job after a run: deleted, run again at `at`, marked dead, or released unrun (its lease
 * cleared and its attempt not counted, as if it had never been claimed). `commit`, when given, runs in
 * the same transaction that records the outcome, and only while the run still holds its lease: a handler records
 * what it did (e.g. per-recipient delivery state) atomically with the job's completion.
 */
export type JobOutcome = (
  | { type: 'done' }
  | { type: 'retry'; at: Date; error: string }
  | { type: 'give_up'; error: string }
  | { type: 'release' }
) & {
  commit?: ((tx: Tx) => Promise<void>) | undefined;
};

/** An outcome to record for a job the owner holds. */
export interface Settlement {
  job: Job;
  owner: string;
  outcome: JobOutcome;
}

/** Options of {@link JobQueue.claim}. */
export interface ClaimOptions {
  /** Identifies the claiming worker (unique per worker instance and process). */
  owner: string;
  /** Job kinds this worker has handlers for. */
  kinds: readonly string[];
  /** Most jobs to take at once. */
  limit: number;
  /** How long the lease lasts; a handler must finish (or extend) within it. */
  leaseMs: number;
}

/** Options of {@link JobQueue.claimOrdered}. */
export interface OrderedClaimOptions {
  owner: string;
  /** The one job kind to claim. */
  kind: string;
  limit: number;
  leaseMs: number;
  /** Order-key groups (the part before the first space) to leave out, e.g. endpoints that hold enough jobs already. */
  skipGroups?: readonly string[];
  /**
   * Order keys one claim takes at most (default: no limit), so that other claimers (processes) find keys left:
   * a key's jobs run one at a time, so whoever holds a key's turn delivers its jobs.
   */
  maxKeys?: number;
  /** Jobs of one key one claim takes at most (default: no limit). */
  maxPerKey?: number;
}

/** A claimed job with its place in the queue (rowid: enqueue order). */
export type OrderedJob = Job & { position: number };

/** What createJobQueue() returns (src/jobs/job-queue.ts): the queue, one per core, shared by workers and producers. */
export interface JobQueue {
  /** Enqueues in its own transaction and wakes the in-process workers. */
  enqueue(input: JobInput): Promise<{
    id: string;
    created: boolean;
  }>;
  /**
   * Enqueues inside the caller's transaction. In-process workers are woken at once: their claim is a write,
   * which this process runs only after the caller's transaction has committed, so it sees the new job.
   */
  enqueueIn(
    tx: Tx,
    input: JobInput,
  ): Promise<{
    id: string;
    created: boolean;
  }>;
  /** Enqueues many jobs inside the caller's transaction ({@link enqueueJobs}) and wakes the in-process workers. */
  enqueueManyIn(tx: Tx, inputs: readonly JobInput[]): Promise<number>;
  /** Wakes the in-process workers after jobs were written by another path (the mail writer thread) and committed. */
  announce(): void;
  /** Calls `listener` whenever a job is enqueued in this process. Returns the unsubscribe function. */
  onEnqueue(listener: () => void): () => void;
  /**
   * Earliest time (unix ms) at which a job of these kinds becomes claimable: its `run_at`, or for a leased
   * job the later of `run_at` and its lease expiry. A cheap read that lets idle workers skip the claim write.
   */
  nextClaimableAt(kinds: readonly string[]): Promise<number | undefined>;
  /**
   * Claims up to `limit` due jobs whose lease is free or expired, in one atomic UPDATE … RETURNING, oldest
   * `run_at` first. Each claimed job's `attempts` is incremented.
   */
  claim(options: ClaimOptions): Promise<Job[]>;
  /** Pushes the lease of a job this owner holds `leaseMs` into the future. False when the lease was lost. */
  extendLease(job: Job, owner: string, leaseMs: number): Promise<boolean>;
  /** Finishes a job: it is deleted. False when the lease was lost (another worker may run it again). */
  complete(job: Job, owner: string): Promise<boolean>;
  /** Releases a job to run again at `at`, recording why this attempt failed. */
  retry(job: Job, owner: string, at: Date, error: string): Promise<boolean>;
  /** Gives up on a job: it stays in the table as dead (never claimed again) with the last error. */
  giveUp(job: Job, owner: string, error: string): Promise<boolean>;
  /**
   * Records several outcomes and then claims new jobs, all in ONE write transaction: a busy worker pays one
   * commit (one fsync) per round instead of two per job. Returns, per settlement, whether the lease was still
   * held, and the jobs claimed.
   */
  settleAndClaim(
    settlements: readonly Settlement[],
    claim: ClaimOptions | undefined,
  ): Promise<{
    settled: boolean[];
    claimed: Job[];
  }>;
  /**
   * {@link settleAndClaim} for jobs with order keys: records the outcomes, then claims up to `limit` jobs of one
   * kind, skipping each job while an earlier one of its order key is leased or waits for a retry. Jobs come back
   * in enqueue order (`position`); each key's jobs in a claim are consecutive in it.
   */
  settleAndClaimOrdered(
    settlements: readonly Settlement[],
    claim: OrderedClaimOptions | undefined,
  ): Promise<{
    settled: boolean[];
    claimed: OrderedJob[];
  }>;
  /** Pushes the lease of every live job `owner` holds `leaseMs` into the future (one statement); returns how many. */
  extendLeases(owner: string, leaseMs: number): Promise<number>;
  /** One job by id (any state), or undefined once completed. */
  find(id: string): Promise<Job | undefined>;
}
