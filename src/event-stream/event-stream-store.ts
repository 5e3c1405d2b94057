/**
 * @module event-stream/event-stream-store
 * The event stream's reads of the outbox (`outbox_events`, in `seq` order): the events after a cursor, the newest
 * `seq`, and the oldest still kept (a cursor before it lost events to the retention purge).
 */
import { and, asc, eq, gt, inArray, sql } from 'drizzle-orm';
import { tables, type Orm } from '../../storage/index.js';
import type { OutboxRow } from '../outbox/index.js';

const { outboxEvents } = tables;

/** Up to `limit` events of any application after `after`, oldest first (the tail that feeds every live stream). */
export function eventsAfter(orm: Orm, after: number, limit: number): Promise<OutboxRow[]> {
  return orm.select().from(outboxEvents).where(gt(outboxEvents.seq, after)).orderBy(asc(outboxEvents.seq)).limit(limit);
}

/** Up to `limit` events of one application (of some grants, when given) after `after`, oldest first (a replay). */
export function applicationEventsAfter(
  orm: Orm,
  applicationId: string,
  grantIds: readonly string[] | undefined,
  after: number,
  limit: number,
): Promise<OutboxRow[]> {
  return orm
    .select()
    .from(outboxEvents)
    .where(
      and(
        gt(outboxEvents.seq, after),
        eq(outboxEvents.applicationId, applicationId),
        grantIds ? inArray(outboxEvents.grantId, [...grantIds]) : undefined,
      ),
    )
    .orderBy(asc(outboxEvents.seq))
    .limit(limit);
}

/** The lowest and highest `seq` kept (both 0 while the outbox is empty). */
export async function seqBounds(orm: Orm): Promise<{ oldest: number; newest: number }> {
  const [row] = await orm
    .select({
      oldest: sql<number | null>`min(${outboxEvents.seq})`,
      newest: sql<number | null>`max(${outboxEvents.seq})`,
    })
    .from(outboxEvents);
  return { oldest: Number(row?.oldest ?? 0), newest: Number(row?.newest ?? 0) };
}
