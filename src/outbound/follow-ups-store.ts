/**
 * @module outbound/follow-ups-store
 * The reads and writes of follow-ups (`follow_ups`; ./follow-ups.ts) that need SQL of their own: the replies that
 * cancel them (a message of the thread stored after the followed-up one, not from the grant) and the pending ones of
 * production applications (a test-mode application's follow-ups wait for its test clock).
 */
import { and, asc, desc, eq, inArray, lte, min, sql, type SQL } from 'drizzle-orm';
import { onClockOf, tables, type Executor, type Orm, type Tx } from '../../storage/index.js';

export type FollowUpRow = typeof tables.followUps.$inferSelect;

const followUps = tables.followUps;

/** One application's follow-ups, or (undefined) those of production applications: not on a test clock. */
function ofClock(orm: Executor, applicationId: string | undefined): SQL {
  return onClockOf(orm, followUps.applicationId, applicationId);
}

/** A reply to follow-up `f`: a message `m` of its thread and grant, stored after the followed-up one, not from it. */
const REPLY = sql`m.thread_id = f.thread_id and m.grant_id = f.grant_id and m.seq > f.after_seq
  and lower(coalesce(json_extract(m.from_addresses, '$[0].email'), '')) <> lower(g.email)`;

/**
 * Pending follow-ups that a reply answered, with the reply's id (the first one). `sinceSeq`: only replies stored after
 * that `messages.seq` (the worker's pass, which looks at what arrived since its last pass: a scan of the new messages,
 * not of every pending follow-up); absent, every pending follow-up of the application is checked.
 */
export async function repliedFollowUps(
  orm: Orm,
  options: { applicationId?: string | undefined; sinceSeq?: number; untilSeq?: number },
): Promise<{ id: string; reply: string }[]> {
  const scope =
    options.applicationId !== undefined
      ? sql`f.application_id = ${options.applicationId}`
      : sql`f.application_id not in (select id from applications where test_clock_at is not null)`;
  // New messages drive the worker's pass (CROSS JOIN keeps them the outer loop: a range of the rowid).
  const rows =
    options.sinceSeq !== undefined
      ? await orm.all<{ id: string; reply: string }>(sql`
          select f.id as id, min(m.id) as reply from messages m cross join follow_ups f
            join grants g on g.id = f.grant_id
          where m.seq > ${options.sinceSeq} and m.seq <= ${options.untilSeq ?? Number.MAX_SAFE_INTEGER}
            and f.status = 'pending' and ${REPLY} and ${scope}
          group by f.id`)
      : await orm.all<{ id: string; reply: string }>(sql`
          select f.id as id, min(m.id) as reply from follow_ups f
            join grants g on g.id = f.grant_id
            join messages m on ${REPLY}
          where f.status = 'pending' and ${scope}
          group by f.id`);
  return rows;
}

/** The first reply to one follow-up, if any (checked again just before it is sent). */
export async function replyTo(orm: Orm, followUpId: string): Promise<string | undefined> {
  const [row] = await orm.all<{ reply: string }>(sql`
    select m.id as reply from follow_ups f join grants g on g.id = f.grant_id join messages m on ${REPLY}
    where f.id = ${followUpId} limit 1`);
  return row?.reply;
}

/** The newest `messages.seq`, where the worker's next pass starts from. */
export async function lastMessageSeq(orm: Orm): Promise<number> {
  const [row] = await orm.all<{ seq: number | null }>(sql`select max(seq) as seq from messages`);
  return row?.seq ?? 0;
}

/** The oldest `after_seq` of a pending follow-up (the worker's first pass starts there), or undefined. */
export async function oldestPendingSeq(orm: Orm): Promise<number | undefined> {
  const [row] = await orm
    .select({ seq: min(followUps.afterSeq) })
    .from(followUps)
    .where(eq(followUps.status, 'pending'));
  return row?.seq ?? undefined;
}

/** Pending follow-ups due by `at` (unix seconds), earliest first, at most `limit`. */
export async function dueFollowUps(
  orm: Orm,
  at: number,
  limit: number,
  applicationId: string | undefined,
): Promise<FollowUpRow[]> {
  return orm
    .select()
    .from(followUps)
    .where(and(eq(followUps.status, 'pending'), lte(followUps.dueAt, at), ofClock(orm, applicationId)))
    .orderBy(asc(followUps.dueAt))
    .limit(limit);
}

/** The earliest `due_at` of an application's pending follow-ups, if any. */
export async function nextFollowUpDue(orm: Orm, applicationId: string): Promise<number | undefined> {
  const [row] = await orm
    .select({ at: min(followUps.dueAt) })
    .from(followUps)
    .where(and(eq(followUps.status, 'pending'), eq(followUps.applicationId, applicationId)));
  return row?.at ?? undefined;
}

/** A grant's follow-ups, newest first. */
export async function listFollowUps(
  orm: Orm,
  grantId: string,
  status: FollowUpRow['status'] | undefined,
  limit: number,
): Promise<FollowUpRow[]> {
  return orm
    .select()
    .from(followUps)
    .where(and(eq(followUps.grantId, grantId), status ? eq(followUps.status, status) : undefined))
    .orderBy(desc(followUps.createdAt), desc(sql`rowid`))
    .limit(limit);
}

/** One follow-up of a grant. */
export async function findFollowUp(orm: Executor, grantId: string, id: string): Promise<FollowUpRow | undefined> {
  const [row] = await orm
    .select()
    .from(followUps)
    .where(and(eq(followUps.id, id), eq(followUps.grantId, grantId)));
  return row;
}

/**
 * Closes pending follow-ups (sent, cancelled or failed) in the caller's transaction; answers the rows it closed (a
 * follow-up another pass or the agent closed first is left alone).
 */
export async function closeFollowUps(
  tx: Tx,
  ids: readonly string[],
  change: Pick<FollowUpRow, 'status'> & Partial<Pick<FollowUpRow, 'sentMessageId' | 'replyMessageId' | 'reason'>>,
  at: number,
): Promise<FollowUpRow[]> {
  if (ids.length === 0) return [];
  return tx
    .update(followUps)
    .set({ ...change, closedAt: at, updatedAt: at })
    .where(and(inArray(followUps.id, [...ids]), eq(followUps.status, 'pending')))
    .returning();
}

/** Moves a pending follow-up's due time (a send that failed for now is tried again then). */
export async function postponeFollowUp(tx: Tx, id: string, dueAt: number, reason: string, at: number): Promise<void> {
  await tx
    .update(followUps)
    .set({ dueAt, reason, updatedAt: at })
    .where(and(eq(followUps.id, id), eq(followUps.status, 'pending')));
}
