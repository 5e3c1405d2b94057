/**
 * @module oversight/budget-store
 * What the budget and burst guards (./budget-guards.ts) read of what sends wrote: a grant's sends since a time (its
 * outbound rows, on the index by grant and time), the addresses it never wrote to before (its correspondents, which a
 * send records: src/outbound/outbound-store.ts), and its pending scheduled sends (the burst queue) by minute. Reads only.
 */
import { and, count, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import { tables, type Database } from '../../storage/index.js';

const { grantCorrespondents, outboundMessages, scheduledMessages } = tables;

/** The grant's sends (its own messages, not the service's) accepted at or after `sinceMs` (unix ms). */
export async function sendsSince(db: Database, grantId: string, sinceMs: number): Promise<number> {
  const [row] = await db.orm
    .select({ sends: count() })
    .from(outboundMessages)
    .where(
      and(
        eq(outboundMessages.grantId, grantId),
        gte(outboundMessages.acceptedAt, sinceMs),
        eq(outboundMessages.kind, 'message'),
      ),
    );
  return row?.sends ?? 0;
}

/** The grant's pending scheduled sends due in [fromSeconds, toSeconds) (unix seconds). */
export async function pendingDueBetween(
  db: Database,
  grantId: string,
  fromSeconds: number,
  toSeconds: number,
): Promise<number> {
  const [row] = await db.orm
    .select({ pending: count() })
    .from(scheduledMessages)
    .where(
      and(
        eq(scheduledMessages.grantId, grantId),
        eq(scheduledMessages.status, 'pending'),
        gte(scheduledMessages.sendAt, fromSeconds),
        lt(scheduledMessages.sendAt, toSeconds),
      ),
    );
  return row?.pending ?? 0;
}

/** Which of `addresses` (lower-cased) the grant never sent to (not among its correspondents). */
export async function neverWrittenTo(db: Database, grantId: string, addresses: readonly string[]): Promise<string[]> {
  if (addresses.length === 0) return [];
  const rows = await db.orm
    .select({ email: grantCorrespondents.email })
    .from(grantCorrespondents)
    .where(and(eq(grantCorrespondents.grantId, grantId), inArray(grantCorrespondents.email, [...addresses])));
  const known = new Set(rows.map((row) => row.email));
  return addresses.filter((address) => !known.has(address));
}

/** How many addresses the grant wrote to first on or after `sinceMs` (its new recipients of a day). */
export async function newRecipientsSince(db: Database, grantId: string, sinceMs: number): Promise<number> {
  const [row] = await db.orm
    .select({ fresh: count() })
    .from(grantCorrespondents)
    .where(and(eq(grantCorrespondents.grantId, grantId), gte(grantCorrespondents.firstAt, sinceMs)));
  return row?.fresh ?? 0;
}

/** The burst queue of a grant: its pending scheduled sends per minute (overdue ones in `currentMinute`), in order. */
export async function pendingByMinute(
  db: Database,
  grantId: string,
  currentMinute: number,
): Promise<{ minute: number; pending: number }[]> {
  const rows = await db.orm.all<{ minute: number; pending: number }>(sql`
    SELECT max(${scheduledMessages.sendAt} / 60, ${currentMinute}) AS minute, COUNT(*) AS pending
    FROM ${scheduledMessages}
    WHERE ${scheduledMessages.grantId} = ${grantId} AND ${scheduledMessages.status} = 'pending'
    GROUP BY minute ORDER BY minute`);
  return rows.map((row) => ({ minute: Number(row.minute), pending: Number(row.pending) }));
}
