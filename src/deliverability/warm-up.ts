/**
 * @module deliverability/warm-up
 * The warm-up ramp of a sending domain (issue 18 part 4): a domain with `warm_up` on (set on create or update of
 * `/v3/admin/domains`) may send to a limited number of recipients per UTC day, rising over four weeks from the day
 * the ramp started (`warm_up_started_at`, day 0), so a new domain builds its reputation with mailbox providers before
 * it sends at volume. From day {@link WARM_UP_DAYS} on there is no cap.
 *
 * {@link createWarmUp}'s gate refuses a send that would take the day past its cap (the send's own recipients count)
 * with 429 and `Retry-After` until the next UTC midnight; the message gives the cap, the day of the ramp and when it
 * resets. Counts are the domain's `domain_daily_sends` (added to by every accepted send in its transaction:
 * ./send-gates.ts), read inside the send's transaction, so two sends cannot pass the cap together.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../deps.js';
import { AppError } from '../errors.js';
import type { RateLimitDetails } from '../operations/http-errors.js';
import { unixDayOfMs, type GatedSend, type SendGate } from './send-gates.js';

/** Days of the ramp; from this day on (0-based) a domain sends without a cap. */
export const WARM_UP_DAYS = 28;

/**
 * The ramp: recipients a day from each day on (0-based, days since the ramp started, UTC). It starts at 50 and doubles
 * every three or four days: 50 → 6,400 over four weeks (about what mailbox providers accept from a new domain).
 */
export const WARM_UP_SCHEDULE: readonly { fromDay: number; cap: number }[] = [
  { fromDay: 0, cap: 50 },
  { fromDay: 3, cap: 100 },
  { fromDay: 7, cap: 200 },
  { fromDay: 10, cap: 400 },
  { fromDay: 14, cap: 800 },
  { fromDay: 17, cap: 1_600 },
  { fromDay: 21, cap: 3_200 },
  { fromDay: 24, cap: 6_400 },
];

/** The day's cap on day `day` of the ramp (0-based), or undefined from day {@link WARM_UP_DAYS} on (no cap). Pure. */
export function warmUpCap(day: number): number | undefined {
  if (day >= WARM_UP_DAYS) return undefined;
  let cap = WARM_UP_SCHEDULE[0]!.cap;
  for (const step of WARM_UP_SCHEDULE) if (day >= step.fromDay) cap = step.cap;
  return cap;
}

/** The day of the ramp (0-based, UTC days) at `nowMs` for a ramp started at `startedAtSeconds`. */
export function warmUpDay(startedAtSeconds: number, nowMs: number): number {
  return Math.max(0, unixDayOfMs(nowMs) - unixDayOfMs(startedAtSeconds * 1000));
}

/** Creates the warm-up gate. */
export function createWarmUp(deps: Pick<CoreDeps, 'clock'>) {
  const gate: SendGate = {
    name: 'warm_up',
    async check(tx: Tx, send: GatedSend): Promise<void> {
      const address = send.from.slice(send.from.lastIndexOf('@') + 1);
      const [domain] = await tx
        .select({ id: tables.domains.id, warmUp: tables.domains.warmUp, startedAt: tables.domains.warmUpStartedAt })
        .from(tables.domains)
        .where(and(eq(tables.domains.domainAddress, address), eq(tables.domains.applicationId, send.applicationId)))
        .limit(1);
      if (!domain?.warmUp || domain.startedAt === null) return;
      const now = deps.clock.now().getTime();
      const day = warmUpDay(domain.startedAt, now);
      const cap = warmUpCap(day);
      if (cap === undefined) return;
      const today = unixDayOfMs(now);
      const [row] = await tx
        .select({ sent: tables.domainDailySends.sent })
        .from(tables.domainDailySends)
        .where(and(eq(tables.domainDailySends.domainId, domain.id), eq(tables.domainDailySends.day, today)));
      const sentToday = row?.sent ?? 0;
      if (sentToday + send.recipients.length <= cap) return;
      const reset = (today + 1) * 86_400_000;
      const retryAfterSeconds = Math.max(1, Math.ceil((reset - now) / 1000));
      const details: RateLimitDetails = { retryAfterSeconds };
      const next = warmUpCap(day + 1);
      throw new AppError(
        'rate_limited',
        `The domain ${address} is warming up: on day ${day} of its ${WARM_UP_DAYS}-day ramp it may send to ${cap} recipients a day (UTC); ${sentToday} were sent today and this send has ${send.recipients.length}, so nothing was sent. ` +
          `The cap resets at ${new Date(reset).toISOString()} (in ${retryAfterSeconds} seconds)${next === undefined ? ', and the ramp is then over (no cap)' : `, to ${next} recipients`}. Send again then, or to fewer recipients today.`,
        details,
      );
    },
  };
  return { gate };
}
