/**
 * @module oversight/budget-guards
 * Budgets and bursts (issue 37, item 5; docs/oversight.md "Budgets and bursts"), two checks of the send gate, in
 * this order:
 * 1. `send_budget`: per grant, `sends_per_hour` (the UTC clock hour), `sends_per_day` (the UTC day) and
 *    `new_recipients_per_day` (addresses the grant never sent to before). Past one: 429 with `Retry-After` until the
 *    next window, which the message names. Sends already queued for the window count too.
 * 2. `send_rate`: `send_rate_per_minute`, per clock minute. A send over the rate is queued, like Nylas's send
 *    queueing: `{ outcome: 'queue', sendAt }`, the first minute with a slot left, which the caller turns into a
 *    scheduled send (202 with `send_at`). The queue is the grant's pending scheduled sends; past `burst_queue_max` of
 *    them, 429 with `Retry-After` until the first of them leaves.
 * Guards never write. So that two concurrent sends of this process never take the same slot, the rate keeps the
 * slots it handed out (the last minute per grant) and counts the larger of those and what the database shows.
 */
import type { Clock } from '../ports/index.js';
import type { Database } from '../../storage/index.js';
import { AppError } from '../errors.js';
import type { GuardVerdict, SendAttempt, SendGuard } from './contracts.js';
import { neverWrittenTo, newRecipientsSince, pendingByMinute, pendingDueBetween, sendsSince } from './budget-store.js';

const HOUR = 3600;
const DAY = 86_400;

/** A UTC time of day, `15:00`, or a date and time when `withDay`. */
function utc(seconds: number, withDay = false): string {
  const iso = new Date(seconds * 1000).toISOString();
  return withDay ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : `${iso.slice(11, 16)} UTC`;
}

/** A 429 until `until` (unix seconds), with the stable `type` and a message that says what to do. */
function spent(
  type: string,
  what: string,
  until: number,
  nowSeconds: number,
  refused = 'Sends from this grant are',
): AppError {
  const retryAfterSeconds = Math.max(1, until - nowSeconds);
  return new AppError(
    'rate_limited',
    `${what} ${refused} refused until ${utc(until, true)} (retry after ${retryAfterSeconds} s); sending again before then will not help.`,
    { retryAfterSeconds },
    { type },
  );
}

/** One budget of {@link sendBudget}: its window and how much of it is used. */
interface Window {
  setting: 'sends_per_hour' | 'sends_per_day';
  limit: number;
  start: number;
  length: number;
  name: (start: number) => string;
}

/** `sends_per_hour`, `sends_per_day`, `new_recipients_per_day`. */
function sendBudget(db: Database, nowOf: (attempt: SendAttempt) => number): SendGuard {
  return {
    name: 'send_budget',
    async check(attempt): Promise<GuardVerdict | undefined> {
      const { oversight, grant } = attempt;
      const now = Math.floor(nowOf(attempt) / 1000);
      const windows: Window[] = [];
      if (oversight.sendsPerHour !== null)
        windows.push({
          setting: 'sends_per_hour',
          limit: oversight.sendsPerHour,
          start: now - (now % HOUR),
          length: HOUR,
          name: (start) => `the hour ${utc(start)}–${utc(start + HOUR)}`,
        });
      if (oversight.sendsPerDay !== null)
        windows.push({
          setting: 'sends_per_day',
          limit: oversight.sendsPerDay,
          start: now - (now % DAY),
          length: DAY,
          name: (start) => `the UTC day ${utc(start, true).slice(0, 10)}`,
        });
      for (const window of windows) {
        const end = window.start + window.length;
        // A scheduled send leaving was counted when it was queued: only what left counts against it.
        const queued = attempt.kind === 'scheduled' ? 0 : await pendingDueBetween(db, grant.id, window.start, end);
        const used = (await sendsSince(db, grant.id, window.start * 1000)) + queued;
        if (used < window.limit) continue;
        return {
          outcome: 'refuse',
          error: spent(
            'send_budget_exceeded',
            `This grant's budget of ${window.limit} sends for ${window.name(window.start)} (${window.setting}) is spent${queued > 0 ? ` (${queued} of them queued to leave in it)` : ''}.`,
            end,
            now,
          ),
        };
      }
      const limit = oversight.newRecipientsPerDay;
      if (limit === null) return undefined;
      const fresh = await neverWrittenTo(db, grant.id, attempt.recipients);
      if (fresh.length === 0) return undefined;
      const day = now - (now % DAY);
      const already = await newRecipientsSince(db, grant.id, day * 1000);
      if (already + fresh.length <= limit) return undefined;
      return {
        outcome: 'refuse',
        error: spent(
          'new_recipient_budget_exceeded',
          `This grant may write to ${limit} new addresses in the UTC day ${utc(day, true).slice(0, 10)} (new_recipients_per_day); it wrote to ${already} already, and ${fresh.join(', ')} ${fresh.length === 1 ? 'is' : 'are'} new. Sends to addresses it wrote to before still go out.`,
          day + DAY,
          now,
          'Sends to new addresses are',
        ),
      };
    },
  };
}

/** Slots handed out per grant in the last minute that had any, so two concurrent sends never take one. */
interface Handed {
  minute: number;
  used: number;
}

/** At most this many grants' handed-out slots are remembered (older minutes are useless anyway). */
const MAX_HANDED = 10_000;

/** `send_rate_per_minute` and `burst_queue_max`. */
function sendRate(db: Database, nowOf: (attempt: SendAttempt) => number): SendGuard {
  const handed = new Map<string, Handed>();
  return {
    name: 'send_rate',
    async check(attempt): Promise<GuardVerdict | undefined> {
      const rate = attempt.oversight.sendRatePerMinute;
      // A scheduled send leaving has its slot already (it is one of the queue).
      if (rate === null || attempt.kind === 'scheduled') return undefined;
      const { grant } = attempt;
      const nowMs = nowOf(attempt);
      const now = Math.floor(nowMs / 1000);
      const current = Math.floor(now / 60);
      const [sentThisMinute, queue] = await Promise.all([
        sendsSince(db, grant.id, current * 60_000),
        pendingByMinute(db, grant.id, current),
      ]);
      const pending = new Map(queue.map((entry) => [entry.minute, entry.pending]));
      const mine = handed.get(grant.id);
      const usedIn = (minute: number) => {
        const stored = (pending.get(minute) ?? 0) + (minute === current ? sentThisMinute : 0);
        return mine?.minute === minute ? Math.max(stored, mine.used) : stored;
      };
      let minute = current;
      while (usedIn(minute) >= rate) minute++;
      const take = () => {
        if (handed.size >= MAX_HANDED) handed.clear();
        handed.set(grant.id, { minute, used: usedIn(minute) + 1 });
      };
      if (minute === current) {
        take();
        return undefined;
      }
      const queued = queue.reduce((sum, entry) => sum + entry.pending, 0);
      if (queued >= attempt.oversight.burstQueueMax) {
        const first = queue[0]?.minute ?? current;
        return {
          outcome: 'refuse',
          error: spent(
            'send_queue_full',
            `This grant sends at most ${rate} messages a minute (send_rate_per_minute) and already has ${queued} sends queued, its bound (burst_queue_max ${attempt.oversight.burstQueueMax}).`,
            Math.max(now + 1, first * 60),
            now,
          ),
        };
      }
      take();
      const sendAt = minute * 60;
      return {
        outcome: 'queue',
        sendAt,
        check: 'send_rate',
        reason: `This grant sends at most ${rate} messages a minute (send_rate_per_minute): the send is queued, ${queued + 1} in the queue, and leaves at ${utc(sendAt, true)}. It is accepted: do not send it again.`,
      };
    },
  };
}

/**
 * The budget and burst guards, in their order (`send_budget`, then `send_rate`), for
 * `createOversight(deps, { guards })`. `clock` is the time they count by (default: each attempt's own `at`).
 */
export function budgetGuards(db: Database, clock?: Clock): SendGuard[] {
  const nowOf = (attempt: SendAttempt) => clock?.now().getTime() ?? attempt.at;
  return [sendBudget(db, nowOf), sendRate(db, nowOf)];
}
