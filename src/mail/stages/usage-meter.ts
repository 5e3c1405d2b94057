/**
 * @module mail/stages/usage-meter
 * The usage policy limits are checked against, read cheaply for every message: a grant's messages received today
 * (`grant_daily_usage.received`) and the bytes of its stored mail. Each is read from the database at most once per
 * freshness window per grant, and the deliveries this process commits meanwhile are added on top, so a steady stream
 * of mail to one mailbox costs a map look-up each. Only grants whose policy has the limit ask (see
 * `usageNeeded` in ./policy-limits.ts); other processes' deliveries are seen after the window. Mail in flight is not
 * counted until it committed, so a burst may pass a limit by the messages under way at once.
 */
import { dailyUsageOf, storedBytesOf, type Database } from '../../../storage/index.js';
import type { Clock } from '../../ports/index.js';
import type { UsageMeter } from '../contracts.js';

/** How long a daily count read from the database is used, in milliseconds. */
const DAILY_FRESH_MS = 1_000;
/** How long stored bytes read from the database are used: the sum reads an index entry per message of the mailbox. */
const STORAGE_FRESH_MS = 10_000;
/** Grants remembered at most (emptied when full). */
const MAX_GRANTS = 10_000;

/** Milliseconds in a day. */
const DAY_MS = 86_400_000;

/** The unix day (days since 1970-01-01 UTC) of a moment. */
export function unixDay(date: Date): number {
  return Math.floor(date.getTime() / DAY_MS);
}

/** Creates the meter. */
export function createUsageMeter({ db, clock }: { db: Database; clock: Clock }): UsageMeter {
  const daily = new Map<string, { day: number; count: number; at: number }>();
  const stored = new Map<string, { bytes: number; at: number }>();
  const remember = <V>(map: Map<string, V>, key: string, value: V) => {
    if (map.size >= MAX_GRANTS) map.clear();
    map.set(key, value);
  };
  return {
    /** Messages the grant received today (UTC). */
    async receivedToday(grantId: string): Promise<number> {
      const day = unixDay(clock.now());
      const now = performance.now();
      const known = daily.get(grantId);
      if (known && known.day === day && now - known.at < DAILY_FRESH_MS) return known.count;
      const { received } = await dailyUsageOf(db.orm, grantId, day);
      remember(daily, grantId, { day, count: received, at: now });
      return received;
    },
    /** Bytes of the grant's stored mail. */
    async storedBytes(grantId: string): Promise<number> {
      const now = performance.now();
      const known = stored.get(grantId);
      if (known && now - known.at < STORAGE_FRESH_MS) return known.bytes;
      const bytes = await storedBytesOf(db.orm, grantId);
      remember(stored, grantId, { bytes, at: now });
      return bytes;
    },
    /** Counts a message committed for a grant (after its transaction). */
    added(grantId: string, bytes: number, day: number): void {
      const count = daily.get(grantId);
      if (count && count.day === day) count.count++;
      const size = stored.get(grantId);
      if (size) size.bytes += bytes;
    },
  };
}

export type { UsageMeter } from '../contracts.js';
