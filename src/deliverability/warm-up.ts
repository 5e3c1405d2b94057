/**
 * @module deliverability/warm-up
 * The warm-up ramp of a sending domain (issues 18 part 4, 23 part 4): a domain with `warm_up` on may send to a limited
 * number of recipients per UTC day, rising from the day the ramp started (`warm_up_started_at`, day 1), so a new
 * domain builds its reputation with mailbox providers before it sends at volume. The caps are
 * `AGENTPOST_WARMUP_SCHEDULE` (day 1 first; by default {@link DEFAULT_WARMUP_SCHEDULE}, four weeks from 50 to 6,400);
 * past its last day there is no cap. Custom domains registered through the domains API start on it by default
 * (src/domains/domain-service.ts); the API turns it on or off per domain.
 *
 * {@link createWarmUp}'s gate refuses a send that would take the day past its cap (the send's own recipients count)
 * with 429 and `Retry-After` until the next UTC midnight; the message gives the cap, the day of the ramp and when it
 * resets. Counts are the domain's `domain_daily_sends` (added to by every accepted send in its transaction:
 * ./send-gates.ts), read inside the send's transaction, so two sends cannot pass the cap together.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError } from '../errors.js';
import { DEFAULT_WARMUP_SCHEDULE } from '../config.js';
import type { RateLimitDetails } from '../access.js';
import { unixDayOfMs, type GatedSend, type SendGate } from './send-gates.js';

/**
 * The ramp in force: the daily caps of `AGENTPOST_WARMUP_SCHEDULE`, day 1 first; with `off` (new custom domains do not
 * warm up) a domain put on warm-up through the API follows the default ramp.
 */
export function warmUpScheduleOf(configured: readonly number[] | 'off'): readonly number[] {
  return configured === 'off' ? DEFAULT_WARMUP_SCHEDULE : configured;
}

/** The day's cap on day `day` of the ramp (0-based: day 1 of the schedule is 0), or undefined past its end (no cap). Pure. */
export function warmUpCap(schedule: readonly number[], day: number): number | undefined {
  return day < schedule.length ? schedule[day] : undefined;
}

/** The day of the ramp (0-based, UTC days) at `nowMs` for a ramp started at `startedAtSeconds`. */
export function warmUpDay(startedAtSeconds: number, nowMs: number): number {
  return Math.max(0, unixDayOfMs(nowMs) - unixDayOfMs(startedAtSeconds * 1000));
}

/** Creates the warm-up gate. */
export function createWarmUp(deps: Pick<CoreDeps, 'clock' | 'config'>) {
  const schedule = warmUpScheduleOf(deps.config.deliverability.warmUpSchedule);
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
      const cap = warmUpCap(schedule, day);
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
      const next = warmUpCap(schedule, day + 1);
      throw new AppError(
        'rate_limited',
        `The domain ${address} is warming up: on day ${day + 1} of its ${schedule.length}-day warm-up ramp it may send to ${cap} recipients a day (UTC); ${sentToday} were sent today and this send has ${send.recipients.length}, so nothing was sent. ` +
          `The cap resets at ${new Date(reset).toISOString()} (in ${retryAfterSeconds} seconds)${next === undefined ? ', and the ramp is then over (no cap)' : `, to ${next} recipients`}. Send again then, or to fewer recipients today.`,
        details,
      );
    },
  };
  return { gate };
}
