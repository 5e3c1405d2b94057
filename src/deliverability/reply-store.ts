/**
 * @module deliverability/reply-store
 * What the reply watch of tracked sends (./thread-replies.ts) needs of SQL beyond drizzle's operators: whether
 * some grants have a tracked send at all, and a tracked send's reply count raised in the database.
 */
import { eq, sql } from 'drizzle-orm';
import { preparedRead, tables, type Orm, type Tx } from '../../storage/index.js';

/**
 * The first tracked send of any of the grants (ids as one JSON array): asked for every group of messages a sync
 * hands over, so its SQL is built once.
 */
export const firstTracked = preparedRead((orm: Orm) =>
  orm
    .select({ id: tables.trackedMessages.id })
    .from(tables.trackedMessages)
    .where(sql`${tables.trackedMessages.grantId} IN (SELECT value FROM json_each(${sql.placeholder('ids')}))`)
    .limit(1),
);

/** Adds one to a tracked send's replies; its new count (undefined when the send is gone). */
export async function countReply(tx: Tx, trackedId: string): Promise<number | undefined> {
  const [counted] = await tx
    .update(tables.trackedMessages)
    .set({ repliesCount: sql`${tables.trackedMessages.repliesCount} + 1` })
    .where(eq(tables.trackedMessages.id, trackedId))
    .returning({ replies: tables.trackedMessages.repliesCount });
  return counted?.replies;
}
