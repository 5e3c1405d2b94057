/**
 * @module jobs/job-claims
 * The claims and settlements of the job queue (./job-queue.ts) as plain functions inside the caller's write
 * transaction: what `settleAndClaim` and its single-job forms run. Times come from the injected clock.
 */
import { and, eq, isNull } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { Clock } from '../ports/index.js';
import { deleteHeldJobs, leaseDueJobs, leaseJobs, orderedCandidates, releaseLease } from './job-store.js';
import type { ClaimOptions, Job, OrderedClaimOptions, OrderedJob, Settlement } from './contracts.js';

/**
 * Rows per multi-row statement: the INSERTs of {@link enqueueJobs} and the DELETEs of plain settlements (SQLite allows
 * 32,766 bound values; a job row binds 12).
 */
export const INSERT_CHUNK = 500;

/** The lease `owner` holds on `job`: same owner, same attempt, not dead. */
export const held = (job: Job, owner: string) =>
  and(
    eq(tables.jobs.id, job.id),
    eq(tables.jobs.leaseOwner, owner),
    eq(tables.jobs.attempts, job.attempts),
    isNull(tables.jobs.deadAt),
  );

/** Claims due jobs in the caller's transaction, oldest `run_at` first. */
export async function claimIn(clock: Clock, tx: Tx, { owner, kinds, limit, leaseMs }: ClaimOptions): Promise<Job[]> {
  const rows = await leaseDueJobs(tx, { owner, kinds, limit, leaseMs, now: clock.now().getTime() });
  return rows.sort((a, b) => a.runAt - b.runAt || a.createdAt - b.createdAt);
}

/** Claims ordered jobs in the caller's transaction (see {@link JobQueue.settleAndClaimOrdered}). */
export async function claimOrderedIn(
  clock: Clock,
  tx: Tx,
  { owner, kind, limit, leaseMs, skipGroups = [], maxKeys = Infinity, maxPerKey = Infinity }: OrderedClaimOptions,
): Promise<OrderedJob[]> {
  const now = clock.now().getTime();
  // A job waits while a live job of its key is leased or scheduled for later (a retry): one at a time, in
  // enqueue order. Such a job is always the oldest live one of its key (claims take a prefix of each key's due
  // jobs in rowid order, and a failed chain gives its rest back unrun), so the blocked keys are the keys of
  // leased or retrying jobs: a small set, found once per claim through the lease and due indexes.
  const candidates = await orderedCandidates(tx, { kind, now, limit, skipGroups });
  // A prefix of each chosen key's jobs (rowid order), for at most `maxKeys` keys. Same write transaction: no
  // other claim runs between this read and the update.
  const taken = new Map<string, number>();
  const ids: string[] = [];
  for (const row of candidates) {
    const key = row.order_key ?? row.id;
    const count = taken.get(key);
    if (count === undefined ? taken.size >= maxKeys : count >= maxPerKey) continue;
    taken.set(key, (count ?? 0) + 1);
    ids.push(row.id);
  }
  if (ids.length === 0) return [];
  const rows = await leaseJobs(tx, ids, { owner, now, leaseMs });
  return rows.sort((a, b) => a.position - b.position);
}

/** Records one outcome in the caller's transaction; false when the lease was lost. */
export async function settleIn(clock: Clock, tx: Tx, { job, owner, outcome }: Settlement): Promise<boolean> {
  const returning = { id: tables.jobs.id };
  let rows: { id: string }[];
  if (outcome.type === 'release') {
    rows = await releaseLease(tx, held(job, owner));
  } else if (outcome.type === 'done') {
    rows = await tx.delete(tables.jobs).where(held(job, owner)).returning(returning);
  } else if (outcome.type === 'retry') {
    rows = await tx
      .update(tables.jobs)
      .set({
        runAt: outcome.at.getTime(),
        leaseOwner: null,
        leaseExpiresAt: null,
        lastError: outcome.error.slice(0, 2000),
      })
      .where(held(job, owner))
      .returning(returning);
  } else {
    rows = await tx
      .update(tables.jobs)
      .set({
        deadAt: clock.now().getTime(),
        leaseOwner: null,
        leaseExpiresAt: null,
        lastError: outcome.error.slice(0, 2000),
      })
      .where(held(job, owner))
      .returning(returning);
  }
  if (rows.length > 0 && outcome.commit) await outcome.commit(tx);
  return rows.length > 0;
}

/**
 * Records outcomes: the plain `done` ones (most of them) with one DELETE per chunk, the rest one by one. Returns,
 * per settlement, whether the lease was still held.
 */
export async function settleAllIn(clock: Clock, tx: Tx, settlements: readonly Settlement[]): Promise<boolean[]> {
  const settled = new Array<boolean>(settlements.length).fill(false);
  const plain = new Map<string, number[]>();
  for (const [index, settlement] of settlements.entries()) {
    if (settlement.outcome.type === 'done' && !settlement.outcome.commit) {
      plain.set(settlement.owner, [...(plain.get(settlement.owner) ?? []), index]);
    } else {
      settled[index] = await settleIn(clock, tx, settlement);
    }
  }
  for (const [owner, indexes] of plain) {
    for (let start = 0; start < indexes.length; start += INSERT_CHUNK) {
      const chunk = indexes.slice(start, start + INSERT_CHUNK).map((index) => settlements[index]!.job);
      // Held: same owner, same attempt (a job claimed again after its lease lapsed has another attempt count).
      const rows = await deleteHeldJobs(tx, owner, chunk);
      const deleted = new Set(rows.map((row) => row.id));
      indexes.slice(start, start + INSERT_CHUNK).forEach((index) => {
        settled[index] = deleted.has(settlements[index]!.job.id);
      });
    }
  }
  return settled;
}
