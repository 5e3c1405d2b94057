/**
 * @module domains/domain-sends-store
 * A sending domain's daily counters (`domain_daily_sends`): the sums of its window of days, and the bounces and
 * complaints added to its day, and its days one by one. What an accepted send adds is counted by deliverability's send gates.
 */
import { and, asc, between, eq, inArray, sql } from 'drizzle-orm';
import { tables, type Orm, type Tx } from '../../storage/index.js';
import type { WindowTotals } from '../deliverability/contracts.js';
import { unixDayOfMs } from '../time.js';

/** The window totals of each domain (rated recipients, bounces, complaints), today included; absent ones are zero. */
export async function domainWindowTotals(
  db: Orm | Tx,
  domainIds: readonly string[],
  nowMs: number,
  windowDays: number,
): Promise<Map<string, WindowTotals & { softBounces: number }>> {
  const out = new Map<string, WindowTotals & { softBounces: number }>();
  if (domainIds.length === 0) return out;
  const days = tables.domainDailySends;
  const today = unixDayOfMs(nowMs);
  const rows = await db
    .select({
      domainId: days.domainId,
      sent: sql<number>`coalesce(sum(${days.ratedSent}), 0)`,
      hardBounces: sql<number>`coalesce(sum(${days.hardBounces}), 0)`,
      softBounces: sql<number>`coalesce(sum(${days.softBounces}), 0)`,
      complaints: sql<number>`coalesce(sum(${days.complaints}), 0)`,
    })
    .from(days)
    .where(and(inArray(days.domainId, [...domainIds]), between(days.day, today - windowDays + 1, today)))
    .groupBy(days.domainId);
  for (const row of rows) {
    out.set(row.domainId, {
      sent: Number(row.sent),
      hardBounces: Number(row.hardBounces),
      softBounces: Number(row.softBounces),
      complaints: Number(row.complaints),
    });
  }
  return out;
}

/** Adds a bounce or complaint to the domain's day. */
export async function recordDomainReport(
  tx: Tx,
  domainId: string,
  day: number,
  counts: { hard: number; soft: number; complaint: number },
): Promise<void> {
  const days = tables.domainDailySends;
  await tx
    .insert(days)
    .values({
      domainId,
      day,
      sent: 0,
      ratedSent: 0,
      hardBounces: counts.hard,
      softBounces: counts.soft,
      complaints: counts.complaint,
    })
    .onConflictDoUpdate({
      target: [days.domainId, days.day],
      set: {
        hardBounces: sql`${days.hardBounces} + ${counts.hard}`,
        softBounces: sql`${days.softBounces} + ${counts.soft}`,
        complaints: sql`${days.complaints} + ${counts.complaint}`,
      },
    });
}

/** The domain's stored days from `fromDay` to `toDay` (unix days), oldest first; days without a row are absent. */
export async function domainDays(
  db: Orm | Tx,
  domainId: string,
  fromDay: number,
  toDay: number,
): Promise<(typeof tables.domainDailySends.$inferSelect)[]> {
  const days = tables.domainDailySends;
  return db
    .select()
    .from(days)
    .where(and(eq(days.domainId, domainId), between(days.day, fromDay, toDay)))
    .orderBy(asc(days.day));
}
