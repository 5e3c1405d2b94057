/**
 * @module calendar/event-timers
 * Calendar timers (issue 40, item 7; docs/calendar.md#timers): `event.starting` a set time before an event starts (the
 * calendar's `notify_before_start_minutes`, 10 by default) and `event.ending` at its end, as outbox events (webhooks
 * and the event stream) carrying the event object, as every `event.*` notification does; an instance of a series
 * carries the instance. Timed events only (an all-day event has no moment to start at).
 *
 * A due-runner: {@link EventTimerService.runDue} fires what fell due since the runner's last run up to the `now` it
 * is given (the background loop passes the service's clock at every poll; a test clock passes its own), so nothing
 * waits in memory and nothing is lost across a restart:
 * - `event.starting` for an occurrence whose start is after the last run and whose start minus its lead is at or
 *   before `now` (an event created inside its lead fires at once; one that started before the last run does not);
 * - `event.ending` for an occurrence whose end is after the last run and at or before `now`.
 * What it reads are the events whose start lies between the last run and `now` plus the largest lead, and whose end
 * lies between the last run and `now`, by index; series are expanded an hour ahead and kept while unchanged.
 * Each timer is keyed by the event, the kind and the time it is for (`calendar_timer_firings`): fired once, by one
 * process of several; an event moved after its timer fired has a new key and fires for its new time; a cancelled or
 * deleted event is not read at all.
 */
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { EventTimerService, TimerRunOptions } from './contracts.js';
import { eventTimeOf, toEvent } from './event-mapper.js';
import {
  advanceMark,
  calendarTimerSettings,
  eventRows,
  firedAmong,
  largestLeadMinutes,
  markFired,
  markOf,
  overriddenStarts,
  pruneFirings,
  seriesBetween,
  seriesFingerprint,
  singlesBetween,
  timerKeyText,
  type TimerCandidate,
  type TimerKey,
} from './event-timer-store.js';
import { utcRange } from './event-time.js';
import { seriesInstances, type SeriesInstance } from './recurrence.js';

/** The lead of `event.starting` when the calendar sets none: 10 minutes. */
export const DEFAULT_NOTIFY_BEFORE_START_MINUTES = 10;
/** How far back the first run of a runner looks (no mark yet): a minute. */
const FIRST_RUN_LOOKBACK_SECONDS = 60;
/** How far back a run looks at most (a runner stopped for long, a test clock moved far): 31 days. */
const MAX_CATCH_UP_SECONDS = 31 * 86_400;
/** Firings are kept this long past their time (no run looks back further than the catch-up). */
const FIRINGS_KEPT_SECONDS = MAX_CATCH_UP_SECONDS + 86_400;
/** Rows read per page. */
const PAGE = 500;
/** How far past what a run needs the series are expanded, so that they are expanded again only once an hour. */
const SERIES_HORIZON_SECONDS = 3_600;
/** How far back the first run of a process looks from the stored mark (timers due while no process ran): an hour. */
const RESTART_LOOKBACK_SECONDS = 3_600;

/** A timer that is due: the event, and for an instance of a series, the instance. */
interface Due {
  key: TimerKey;
  candidate: TimerCandidate;
  instance?: SeriesInstance | undefined;
}

/** An instance of a series, with its UTC start and end. */
interface Instant {
  candidate: TimerCandidate;
  instance: SeriesInstance;
  start: number;
  end: number;
}

const leadSeconds = (candidate: TimerCandidate) => (candidate.leadMinutes ?? DEFAULT_NOTIFY_BEFORE_START_MINUTES) * 60;

/** Creates the calendar timers' runner. */
export function createEventTimerService({
  db,
  newId,
  clock,
}: Pick<CoreDeps, 'db' | 'newId' | 'clock'>): EventTimerService {
  const record = eventRecorder({ newId, clock });
  /** Where each runner of this process stopped (unix seconds). */
  const marks = new Map<string, number>();
  /** Each runner's series, expanded (./event-timers.ts seriesInstants). */
  const expanded = new Map<string, { fingerprint: string; from: number; until: number; instants: Instant[] }>();

  /** The timers due in `(after, now]` of single events (overrides of instances included). */
  async function dueSingles(after: number, now: number, lookAhead: number, applicationId?: string): Promise<Due[]> {
    const due: Due[] = [];
    for (const [column, until] of [
      ['startTime', now + lookAhead],
      ['endTime', now],
    ] as const) {
      let position: { time: number; id: string } | undefined;
      for (;;) {
        const page = await singlesBetween(db, column, after, until, applicationId, PAGE, position);
        for (const candidate of page) {
          const { row } = candidate;
          const time = row[column] ?? 0;
          if (column === 'startTime' && time - leadSeconds(candidate) > now) continue;
          const kind = column === 'startTime' ? 'starting' : 'ending';
          due.push({ key: { eventId: row.id, kind, occursAt: time }, candidate });
        }
        const last = page.at(-1);
        if (!last || page.length < PAGE) break;
        position = { time: last.row[column] ?? 0, id: last.row.id };
      }
    }
    return due;
  }

  /**
   * The instances of the series from the run's start to `need` (and an hour beyond), as last expanded while the
   * series are unchanged (their fingerprint): a series is expanded once an hour, or when one changes, not at every
   * poll. Times only; whether an instance is due is decided with its calendar's setting as it is now.
   */
  async function seriesInstants(
    scope: string,
    after: number,
    need: number,
    applicationId: string | undefined,
  ): Promise<Instant[]> {
    const fingerprint = await seriesFingerprint(db, after);
    const kept = expanded.get(scope);
    if (kept && kept.fingerprint === fingerprint && kept.from <= after && kept.until >= need) return kept.instants;
    const until = need + SERIES_HORIZON_SECONDS;
    const instants: Instant[] = [];
    let afterId: string | undefined;
    for (;;) {
      const page = await seriesBetween(db, after, until, applicationId, PAGE, afterId);
      for (const candidate of page) {
        const { row } = candidate;
        const { instances } = seriesInstances(
          row.id,
          eventTimeOf(row),
          row.recurrence ?? [],
          { start: after, end: until },
          new Set(),
        );
        for (const instance of instances) instants.push({ candidate, instance, ...utcRange(instance.when) });
      }
      afterId = page.at(-1)?.row.id;
      if (page.length < PAGE) break;
    }
    expanded.set(scope, { fingerprint, from: after, until, instants });
    return instants;
  }

  /** The timers due in `(after, now]` of the instances of series (stored overrides left to {@link dueSingles}). */
  async function dueInstances(
    scope: string,
    after: number,
    now: number,
    lookAhead: number,
    applicationId?: string,
  ): Promise<Due[]> {
    const near = (await seriesInstants(scope, after, now + lookAhead + 1, applicationId)).filter(
      ({ start, end }) => (start > after && start <= now + lookAhead) || (end > after && end <= now),
    );
    if (near.length === 0) return [];
    const settings = await calendarTimerSettings(
      db,
      near.map((one) => one.candidate.row.calendarId),
    );
    const found: Due[] = [];
    for (const { candidate: kept, instance, start, end } of near) {
      const setting = settings.get(kept.row.calendarId);
      if (!setting?.eventTimers) continue;
      const candidate = { ...kept, leadMinutes: setting.leadMinutes };
      const eventId = kept.row.id;
      if (start > after && start - leadSeconds(candidate) <= now)
        found.push({ key: { eventId, kind: 'starting', occursAt: start }, candidate, instance });
      if (end > after && end <= now)
        found.push({ key: { eventId, kind: 'ending', occursAt: end }, candidate, instance });
    }
    // An instance a stored override replaces fires as the override (a single event), not as the series'.
    const overridden = await overriddenStarts(db, [...new Set(found.map((one) => one.key.eventId))]);
    return found.filter((one) => !overridden.get(one.key.eventId)?.has(one.instance!.originalStart));
  }

  /** Records the timers not fired yet, in time order; how many it fired. */
  async function fire(due: Due[], at: number): Promise<number> {
    if (due.length === 0) return 0;
    const fired = await firedAmong(
      db,
      due.map((one) => one.key),
    );
    const fresh = due
      .filter((one) => !fired.has(timerKeyText(one.key)))
      .sort(
        (a, b) => a.key.occursAt - b.key.occursAt || (a.key.kind === b.key.kind ? 0 : a.key.kind === 'ending' ? -1 : 1),
      );
    if (fresh.length === 0) return 0;
    const rows = await eventRows(
      db,
      fresh.map((one) => one.key.eventId),
    );
    return db.write(async (tx) => {
      let count = 0;
      for (const one of fresh) {
        const row = rows.get(one.key.eventId);
        // Deleted, cancelled or moved since its times were read: the next run fires what is due then.
        if (!row || row.status === 'cancelled' || row.startTime !== one.candidate.row.startTime) continue;
        if (row.endTime !== one.candidate.row.endTime) continue;
        const object = toEvent(row, one.instance);
        if (!(await markFired(tx, one.key, at))) continue;
        await record(tx, {
          applicationId: one.candidate.applicationId,
          grantId: one.candidate.row.grantId,
          type: one.key.kind === 'starting' ? 'event.starting' : 'event.ending',
          objectId: object.id ?? one.key.eventId,
          object,
          createdAt: at,
        });
        count++;
      }
      return count;
    });
  }

  return {
    async runDue(nowDate: Date, options: TimerRunOptions = {}): Promise<number> {
      const now = unixSeconds(nowDate);
      const scope = options.applicationId ?? '*';
      const known = marks.get(scope);
      // Where this run starts: the time it is told (a test clock's previous time), else this process's last run,
      // else the last run that fired anything (a restart; at most an hour back), else a minute back.
      let after: number;
      if (options.since !== undefined) after = unixSeconds(options.since);
      else if (known !== undefined) after = known;
      else {
        const stored = await markOf(db, scope);
        after = Math.max(stored ?? 0, now - RESTART_LOOKBACK_SECONDS, 0);
        if (stored === undefined) after = now - FIRST_RUN_LOOKBACK_SECONDS;
      }
      after = Math.max(after, now - MAX_CATCH_UP_SECONDS);
      if (after >= now) return 0;
      const lookAhead =
        Math.max(
          DEFAULT_NOTIFY_BEFORE_START_MINUTES,
          (await largestLeadMinutes(db)) ?? DEFAULT_NOTIFY_BEFORE_START_MINUTES,
        ) * 60;
      const due = [
        ...(await dueSingles(after, now, lookAhead, options.applicationId)),
        ...(await dueInstances(scope, after, now, lookAhead, options.applicationId)),
      ];
      const fired = await fire(due, now);
      // Written only when something fired: an idle service makes no writes (a restart looks back from here).
      if (fired > 0) {
        await advanceMark(db, scope, now);
        // Once an hour of the runner's time, the firings no run looks back to any more are forgotten.
        if (Math.floor(after / 3600) !== Math.floor(now / 3600)) await pruneFirings(db, now - FIRINGS_KEPT_SECONDS);
      }
      marks.set(scope, Math.max(known ?? now, now));
      return fired;
    },
  };
}
