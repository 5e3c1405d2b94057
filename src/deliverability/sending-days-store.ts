/**
 * @module deliverability/sending-days-store
 * The daily sending counters of deliverability, inside the caller's transaction: recipients sent per grant and
 * UTC day (`grant_sending_days`) and per sending domain and day (`domain_daily_sends`), the bounces and complaints
 * added to a grant's day, and the sums of a grant's window of days.
 */
import { and, between, eq, sql } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { WindowTotals } from './contracts.js';

/** Adds `sent` recipients to the grant's day. */
export async function addGrantSent(tx: Tx, grantId: string, day: number, sent: number): Promise<void> {
  await tx
    .insert(tables.grantSendingDays)
    .values({ grantId, day, sent })
    .onConflictDoUpdate({
      target: [tables.grantSendingDays.grantId, tables.grantSendingDays.day],
      set: { sent: sql`${tables.grantSendingDays.sent} + ${sent}` },
    });
}

/** The id of the application's registered domain `domainAddress` (lower case), if any. */
export async function sendingDomainIdOf(
  tx: Tx,
  applicationId: string,
  domainAddress: string,
): Promise<string | undefined> {
  const [domain] = await tx
    .select({ id: tables.domains.id })
    .from(tables.domains)
    .where(and(eq(tables.domains.domainAddress, domainAddress), eq(tables.domains.applicationId, applicationId)))
    .limit(1);
  return domain?.id;
}

/** Adds `sent` recipients to the domain's day, both to what warm-up counts and to the rates' denominator. */
export async function addDomainSent(tx: Tx, domainId: string, day: number, sent: number): Promise<void> {
  await tx
    .insert(tables.domainDailySends)
    .values({ domainId, day, sent, ratedSent: sent })
    .onConflictDoUpdate({
      target: [tables.domainDailySends.domainId, tables.domainDailySends.day],
      set: {
        sent: sql`${tables.domainDailySends.sent} + ${sent}`,
        ratedSent: sql`${tables.domainDailySends.ratedSent} + ${sent}`,
      },
    });
}

/** Adds bounces and complaints to the grant's day. */
export async function addGrantReports(
  tx: Tx,
  grantId: string,
  day: number,
  counts: { hard: number; soft: number; complaint: number },
): Promise<void> {
  const { hard, soft, complaint } = counts;
  const days = tables.grantSendingDays;
  await tx
    .insert(days)
    .values({ grantId, day, sent: 0, hardBounces: hard, softBounces: soft, complaints: complaint })
    .onConflictDoUpdate({
      target: [days.grantId, days.day],
      set: {
        hardBounces: sql`${days.hardBounces} + ${hard}`,
        softBounces: sql`${days.softBounces} + ${soft}`,
        complaints: sql`${days.complaints} + ${complaint}`,
      },
    });
}

/** Sums of the grant's days from `first` to `last` (UTC days, both included). */
export async function grantWindowTotals(tx: Tx, grantId: string, first: number, last: number): Promise<WindowTotals> {
  const days = tables.grantSendingDays;
  const [row] = await tx
    .select({
      sent: sql<number>`coalesce(sum(${days.sent}), 0)`,
      hardBounces: sql<number>`coalesce(sum(${days.hardBounces}), 0)`,
      complaints: sql<number>`coalesce(sum(${days.complaints}), 0)`,
    })
    .from(days)
    .where(and(eq(days.grantId, grantId), between(days.day, first, last)));
  return {
    sent: Number(row?.sent ?? 0),
    hardBounces: Number(row?.hardBounces ?? 0),
    complaints: Number(row?.complaints ?? 0),
  };
}
