/**
 * @module calendar/ical-expand
 * Recurrence expansion: the occurrences of a series in a window, with hard caps ({@link EXPANSION_LIMITS}, a
 * per-request budget and the series' horizon) so hostile rules cannot hang the process. DAILY and WEEKLY rules
 * are computed by day arithmetic; every other rule steps through the ical.js iterator.
 */
import ICAL from 'ical.js';
import { isAllDay, startTimeZone, utcRange, type EventTime } from './event-time.js';
import {
  addDays,
  dateToUnix,
  formatDate,
  wallSecondsAt,
  wallTimeAt,
  wallTimeToEpochAsUtc,
  zonedWallSecondsToUnix,
  zonedWallTimeToEpoch,
} from '../time-zones.js';
import { DAY_SECONDS, WEEKDAY_INDEX, weekdayOfDay, type RecurrenceSet } from './ical-rules.js';
import { dateValue, floatingTime, wallOf, wallSecondsOf, type ICalRecur, type ICalTime } from './ical-values.js';

/**
 * Caps that make any expansion finish: occurrences produced, and rule steps taken, per series and window. On top,
 * no occurrence of a series is computed more than {@link SERIES_HORIZON_YEARS} after its start.
 */
export const EXPANSION_LIMITS = { maxOccurrences: 2_000, maxIterations: 20_000 } as const;

/**
 * How far past its first start a series is expanded. A COUNT or UNTIL beyond it (COUNT=2000000000,
 * UNTIL=99991231) is accepted and stored as given; the series simply has no occurrences after the horizon.
 */
export const SERIES_HORIZON_YEARS = 100;

/**
 * What one request may spend expanding all the series it reads (a list with expand_recurring, free/busy,
 * availability): shared by its series, so ten thousand series cannot each spend the per-series caps.
 */
export const REQUEST_EXPANSION_LIMITS = { maxOccurrences: 50_000, maxIterations: 200_000 } as const;

/** What is left of a request's expansion allowance; {@link expandPrepared} takes from it. */
export interface ExpansionBudget {
  occurrences: number;
  iterations: number;
}

/** A fresh allowance for one request. */
export function requestExpansionBudget(): ExpansionBudget {
  return { occurrences: REQUEST_EXPANSION_LIMITS.maxOccurrences, iterations: REQUEST_EXPANSION_LIMITS.maxIterations };
}

/** How far one expansion may go: occurrences returned, and steps of the rule iterators. */
export interface ExpansionLimits {
  maxOccurrences: number;
  maxIterations: number;
}

/** The rule with UNTIL moved into the event's wall-clock time, as the iterator runs in floating time. */
function localRule(rule: ICalRecur, when: EventTime): ICalRecur {
  const copy = rule.clone();
  const until = copy.until;
  if (!until) return copy;
  if (isAllDay(when)) {
    // All-day series run on dates: a date-time UNTIL counts by its (UTC) date.
    if (!until.isDate) copy.until = dateValue(formatDate(until));
    return copy;
  }
  const zone = startTimeZone(when);
  if (until.isDate) {
    copy.until = floatingTime({
      year: until.year,
      month: until.month,
      day: until.day,
      hour: 23,
      minute: 59,
      second: 59,
    });
  } else if (until.zone === ICAL.Timezone.utcTimezone) {
    copy.until = floatingTime(wallTimeAt(zone, wallTimeToEpochAsUtc(wallOf(until))));
  } else {
    copy.until = floatingTime(wallOf(until));
  }
  return copy;
}

function startValue(when: EventTime): ICalTime {
  if (when.kind === 'date') return dateValue(when.date);
  if (when.kind === 'datespan') return dateValue(when.startDate);
  const range = utcRange(when);
  return floatingTime(wallTimeAt(startTimeZone(when), range.start * 1000));
}

function occurrenceUnix(time: ICalTime, when: EventTime): number {
  if (time.isDate) return dateToUnix(formatDate(time));
  return Math.floor(zonedWallTimeToEpoch(startTimeZone(when), wallOf(time)) / 1000);
}

/** Whether a (shifted) series start satisfies the day filters of a rule; used after fast-forwarding. */
function startMatchesFilters(rule: ICalRecur, start: ICalTime): boolean {
  const parts = rule.parts as Record<string, (number | string)[] | undefined>;
  if (parts.BYMONTH && !parts.BYMONTH.includes(start.month)) return false;
  if (parts.BYMONTHDAY) {
    const days = ICAL.Time.daysInMonth(start.month, start.year);
    if (
      !parts.BYMONTHDAY.some((day) =>
        Number(day) > 0 ? Number(day) === start.day : days + Number(day) + 1 === start.day,
      )
    )
      return false;
  }
  if (parts.BYDAY) {
    const weekday = new Date(Date.UTC(start.year, start.month - 1, start.day)).getUTCDay();
    if (!parts.BYDAY.some((day) => WEEKDAY_INDEX[String(day).slice(-2)] === weekday)) return false;
  }
  return true;
}

/**
 * Moves the start of a DAILY or WEEKLY rule without COUNT forward by whole periods, close to `notBefore`
 * (unix seconds), so a long-running series does not have to be stepped through from its first day.
 * Returns the new start and whether it must be checked against the filters.
 */
function fastForward(rule: ICalRecur, start: ICalTime, notBefore: number, when: EventTime): ICalTime {
  const parts = rule.parts as Record<string, unknown[] | undefined>;
  const freq = rule.freq;
  if (rule.count || (freq !== 'DAILY' && freq !== 'WEEKLY')) return start;
  if (parts.BYSETPOS || parts.BYHOUR || parts.BYMINUTE || parts.BYSECOND || parts.BYYEARDAY || parts.BYWEEKNO)
    return start;
  const periodDays = (freq === 'DAILY' ? 1 : 7) * rule.interval;
  const startUnix = occurrenceUnix(start, when);
  const daysAhead = Math.floor((notBefore - startUnix) / 86_400) - 2;
  const periods = Math.floor(daysAhead / periodDays);
  if (periods <= 1) return start;
  const moved = start.clone();
  moved.adjust(periods * periodDays, 0, 0, 0);
  return moved;
}

/** Result of {@link expandOccurrences}. */
export interface Expansion {
  /** Start of each occurrence overlapping the window, unix seconds, ascending (all-day: 00:00 UTC). */
  starts: number[];
  /** True when a cap stopped the expansion before the window's end (the series' horizon is not a cap). */
  truncated: boolean;
  /** Steps of the rule iterators taken (day arithmetic takes none). */
  iterations?: number;
}

/**
 * A DAILY or WEEKLY rule as plain day arithmetic: its days are `base + period·m + offsets[i]` (m ≥ 0, each
 * `>= firstDay`), at `timeOfDay` wall-clock seconds. Exactly what {@link expandIterator} yields for such rules
 * (checked against it by a property test), without stepping through the series from its first day.
 */
interface ArithmeticRule {
  kind: 'arithmetic';
  /** Day number (wall date) of DTSTART. */
  firstDay: number;
  timeOfDay: number;
  base: number;
  period: number;
  offsets: number[];
  /** Days of the first period before DTSTART (not occurrences; they shift COUNT indices). */
  skipped: number;
  /**
   * The rule's days do not contain DTSTART (BYDAY leaves out its weekday). DTSTART is an occurrence all the same
   * and takes the first place of COUNT ({@link expandWith} adds it), so the rule's own days count from the second.
   */
  extraStart: boolean;
  count: number | undefined;
  /** Last allowed occurrence, as wall-clock seconds since 1970 (UNTIL in the event's wall time). */
  untilWall: number | undefined;
}

/** A rule the ical.js iterator expands (anything {@link ArithmeticRule} does not cover). */
interface IteratorRule {
  kind: 'iterator';
  /** The rule with UNTIL in the event's wall time; never mutated. */
  local: ICalRecur;
}

/**
 * A series' recurrence prepared once for any number of windows ({@link expandPrepared}): the derived rule
 * data and EXDATE/RDATE lookups. Immutable, so callers may cache it by the series' content (time + lines).
 */
export interface PreparedExpansion {
  readonly when: EventTime;
  readonly rangeStart: number;
  /** No occurrence starts at or after this instant ({@link SERIES_HORIZON_YEARS} after the start). */
  readonly horizon: number;
  readonly duration: number;
  readonly zone: string;
  readonly allDay: boolean;
  readonly excluded: ReadonlySet<number>;
  readonly excludedDates: ReadonlySet<string>;
  readonly rdates: readonly number[];
  readonly rules: readonly (ArithmeticRule | IteratorRule)[];
}

/** ICAL.Time weekday numbers (SU = 1 … SA = 7) → 0 = Sunday … 6 = Saturday. */
const ICAL_WEEKDAY_OFFSET = 1;
const PLAIN_WEEKDAY = /^(MO|TU|WE|TH|FR|SA|SU)$/;

/** The arithmetic form of a rule, or undefined when only the iterator can expand it. */
function arithmeticRule(
  rule: ICalRecur,
  local: ICalRecur,
  firstDay: number,
  timeOfDay: number,
): ArithmeticRule | undefined {
  const freq = rule.freq;
  if (freq !== 'DAILY' && freq !== 'WEEKLY') return undefined;
  const parts = rule.parts as Record<string, (number | string)[] | undefined>;
  for (const [name, values] of Object.entries(parts))
    if (values && values.length > 0 && name !== 'BYDAY') return undefined;
  const byDay = parts.BYDAY && parts.BYDAY.length > 0 ? parts.BYDAY.map(String) : undefined;
  if (byDay && !byDay.every((day) => PLAIN_WEEKDAY.test(day))) return undefined;
  const weekdays = byDay ? new Set(byDay.map((day) => WEEKDAY_INDEX[day]!)) : undefined;
  const interval = rule.interval;
  if (!Number.isInteger(interval) || interval < 1) return undefined;
  let untilWall: number | undefined;
  if (local.until) {
    untilWall = wallSecondsOf(local.until);
    // An UNTIL before DTSTART: the iterator yields nothing; leave that corner to it.
    if (untilWall < firstDay * DAY_SECONDS + timeOfDay) return undefined;
  }
  const count = rule.count ? rule.count : undefined;
  const firstWeekday = weekdayOfDay(firstDay);
  if (freq === 'DAILY') {
    if (!weekdays)
      return {
        kind: 'arithmetic',
        firstDay,
        timeOfDay,
        base: firstDay,
        period: interval,
        offsets: [0],
        skipped: 0,
        extraStart: false,
        count,
        untilWall,
      };
    // The weekday pattern of every `interval` days repeats after 7·interval days (interval if it is a multiple of 7).
    const period = interval % 7 === 0 ? interval : interval * 7;
    const offsets: number[] = [];
    // No offsets (BYDAY misses DTSTART's weekday and INTERVAL is a multiple of 7; parseRecurrence refuses such
    // rules): DTSTART alone, where the ical.js iterator would search forever.
    for (let offset = 0; offset < period; offset += interval)
      if (weekdays.has(weekdayOfDay(firstDay + offset))) offsets.push(offset);
    return {
      kind: 'arithmetic',
      firstDay,
      timeOfDay,
      base: firstDay,
      period,
      offsets,
      skipped: 0,
      extraStart: !weekdays.has(firstWeekday),
      count,
      untilWall,
    };
  }
  const weekStart = (typeof rule.wkst === 'number' ? rule.wkst : 2) - ICAL_WEEKDAY_OFFSET;
  const base = firstDay - ((firstWeekday - weekStart + 7) % 7);
  const offsets = [...(weekdays ?? new Set([firstWeekday]))]
    .map((weekday) => (weekday - weekStart + 7) % 7)
    .sort((a, b) => a - b);
  const skipped = offsets.filter((offset) => base + offset < firstDay).length;
  return {
    kind: 'arithmetic',
    firstDay,
    timeOfDay,
    base,
    period: 7 * interval,
    offsets,
    skipped,
    extraStart: !offsets.includes(firstDay - base),
    count,
    untilWall,
  };
}

/** The instant {@link SERIES_HORIZON_YEARS} years after `start` (unix seconds), in UTC calendar years. */
function horizonOf(start: number): number {
  const date = new Date(start * 1000);
  date.setUTCFullYear(date.getUTCFullYear() + SERIES_HORIZON_YEARS);
  return Math.floor(date.getTime() / 1000);
}

/** Prepares a series' recurrence for {@link expandPrepared}. */
export function prepareExpansion(when: EventTime, recurrence: RecurrenceSet): PreparedExpansion {
  const range = utcRange(when);
  const allDay = isAllDay(when);
  const zone = startTimeZone(when);
  const firstWall = allDay ? range.start : wallSecondsAt(zone, range.start);
  const firstDay = Math.floor(firstWall / DAY_SECONDS);
  const timeOfDay = firstWall - firstDay * DAY_SECONDS;
  return {
    when,
    rangeStart: range.start,
    horizon: horizonOf(range.start),
    duration: range.end - range.start,
    zone,
    allDay,
    excluded: new Set(
      recurrence.exdates.filter((exdate) => exdate.date === undefined || allDay).map((exdate) => exdate.unix),
    ),
    excludedDates: new Set(
      recurrence.exdates.filter((exdate) => exdate.date !== undefined && !allDay).map((exdate) => exdate.date!),
    ),
    rdates: recurrence.rdates.map((rdate) => rdate.unix),
    rules: recurrence.rules.map((rule) => {
      const local = localRule(rule, when);
      return arithmeticRule(rule, local, firstDay, timeOfDay) ?? { kind: 'iterator', local };
    }),
  };
}

/**
 * The occurrences found for one window. A class rather than closures: expansion runs once per series per
 * request, and each closure created costs (tsx keeps function names by defining a property on each).
 */
class Occurrences {
  readonly found = new Set<number>();
  constructor(
    readonly prepared: PreparedExpansion,
    readonly windowStart: number,
    readonly windowEnd: number,
    readonly maxOccurrences: number,
  ) {}

  overlaps(start: number): boolean {
    const { duration } = this.prepared;
    return (
      start < this.windowEnd && (start + duration > this.windowStart || (duration === 0 && start >= this.windowStart))
    );
  }

  isExcluded(start: number): boolean {
    const { excluded, excludedDates, zone } = this.prepared;
    return (
      excluded.has(start) || (excludedDates.size > 0 && excludedDates.has(formatDate(wallTimeAt(zone, start * 1000))))
    );
  }

  /** Keeps `start` when it overlaps the window and is not excluded; true once the cap is reached. */
  consider(start: number): boolean {
    if (this.overlaps(start) && !this.isExcluded(start)) {
      this.found.add(start);
      if (this.found.size >= this.maxOccurrences) return true;
    }
    return false;
  }
}

/** Offers each occurrence of an arithmetic rule up to the window's end; true when the cap was reached. */
function expandArithmetic(
  occurrences: Occurrences,
  rule: ArithmeticRule,
  firstCandidateDay: number,
  lastCandidateDay: number,
): boolean {
  const { allDay, zone } = occurrences.prepared;
  const { windowEnd } = occurrences;
  const perPeriod = rule.offsets.length;
  if (perPeriod === 0) return false;
  // COUNT index of the rule's n-th day in the series (DTSTART, when it is not one of them, is index 0).
  const shift = rule.extraStart ? 1 - rule.skipped : -rule.skipped;
  for (let period = Math.max(0, Math.floor((firstCandidateDay - rule.base) / rule.period)); ; period++) {
    const periodStart = rule.base + period * rule.period;
    if (periodStart > lastCandidateDay) return false;
    for (let position = 0; position < perPeriod; position++) {
      const day = periodStart + rule.offsets[position]!;
      if (day < rule.firstDay) continue;
      if (rule.count !== undefined && period * perPeriod + position + shift >= rule.count) return false;
      const wall = day * DAY_SECONDS + rule.timeOfDay;
      if (rule.untilWall !== undefined && wall > rule.untilWall) return false;
      const start = allDay ? day * DAY_SECONDS : zonedWallSecondsToUnix(zone, wall);
      if (start >= windowEnd) return false;
      if (occurrences.consider(start)) return true;
    }
  }
}

/**
 * The same through the ical.js iterator; true when a cap (occurrences or iterations) was reached. ical.js yields
 * DTSTART first only when the rule itself produces it (DAILY with BYDAY excepted; kewisch/ical.js#294) and counts
 * only what it yields; here, as RFC 5545 wants, an unproduced DTSTART still takes the first place of COUNT
 * ({@link expandWith} adds it), so the rule's own occurrences stop one earlier.
 */
function expandIterator(
  occurrences: Occurrences,
  rule: ICalRecur,
  maxIterations: number,
  iterations: { count: number },
): boolean {
  const { when, duration } = occurrences.prepared;
  const dtstart = startValue(when);
  const shifted = fastForward(rule, dtstart, occurrences.windowStart - duration, when);
  const checkFirst = shifted !== dtstart;
  let iterator;
  try {
    iterator = rule.iterator(shifted);
  } catch {
    return false;
  }
  // Rules with COUNT are never fast-forwarded, so their first value tells whether the rule produces DTSTART.
  const count = rule.count ? rule.count : undefined;
  let produced = 0;
  let startExtra: boolean | undefined;
  let first = true;
  for (;;) {
    if (++iterations.count > maxIterations) return true;
    let next: ICalTime | null;
    try {
      next = iterator.next();
    } catch {
      return false;
    }
    if (!next) return false;
    if (first && checkFirst && next.compare(shifted) === 0 && !startMatchesFilters(rule, shifted)) {
      first = false;
      continue;
    }
    first = false;
    // Nothing precedes DTSTART in a recurrence set.
    if (next.compare(dtstart) < 0) continue;
    if (count !== undefined) {
      startExtra ??= next.compare(dtstart) !== 0;
      if (startExtra && produced >= count - 1) return false;
      produced++;
    }
    const start = occurrenceUnix(next, when);
    if (start >= occurrences.windowEnd) return false;
    if (occurrences.consider(start)) return true;
  }
}

function expandWith(
  prepared: PreparedExpansion,
  windowStart: number,
  requestedEnd: number,
  limits: ExpansionLimits,
): Expansion {
  // Nothing is computed past the series' horizon, however far COUNT, UNTIL or the window reach.
  const windowEnd = Math.min(requestedEnd, prepared.horizon);
  const occurrences = new Occurrences(prepared, windowStart, windowEnd, limits.maxOccurrences);
  const { found } = occurrences;
  let truncated = false;
  const iterations = { count: 0 };
  // Wall clocks are within a day of UTC, so occurrences in the window fall on these wall days.
  const firstCandidateDay = Math.floor((windowStart - prepared.duration) / DAY_SECONDS) - 2;
  const lastCandidateDay = Math.floor(windowEnd / DAY_SECONDS) + 2;
  for (const rule of prepared.rules) {
    const capped =
      rule.kind === 'arithmetic'
        ? expandArithmetic(occurrences, rule, firstCandidateDay, lastCandidateDay)
        : expandIterator(occurrences, rule.local, limits.maxIterations, iterations);
    if (capped) {
      truncated = true;
      break;
    }
  }
  for (const rdate of prepared.rdates) {
    if (found.size >= limits.maxOccurrences) {
      truncated = true;
      break;
    }
    if (occurrences.overlaps(rdate) && !occurrences.isExcluded(rdate)) found.add(rdate);
  }
  // RFC 5545 §3.8.5.3: "The "DTSTART" property defines the first instance in the recurrence set", and §3.3.10:
  // "The "DTSTART" property value always counts as the first occurrence" of COUNT. So the series' own start is
  // an instance even when its rule would not produce it (DTSTART on a Monday, FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4 is
  // Mon, Tue, Thu, Tue), for every rule and for RDATE-only series; the rules above count it (extraStart, and
  // the first value of the iterator). Only an EXDATE removes it (it still counts). Every reader (listing with
  // expand_recurring, instance ids, free/busy, availability) goes through here.
  if (occurrences.overlaps(prepared.rangeStart) && !occurrences.isExcluded(prepared.rangeStart))
    found.add(prepared.rangeStart);
  return { starts: found.size === 0 ? [] : [...found].sort((a, b) => a - b), truncated, iterations: iterations.count };
}

/**
 * The occurrences of a prepared series that overlap `[windowStart, windowEnd)` (unix seconds), with EXDATEs
 * removed and RDATEs added. Rules run in the event's wall-clock time, so a 09:00 meeting stays at 09:00 across a
 * DST change. DAILY and WEEKLY rules without other BY parts are computed by day arithmetic, starting at the
 * window; other rules step through the ical.js iterator. Bounded by {@link EXPANSION_LIMITS}, by the series'
 * horizon ({@link SERIES_HORIZON_YEARS}) and, when given, by what is left of the request's `budget` (which is
 * reduced by what this expansion spent): an unbounded rule over a huge window is cut off, not hung.
 */
export function expandPrepared(
  prepared: PreparedExpansion,
  windowStart: number,
  windowEnd: number,
  limits: ExpansionLimits = EXPANSION_LIMITS,
  budget?: ExpansionBudget,
): Expansion {
  if (!budget) return expandWith(prepared, windowStart, windowEnd, limits);
  if (budget.occurrences <= 0 || budget.iterations <= 0) return { starts: [], truncated: true };
  const capped = {
    maxOccurrences: Math.min(limits.maxOccurrences, budget.occurrences),
    maxIterations: Math.min(limits.maxIterations, budget.iterations),
  };
  const expansion = expandWith(prepared, windowStart, windowEnd, capped);
  budget.occurrences -= expansion.starts.length;
  budget.iterations -= expansion.iterations ?? 0;
  return expansion;
}

/** {@link expandPrepared} for a series not prepared beforehand. */
export function expandOccurrences(
  when: EventTime,
  recurrence: RecurrenceSet,
  windowStart: number,
  windowEnd: number,
  limits: ExpansionLimits = EXPANSION_LIMITS,
): Expansion {
  return expandPrepared(prepareExpansion(when, recurrence), windowStart, windowEnd, limits);
}

/**
 * The same expansion with every rule stepped through the ical.js iterator: the reference the day arithmetic
 * is tested against.
 */
export function expandOccurrencesByIterator(
  when: EventTime,
  recurrence: RecurrenceSet,
  windowStart: number,
  windowEnd: number,
  limits: ExpansionLimits = EXPANSION_LIMITS,
): Expansion {
  const prepared = prepareExpansion(when, recurrence);
  const rules = prepared.rules.map((rule, index): IteratorRule =>
    rule.kind === 'iterator' ? rule : { kind: 'iterator', local: localRule(recurrence.rules[index]!, when) },
  );
  return expandWith({ ...prepared, rules }, windowStart, windowEnd, limits);
}

/**
 * The UTC end of the last occurrence of a series (unix seconds), or null when it never ends. An upper
 * bound: UNTIL is taken as the last start; a COUNT beyond the expansion cap counts as never ending.
 */
export function seriesEnd(when: EventTime, recurrence: RecurrenceSet): number | null {
  const range = utcRange(when);
  const duration = range.end - range.start;
  let end = range.end;
  for (const rule of recurrence.rules) {
    if (rule.until) {
      const until = rule.until;
      const unix = until.isDate
        ? dateToUnix(addDays(formatDate(until), 1))
        : until.zone === ICAL.Timezone.utcTimezone
          ? wallTimeToEpochAsUtc(wallOf(until)) / 1000
          : occurrenceUnix(until, when) + 86_400;
      end = Math.max(end, unix + duration);
    } else if (rule.count) {
      // Counting a long series costs as much as expanding it; past the cap it is treated as never ending.
      if (rule.count > EXPANSION_LIMITS.maxOccurrences) return null;
      const expansion = expandOccurrences(
        when,
        { rules: [rule], rdates: [], exdates: [] },
        range.start,
        Number.MAX_SAFE_INTEGER,
        {
          maxOccurrences: EXPANSION_LIMITS.maxOccurrences,
          maxIterations: EXPANSION_LIMITS.maxIterations,
        },
      );
      if (expansion.truncated) return null;
      const last = expansion.starts[expansion.starts.length - 1];
      if (last !== undefined) end = Math.max(end, last + duration);
    } else {
      return null;
    }
  }
  for (const rdate of recurrence.rdates) end = Math.max(end, rdate.unix + duration);
  return end;
}
