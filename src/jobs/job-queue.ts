/**
 * @module jobs/job-queue
 * The durable job queue over the `jobs` table, shared by every background task (webhook delivery, outbound
 * mail, scheduled sends, purges).
 *
 * How it works:
 * - **Enqueue** inserts a row (`kind`, JSON `payload`, `run_at`). With a `dedupeKey`, enqueueing again while
 *   a job with that key is still in the table (queued, running or dead) returns the existing job instead of
 *   adding one; completed jobs are deleted, which frees their key. {@link enqueueJob} writes inside the
 *   caller's transaction, so a job exists if and only if the change that asked for it does.
 * - **Claim** is one `UPDATE … WHERE id IN (due, unleased jobs) AND lease free or expired … RETURNING`. It sets
 *   the lease owner and expiry and counts the attempt. SQLite (and a libSQL server) run one write statement at
 *   a time, so several processes on one database never hold the same job at once; a crashed worker's job is
 *   claimed again once its lease has lapsed. Delivery is therefore at-least-once: handlers must be idempotent
 *   or tolerate a repeat.
 * - **Complete** deletes the job; **retry** clears the lease and sets the next `run_at`; **give up** marks it
 *   dead (`dead_at`), kept for inspection and never claimed again. Each of these applies only while the caller
 *   still holds the lease it claimed (same owner, same attempt), and says whether it did. `settleAndClaim`
 *   does a round of these and the next claim in one transaction (one commit), which is what workers use.
 *
 * Every time comes from `deps.clock` (unix milliseconds in the table), so tests move time by hand.
 */
import { and, asc, eq, inArray, isNotNull, isNull } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import { currentTestClock, outsideTestClock } from '../clock-scope.js';
import type { Clock, CoreDeps, IdGenerator } from '../ports/index.js';
import { claimIn, claimOrderedIn, held, INSERT_CHUNK, settleAllIn, settleIn } from './job-claims.js';
import type {
  ClaimOptions,
  Job,
  JobInput,
  JobQueue,
  OrderedClaimOptions,
  OrderedJob,
  Settlement,
} from './contracts.js';

/**
 * The whole row of a new job, for writers that insert it themselves (the mail writer thread stores the jobs of a
 * message in the transaction that stores the message). {@link enqueueJob} inserts the same row.
 */
export function jobRowOf(
  { clock, newId }: { clock: Clock; newId: IdGenerator },
  input: JobInput,
): typeof tables.jobs.$inferSelect {
  // Jobs run by real time, also when a test-mode application's operation queues them (src/clock-scope.ts): a run_at
  // given in its virtual time keeps its distance from the virtual now (a delivery retried in a minute, a minute of
  // real time), so mail to other servers leaves as usual whatever the test clock says.
  const scope = currentTestClock();
  const now = scope ? outsideTestClock(() => clock.now().getTime()) : clock.now().getTime();
  return {
    id: newId(),
    kind: input.kind,
    payload: input.payload,
    runAt: input.runAt === undefined ? now : input.runAt.getTime() + (scope ? now - scope.at : 0),
    attempts: 0,
    leaseOwner: null,
    leaseExpiresAt: null,
    lastError: null,
    dedupeKey: input.dedupeKey ?? null,
    createdAt: now,
    deadAt: null,
    orderKey: input.orderKey ?? null,
  };
}

/**
 * Inserts many jobs inside the caller's write transaction with a few multi-row INSERTs, in the order given (their
 * order keys follow it). A job whose dedupe key exists already is skipped. Returns how many were added.
 */
export async function enqueueJobs(
  tx: Tx,
  deps: { clock: Clock; newId: IdGenerator },
  inputs: readonly JobInput[],
): Promise<number> {
  let added = 0;
  for (let index = 0; index < inputs.length; index += INSERT_CHUNK) {
    const rows = inputs.slice(index, index + INSERT_CHUNK).map((input) => jobRowOf(deps, input));
    const inserted = await tx
      .insert(tables.jobs)
      .values(rows)
      .onConflictDoNothing({ target: tables.jobs.dedupeKey })
      .returning({ id: tables.jobs.id });
    added += inserted.length;
  }
  return added;
}

/** Inserts a job inside the caller's write transaction. Returns its id and whether it is new. */
export async function enqueueJob(
  tx: Tx,
  deps: { clock: Clock; newId: IdGenerator },
  input: JobInput,
): Promise<{ id: string; created: boolean }> {
  const row = jobRowOf(deps, input);
  const id = row.id;
  const inserted = await tx
    .insert(tables.jobs)
    .values(row)
    .onConflictDoNothing({ target: tables.jobs.dedupeKey })
    .returning({ id: tables.jobs.id });
  if (inserted.length > 0) return { id, created: true };
  const existing = await tx
    .select({ id: tables.jobs.id })
    .from(tables.jobs)
    .where(eq(tables.jobs.dedupeKey, input.dedupeKey ?? ''));
  return { id: existing[0]?.id ?? id, created: false };
}

/** Creates the queue. One per core; workers and producers share it. */
export function createJobQueue({ db, clock, newId }: Pick<CoreDeps, 'db' | 'clock' | 'newId'>): JobQueue {
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  const nowMs = () => clock.now().getTime();

  return {
    /** Enqueues in its own transaction and wakes the in-process workers. */
    async enqueue(input: JobInput): Promise<{ id: string; created: boolean }> {
      const result = await db.write((tx) => enqueueJob(tx, { clock, newId }, input));
      notify();
      return result;
    },

    /**
     * Enqueues inside the caller's transaction. In-process workers are woken at once: their claim is a write,
     * which this process runs only after the caller's transaction has committed, so it sees the new job.
     */
    async enqueueIn(tx: Tx, input: JobInput): Promise<{ id: string; created: boolean }> {
      const result = await enqueueJob(tx, { clock, newId }, input);
      queueMicrotask(notify);
      return result;
    },

    /** Enqueues many jobs inside the caller's transaction ({@link enqueueJobs}) and wakes the in-process workers. */
    async enqueueManyIn(tx: Tx, inputs: readonly JobInput[]): Promise<number> {
      const added = await enqueueJobs(tx, { clock, newId }, inputs);
      if (added > 0) queueMicrotask(notify);
      return added;
    },

    /** Wakes the in-process workers after jobs were written by another path (the mail writer thread) and committed. */
    announce(): void {
      notify();
    },

    /** Calls `listener` whenever a job is enqueued in this process. Returns the unsubscribe function. */
    onEnqueue(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /**
     * Earliest time (unix ms) at which a job of these kinds becomes claimable: its `run_at`, or for a leased
     * job the later of `run_at` and its lease expiry. A cheap read that lets idle workers skip the claim write.
     */
    async nextClaimableAt(kinds: readonly string[]): Promise<number | undefined> {
      if (kinds.length === 0) return undefined;
      const live = and(inArray(tables.jobs.kind, [...kinds]), isNull(tables.jobs.deadAt));
      const [free] = await db.orm
        .select({ at: tables.jobs.runAt })
        .from(tables.jobs)
        .where(and(live, isNull(tables.jobs.leaseExpiresAt)))
        .orderBy(asc(tables.jobs.runAt))
        .limit(1);
      const leased = await db.orm
        .select({ runAt: tables.jobs.runAt, leaseExpiresAt: tables.jobs.leaseExpiresAt })
        .from(tables.jobs)
        .where(and(live, isNotNull(tables.jobs.leaseExpiresAt)));
      const times = [...(free ? [free.at] : []), ...leased.map((job) => Math.max(job.runAt, job.leaseExpiresAt ?? 0))];
      return times.length > 0 ? Math.min(...times) : undefined;
    },

    /**
     * Claims up to `limit` due jobs whose lease is free or expired, in one atomic UPDATE … RETURNING, oldest
     * `run_at` first. Each claimed job's `attempts` is incremented.
     */
    async claim(options: ClaimOptions): Promise<Job[]> {
      if (options.kinds.length === 0 || options.limit <= 0) return [];
      return db.write((tx) => claimIn(clock, tx, options));
    },

    /** Pushes the lease of a job this owner holds `leaseMs` into the future. False when the lease was lost. */
    async extendLease(job: Job, owner: string, leaseMs: number): Promise<boolean> {
      const rows = await db.write((tx) =>
        tx
          .update(tables.jobs)
          .set({ leaseExpiresAt: nowMs() + leaseMs })
          .where(held(job, owner))
          .returning({ id: tables.jobs.id }),
      );
      return rows.length > 0;
    },

    /** Finishes a job: it is deleted. False when the lease was lost (another worker may run it again). */
    async complete(job: Job, owner: string): Promise<boolean> {
      return db.write((tx) => settleIn(clock, tx, { job, owner, outcome: { type: 'done' } }));
    },

    /** Releases a job to run again at `at`, recording why this attempt failed. */
    async retry(job: Job, owner: string, at: Date, error: string): Promise<boolean> {
      return db.write((tx) => settleIn(clock, tx, { job, owner, outcome: { type: 'retry', at, error } }));
    },

    /** Gives up on a job: it stays in the table as dead (never claimed again) with the last error. */
    async giveUp(job: Job, owner: string, error: string): Promise<boolean> {
      return db.write((tx) => settleIn(clock, tx, { job, owner, outcome: { type: 'give_up', error } }));
    },

    /**
     * Records several outcomes and then claims new jobs, all in ONE write transaction: a busy worker pays one
     * commit (one fsync) per round instead of two per job. Returns, per settlement, whether the lease was still
     * held, and the jobs claimed.
     */
    async settleAndClaim(
      settlements: readonly Settlement[],
      claim: ClaimOptions | undefined,
    ): Promise<{ settled: boolean[]; claimed: Job[] }> {
      return db.write(async (tx) => {
        const settled = await settleAllIn(clock, tx, settlements);
        const claimed = claim && claim.kinds.length > 0 && claim.limit > 0 ? await claimIn(clock, tx, claim) : [];
        return { settled, claimed };
      });
    },

    /**
     * {@link settleAndClaim} for jobs with order keys: records the outcomes, then claims up to `limit` jobs of one
     * kind, skipping each job while an earlier one of its order key is leased or waits for a retry. Jobs come back
     * in enqueue order (`position`); each key's jobs in a claim are consecutive in it.
     */
    async settleAndClaimOrdered(
      settlements: readonly Settlement[],
      claim: OrderedClaimOptions | undefined,
    ): Promise<{ settled: boolean[]; claimed: OrderedJob[] }> {
      return db.write(async (tx) => {
        const settled = await settleAllIn(clock, tx, settlements);
        const claimed = claim && claim.limit > 0 ? await claimOrderedIn(clock, tx, claim) : [];
        return { settled, claimed };
      });
    },

    /** Pushes the lease of every live job `owner` holds `leaseMs` into the future (one statement); returns how many. */
    async extendLeases(owner: string, leaseMs: number): Promise<number> {
      const rows = await db.write((tx) =>
        tx
          .update(tables.jobs)
          .set({ leaseExpiresAt: nowMs() + leaseMs })
          .where(and(eq(tables.jobs.leaseOwner, owner), isNull(tables.jobs.deadAt)))
          .returning({ id: tables.jobs.id }),
      );
      return rows.length;
    },

    /** One job by id (any state), or undefined once completed. */
    async find(id: string): Promise<Job | undefined> {
      const [row] = await db.orm.select().from(tables.jobs).where(eq(tables.jobs.id, id));
      return row;
    },
  };
}
