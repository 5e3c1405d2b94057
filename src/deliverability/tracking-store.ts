/**
 * @module deliverability/tracking-store
 * The tracking service's statements that go past drizzle's query builder: a batch's engagement events inserted in
 * one statement, and a message's hits summed by kind.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';

/**
 * Inserts a batch's engagement events, rows of [id, message_id, kind, link_index, ip, user_agent, counted, flag, at,
 * hits]: one statement whatever the batch's size, the rows travelling as one JSON array unpacked by SQLite.
 */
export async function insertEngagementEvents(tx: Tx, events: unknown[][]): Promise<void> {
  await tx.run(sql`INSERT INTO engagement_events (id, message_id, kind, link_index, ip, user_agent, counted, flag, at, hits)
        SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9 FROM json_each(${JSON.stringify(events)})`);
}

/** A tracked message's opens and clicks, summed by kind and whether counted, with the first and last hit of each. */
export async function engagementTotals(db: CoreDeps['db'], trackedId: string) {
  return db.orm
    .select({
      kind: tables.engagementEvents.kind,
      counted: tables.engagementEvents.counted,
      hits: sql<number>`sum(${tables.engagementEvents.hits})`,
      first: sql<number>`min(${tables.engagementEvents.at})`,
      last: sql<number>`max(${tables.engagementEvents.at})`,
    })
    .from(tables.engagementEvents)
    .where(
      and(eq(tables.engagementEvents.messageId, trackedId), inArray(tables.engagementEvents.kind, ['open', 'click'])),
    )
    .groupBy(tables.engagementEvents.kind, tables.engagementEvents.counted);
}
