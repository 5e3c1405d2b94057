/**
 * Per-grant usage that policy limits are checked against: the daily counters of `grant_daily_usage` and the bytes
 * of stored mail.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Executor, Tx } from '../orm.js';
import { grantDailyUsage } from '../schema/admin.js';
import { messages } from '../schema/mail.js';
import type { DailyUsageIncrement } from '../engine/mail-writer.js';

/** Adds to the daily counters of grants (a row per grant and day is made on first use). */
export async function addDailyUsage(tx: Tx, increments: readonly DailyUsageIncrement[]): Promise<void> {
  for (const { grantId, day, received, sent } of increments) {
    await tx
      .insert(grantDailyUsage)
      .values({ grantId, day, received, sent })
      .onConflictDoUpdate({
        target: [grantDailyUsage.grantId, grantDailyUsage.day],
        set: { received: sql`${grantDailyUsage.received} + ${received}`, sent: sql`${grantDailyUsage.sent} + ${sent}` },
      });
  }
}

/** A grant's counters of one day (zeros when it has none). */
export async function dailyUsageOf(
  db: Executor,
  grantId: string,
  day: number,
): Promise<{ received: number; sent: number }> {
  const [row] = await db
    .select({ received: grantDailyUsage.received, sent: grantDailyUsage.sent })
    .from(grantDailyUsage)
    .where(and(eq(grantDailyUsage.grantId, grantId), eq(grantDailyUsage.day, day)));
  return row ?? { received: 0, sent: 0 };
}

/**
 * The bytes of a grant's stored mail: the sum of its messages' raw sizes (every copy counts, a blob shared by several
 * mailboxes counts in each). It reads the grant's entries of the covering index `messages_grant_size_idx` (one per
 * message, not the rows with their inline bodies), still one per message, so callers cache it.
 */
export async function storedBytesOf(db: Executor, grantId: string): Promise<number> {
  const [row] = await db
    .select({ bytes: sql<number>`coalesce(sum(${messages.rawSize}), 0)` })
    .from(messages)
    .where(eq(messages.grantId, grantId));
  return Number(row?.bytes ?? 0);
}
