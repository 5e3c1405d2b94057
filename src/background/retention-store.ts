/**
 * @module background/retention-store
 * The reads and deletes of the purge (./retention.ts): outbox events past their retention, never the newest event
 * (its seq keeps the dispatcher's position), dead jobs, and lapsed thread claims. Each delete re-checks its condition in the write, so a
 * row changed meanwhile (or deleted by another process) stays or is not counted.
 */
import { and, asc, gt, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { onClockOf, tables, type Database } from '../../storage/index.js';

const { outboxEvents, jobs, threadClaims } = tables;

/** The newest outbox event's seq, as a subquery. */
const newestSeq = sql`(select max(${outboxEvents.seq}) from ${outboxEvents})`;

/** Dispatched before `before` (unix seconds), and not the newest event. */
const dispatchedExpired = (before: number) =>
  and(isNotNull(outboxEvents.dispatchedAt), lt(outboxEvents.dispatchedAt, before), lt(outboxEvents.seq, newestSeq));

/** Never dispatched, created before `before` (unix seconds), and not the newest event. */
const undispatchedExpired = (before: number) =>
  and(isNull(outboxEvents.dispatchedAt), lt(outboxEvents.createdAt, before), lt(outboxEvents.seq, newestSeq));

/** Dead before `beforeMs` (milliseconds). */
const deadExpired = (beforeMs: number) => and(isNotNull(jobs.deadAt), lt(jobs.deadAt, beforeMs));

/** Deletes the outbox events of `keys` that still meet `expired`; how many went. */
async function deleteEvents(db: Database, keys: number[], expired: ReturnType<typeof and>): Promise<number> {
  return (
    await db.write((tx) =>
      tx
        .delete(outboxEvents)
        .where(and(inArray(outboxEvents.seq, keys), expired))
        .returning({ seq: outboxEvents.seq }),
    )
  ).length;
}

/** Up to `limit` seqs of events dispatched before `before`. */
export async function dispatchedEventsBefore(db: Database, before: number, limit: number): Promise<number[]> {
  const rows = await db.orm
    .select({ seq: outboxEvents.seq })
    .from(outboxEvents)
    .where(dispatchedExpired(before))
    .limit(limit);
  return rows.map((row) => row.seq);
}

/** Deletes the events of `keys` still dispatched before `before`; how many went. */
export function deleteDispatchedEvents(db: Database, keys: number[], before: number): Promise<number> {
  return deleteEvents(db, keys, dispatchedExpired(before));
}

/** Up to `limit` undispatched events after seq `after`, in seq order (outbox_pending_idx). */
export function pendingEventsAfter(
  db: Database,
  after: number,
  limit: number,
): Promise<{ seq: number; createdAt: number }[]> {
  return db.orm
    .select({ seq: outboxEvents.seq, createdAt: outboxEvents.createdAt })
    .from(outboxEvents)
    .where(and(isNull(outboxEvents.dispatchedAt), gt(outboxEvents.seq, after)))
    .orderBy(asc(outboxEvents.seq))
    .limit(limit);
}

/** Deletes the events of `keys` still undispatched and created before `before`; how many went. */
export function deleteUndispatchedEvents(db: Database, keys: number[], before: number): Promise<number> {
  return deleteEvents(db, keys, undispatchedExpired(before));
}

/** Up to `limit` ids of jobs dead before `beforeMs`. */
export async function deadJobsBefore(db: Database, beforeMs: number, limit: number): Promise<string[]> {
  const rows = await db.orm.select({ id: jobs.id }).from(jobs).where(deadExpired(beforeMs)).limit(limit);
  return rows.map((row) => row.id);
}

/** Deletes the jobs of `keys` still dead before `beforeMs`; how many went. */
export async function deleteDeadJobs(db: Database, keys: string[], beforeMs: number): Promise<number> {
  return (
    await db.write((tx) =>
      tx
        .delete(jobs)
        .where(and(inArray(jobs.id, keys), deadExpired(beforeMs)))
        .returning({ id: jobs.id }),
    )
  ).length;
}

/**
 * A thread claim lapsed before `beforeMs`, of an application on the service's clock (a test-mode application's claims
 * lapse by its own clock, which a real-time purge cannot read).
 */
const claimLapsed = (db: Database, beforeMs: number) =>
  and(lt(threadClaims.expiresAt, beforeMs), onClockOf(db.orm, threadClaims.applicationId, undefined));

/** Up to `limit` rowids of thread claims lapsed before `beforeMs`. */
export async function lapsedClaimsBefore(db: Database, beforeMs: number, limit: number): Promise<number[]> {
  const rows = await db.orm
    .select({ rowid: sql<number>`rowid` })
    .from(threadClaims)
    .where(claimLapsed(db, beforeMs))
    .limit(limit);
  return rows.map((row) => Number(row.rowid));
}

/** Deletes the thread claims of `keys` (rowids) still lapsed before `beforeMs`; how many went. */
export async function deleteLapsedClaims(db: Database, keys: number[], beforeMs: number): Promise<number> {
  return (
    await db.write((tx) =>
      tx
        .delete(threadClaims)
        .where(and(inArray(sql`rowid`, keys), claimLapsed(db, beforeMs)))
        .returning({ threadId: threadClaims.threadId }),
    )
  ).length;
}
