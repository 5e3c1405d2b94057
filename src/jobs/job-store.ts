/**
 * @module jobs/job-store
 * The statements of the job queue (./job-queue.ts) that need SQL beyond drizzle's operators, each inside the
 * caller's write transaction: the claim of due jobs (one UPDATE over a sub-select), the candidates of an ordered
 * claim and their lease, the release of a lease (the attempt given back), the delete of many held jobs at once;
 * and, outside a transaction, the job enqueued before another of the same order key and still to run.
 */
import { and, asc, eq, getTableColumns, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import { tables, type Executor, type Tx } from '../../storage/index.js';

type JobRow = typeof tables.jobs.$inferSelect;

/** What a claim takes: due jobs of `kinds`, at most `limit`, leased to `owner` until `now + leaseMs`. */
export interface DueClaim {
  owner: string;
  kinds: readonly string[];
  limit: number;
  leaseMs: number;
  now: number;
}

/** Leases up to `limit` due, unleased (or lapsed) live jobs of the kinds, earliest `run_at` first; the rows after. */
export function leaseDueJobs(tx: Tx, { owner, kinds, limit, leaseMs, now }: DueClaim): Promise<JobRow[]> {
  const claimable = and(
    inArray(tables.jobs.kind, [...kinds]),
    lte(tables.jobs.runAt, now),
    isNull(tables.jobs.deadAt),
    or(isNull(tables.jobs.leaseExpiresAt), lte(tables.jobs.leaseExpiresAt, now)),
  );
  // The outer WHERE names the ids only: with the claimable test there too, SQLite walked every claimable row
  // (the whole backlog) on each claim. One statement, so nothing changes between the choice and the update.
  return tx
    .update(tables.jobs)
    .set({ leaseOwner: owner, leaseExpiresAt: now + leaseMs, attempts: sql`${tables.jobs.attempts} + 1` })
    .where(
      inArray(
        tables.jobs.id,
        tx
          .select({ id: tables.jobs.id })
          .from(tables.jobs)
          .where(claimable)
          .orderBy(asc(tables.jobs.runAt))
          .limit(limit),
      ),
    )
    .returning();
}

/**
 * Up to `limit` due live jobs of `kind` in rowid order whose order key is not blocked (no live job of the key is
 * leased or scheduled for later) and does not start with one of `skipGroups` and a space.
 */
export function orderedCandidates(
  tx: Tx,
  { kind, now, limit, skipGroups }: { kind: string; now: number; limit: number; skipGroups: readonly string[] },
): Promise<{ id: string; order_key: string | null }[]> {
  // The scan walks the table in rowid order (NOT INDEXED) and stops at the limit, so a claim reads about `limit`
  // rows plus those of blocked keys, not the whole backlog once per job.
  const skip = skipGroups.map((group) => sql`substr(j.order_key, 1, ${group.length + 1}) <> ${`${group} `}`);
  return tx.all<{
    id: string;
    order_key: string | null;
  }>(sql`select j.id, j.order_key from jobs j not indexed
      where j.kind = ${kind} and j.dead_at is null and j.run_at <= ${now} and (j.lease_expires_at is null or j.lease_expires_at <= ${now})
        ${skip.length > 0 ? sql`and ${sql.join(skip, sql` and `)}` : sql``}
        and (j.order_key is null or (
          j.order_key not in (select b.order_key from jobs b where b.lease_expires_at > ${now} and b.kind = ${kind} and +b.dead_at is null and b.order_key is not null)
          and j.order_key not in (select b.order_key from jobs b where b.dead_at is null and b.run_at > ${now} and b.kind = ${kind} and b.order_key is not null)))
      order by j.rowid limit ${limit}`);
}

/** Leases the jobs of `ids` to `owner` until `now + leaseMs`; the rows after, each with its rowid as `position`. */
export function leaseJobs(
  tx: Tx,
  ids: string[],
  { owner, now, leaseMs }: { owner: string; now: number; leaseMs: number },
): Promise<(JobRow & { position: number })[]> {
  return tx
    .update(tables.jobs)
    .set({ leaseOwner: owner, leaseExpiresAt: now + leaseMs, attempts: sql`${tables.jobs.attempts} + 1` })
    .where(inArray(tables.jobs.id, ids))
    .returning({ ...getTableColumns(tables.jobs), position: sql<number>`rowid` });
}

/** Clears the lease of the jobs `held` selects and gives the attempt back; the ids released. */
export function releaseLease(tx: Tx, held: ReturnType<typeof and>): Promise<{ id: string }[]> {
  return tx
    .update(tables.jobs)
    .set({ leaseOwner: null, leaseExpiresAt: null, attempts: sql`${tables.jobs.attempts} - 1` })
    .where(held)
    .returning({ id: tables.jobs.id });
}

/** Deletes the live jobs of `jobs` still leased to `owner` at the same attempt; the ids deleted. */
export function deleteHeldJobs(
  tx: Tx,
  owner: string,
  jobs: readonly { id: string; attempts: number }[],
): Promise<{ id: string }[]> {
  return tx
    .delete(tables.jobs)
    .where(
      and(
        inArray(
          tables.jobs.id,
          jobs.map((job) => job.id),
        ),
        eq(tables.jobs.leaseOwner, owner),
        isNull(tables.jobs.deadAt),
        inArray(
          sql`${tables.jobs.id} || ':' || ${tables.jobs.attempts}`,
          jobs.map((job) => `${job.id}:${job.attempts}`),
        ),
      ),
    )
    .returning({ id: tables.jobs.id });
}

/** The `run_at` of the live job of `orderKey` enqueued just before the job `jobId` (rowid order), if any. */
export async function earlierJobRunAt(
  db: Executor,
  orderKey: string | null,
  jobId: string,
): Promise<number | undefined> {
  const rows = await db.all<{ run_at: number }>(
    sql`select run_at from jobs where order_key = ${orderKey} and dead_at is null and rowid < (select rowid from jobs where id = ${jobId}) order by rowid limit 1`,
  );
  return rows[0]?.run_at;
}
