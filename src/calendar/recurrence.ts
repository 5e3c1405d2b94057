/**
 * @module calendar/recurrence
 * Recurring series as the API shows them: instance ids (`<master id>_<YYYYMMDDTHHMMSSZ>`, as Nylas does),
 * and the merge of a series' computed occurrences with its stored overrides (changed or cancelled
 * instances). Pure functions; the rule arithmetic itself is in ical-rules.ts and ical-expand.ts.
 */
import { isAllDay, startTimeZone, utcRange, shiftTo, type EventTime } from './event-time.js';
import {
  EXPANSION_LIMITS,
  expandOccurrences,
  expandPrepared,
  formatUtcStamp,
  parseRecurrence,
  prepareExpansion,
  recurrenceDatesOf,
  seriesEnd,
  type ExpansionBudget,
  type PreparedExpansion,
  type RecurrenceSet,
} from './ical.js';
import { dateToUnix, unixToDate, wallSecondsAt, zonedWallSecondsToUnix } from '../time-zones.js';
import { tables } from '../../storage/index.js';

const INSTANCE_ID = /^(.+)_(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** The id of the instance of series `masterId` that originally starts at `originalStart` (unix seconds). */
export function instanceId(masterId: string, originalStart: number): string {
  return `${masterId}_${formatUtcStamp(originalStart)}`;
}

/** Splits an instance id into its series id and original start, or undefined for any other id. */
export function parseInstanceId(id: string): { masterId: string; originalStart: number } | undefined {
  const match = INSTANCE_ID.exec(id);
  if (!match) return undefined;
  const [, masterId, year, month, day, hour, minute, second] = match;
  const epoch = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second));
  if (!Number.isFinite(epoch)) return undefined;
  return { masterId: masterId!, originalStart: epoch / 1000 };
}

/** The UTC range a stored event row must carry: its own, or for a series master the whole series. */
export function storedRange(
  when: EventTime,
  recurrence: RecurrenceSet | null,
): { rangeStart: number; rangeEnd: number } {
  const range = utcRange(when);
  if (!recurrence) return { rangeStart: range.start, rangeEnd: range.end };
  const end = seriesEnd(when, recurrence);
  const firstRdate = Math.min(range.start, ...recurrence.rdates.map((rdate) => rdate.unix));
  return {
    rangeStart: firstRdate,
    rangeEnd: end === null ? tables.OPEN_ENDED_RANGE_END : Math.min(end, tables.OPEN_ENDED_RANGE_END),
  };
}

/**
 * Prepared series by content (the event time and the recurrence lines, nothing else). Parsing the lines with
 * ical.js costs more than expanding them, and free/busy and availability read the same series again and again.
 * Keyed by content, an entry can never be stale: a changed series has another key, and a deleted one is no
 * longer asked for. Emptied when full, as the year offsets in time-zones.ts are.
 */
const prepared = new Map<string, PreparedExpansion | string>();
/** A few hundred bytes each; enough for the series of a few hundred busy calendars. */
const PREPARED_CACHE_SIZE = 20_000;

/** Every field of an event time, unambiguously (numbers contain no `|`; every string but the last carries its length). */
function timeKey(when: EventTime): string {
  switch (when.kind) {
    case 'time':
      return `time|${when.time}|${when.timezone.length}:${when.timezone}`;
    case 'timespan':
      return `timespan|${when.startTime}|${when.endTime}|${when.startTimezone.length}:${when.startTimezone}|${when.endTimezone}`;
    case 'date':
      return `date|${when.date}`;
    case 'datespan':
      return `datespan|${when.startDate.length}:${when.startDate}|${when.endDate}`;
  }
}

/**
 * The series prepared for expansion, or the error message of its invalid stored lines. `lines` is the list, or
 * its JSON text as stored (read without parsing when the series is already prepared).
 */
function preparedSeries(when: EventTime, lines: readonly string[] | string): PreparedExpansion | string {
  const text = typeof lines === 'string' ? lines : JSON.stringify(lines);
  const key = `${timeKey(when)}\u0000${text}`;
  let entry = prepared.get(key);
  if (entry === undefined) {
    const list = typeof lines === 'string' ? parseStoredLines(lines) : lines;
    const parsed = list
      ? parseRecurrence(list, when)
      : { ok: false as const, error: 'recurrence: not a list of lines.' };
    // A copy: the entry outlives the caller's object.
    entry = parsed.ok ? prepareExpansion({ ...when }, parsed.value) : parsed.error;
    if (prepared.size >= PREPARED_CACHE_SIZE) prepared.clear();
    prepared.set(key, entry);
  }
  return entry;
}

function parseStoredLines(text: string): string[] | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every((line) => typeof line === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Start of the master's own time when its stored rule is invalid and it is in the window, as the only instance. */
function invalidSeriesStart(
  when: EventTime,
  window: { start: number; end: number },
  overridden: ReadonlySet<number>,
): number[] {
  const range = utcRange(when);
  const inWindow = range.start < window.end && (range.end > window.start || range.start >= window.start);
  return inWindow && !overridden.has(range.start) ? [range.start] : [];
}

/**
 * The original starts (unix seconds, ascending) of a series' computed instances overlapping `[start, end)`,
 * leaving out those a stored override replaces: {@link seriesInstances} without building instances, for
 * free/busy and availability, which only need the times. `recurrenceLines` may be the stored JSON text. `budget`
 * is the request's allowance, shared by all the series it expands (ical-expand.ts, requestExpansionBudget).
 */
export function seriesStarts(
  when: EventTime,
  recurrenceLines: readonly string[] | string,
  window: { start: number; end: number },
  overridden: ReadonlySet<number>,
  budget?: ExpansionBudget,
): { starts: number[]; truncated: boolean } {
  const series = preparedSeries(when, recurrenceLines);
  if (typeof series === 'string') return { starts: invalidSeriesStart(when, window, overridden), truncated: false };
  const expansion = expandPrepared(series, window.start, window.end, EXPANSION_LIMITS, budget);
  return {
    starts: overridden.size === 0 ? expansion.starts : expansion.starts.filter((start) => !overridden.has(start)),
    truncated: expansion.truncated,
  };
}

/** One instance of a series in a window. */
export interface SeriesInstance {
  id: string;
  originalStart: number;
  when: EventTime;
}

/**
 * The computed instances of a series overlapping `[start, end)`, leaving out those that a stored override
 * replaces (`overridden`: original starts). Invalid stored rules yield the master's own time only.
 */
export function seriesInstances(
  masterId: string,
  when: EventTime,
  recurrenceLines: readonly string[],
  window: { start: number; end: number },
  overridden: ReadonlySet<number>,
  budget?: ExpansionBudget,
): { instances: SeriesInstance[]; truncated: boolean } {
  const { starts, truncated } = seriesStarts(when, recurrenceLines, window, overridden, budget);
  return {
    instances: starts.map((start) => ({
      id: instanceId(masterId, start),
      originalStart: start,
      when: shiftTo(when, start),
    })),
    truncated,
  };
}

/** Whether `originalStart` is an occurrence of the series (used to resolve an instance id). */
export function isOccurrence(when: EventTime, recurrenceLines: readonly string[], originalStart: number): boolean {
  const series = preparedSeries(when, recurrenceLines);
  if (typeof series === 'string') return false;
  const expansion = expandPrepared(series, originalStart - Math.max(series.duration, 0), originalStart + 1);
  return expansion.starts.includes(originalStart);
}

/** The EXDATE line that removes the instance starting at `start` (a DATE for all-day series). */
export function exdateLine(when: EventTime, start: number): string {
  return isAllDay(when)
    ? `EXDATE;VALUE=DATE:${unixToDate(start).replaceAll('-', '')}`
    : `EXDATE:${formatUtcStamp(start)}`;
}

const DAY_SECONDS = 86_400;
/** Last second of year 9999: an end for windows that have none. */
const NO_END = 253_402_300_799;
/** Occurrences of the old series checked against the moved one, from each of the two starts. */
const MOVE_SAMPLE = 64;

/** Where a series' occurrences are computed: its start as wall-clock seconds (all-day series: UTC dates). */
interface Frame {
  allDay: boolean;
  zone: string;
  start: number;
  startWall: number;
  timeOfDay: number;
}

function frameOf(when: EventTime): Frame {
  const allDay = isAllDay(when);
  const zone = startTimeZone(when);
  const start = utcRange(when).start;
  const startWall = allDay ? start : wallSecondsAt(zone, start);
  return { allDay, zone, start, startWall, timeOfDay: startWall - Math.floor(startWall / DAY_SECONDS) * DAY_SECONDS };
}

const wallIn = (frame: Frame, unix: number) => (frame.allDay ? unix : wallSecondsAt(frame.zone, unix));
const unixIn = (frame: Frame, wall: number) =>
  frame.allDay ? Math.floor(wall / DAY_SECONDS) * DAY_SECONDS : zonedWallSecondsToUnix(frame.zone, wall);
const dateIn = (frame: Frame, unix: number) => unixToDate(Math.floor(wallIn(frame, unix) / DAY_SECONDS) * DAY_SECONDS);

/** What moving a series does to the instants that name its occurrences. */
export interface SeriesMove {
  /** The recurrence lines with their EXDATE values moved; lines with nothing to move are kept as written. */
  lines: string[];
  /** Where the occurrence that started at `originalStart` starts in the moved series (an override's new key). */
  start(originalStart: number): number;
}

/**
 * Moves what names occurrences of a series (EXDATE values, the original starts of overrides) along with a change
 * of the series' start from `from` to `to`, so that an excluded or changed occurrence stays excluded or changed
 * instead of reappearing while its exclusion names a time the series no longer has.
 *
 * Occurrences follow the series in its wall-clock time (its time zone: a 09:00 meeting moved to 11:00 is moved
 * to 11:00 on both sides of a DST change), in the first of these ways under which the
 * old series' occurrences (a sample from each start) land on occurrences of the moved one:
 * 1. same date, the series' new time of day: a new time for the meeting (09:00 → 11:00), a start moved by whole
 *    periods or along its BYDAY days (a daily series started a day later keeps its Thursday exclusion on
 *    Thursday; a weekly BYDAY=MO,WE series started on Wednesday instead of Monday keeps its days);
 * 2. the whole shift of the start in wall-clock time: a weekly series moved from Saturdays to Sundays moves
 *    each exclusion a day later.
 * When neither fits every occurrence (the moved rule has other days), each value takes the first of the two
 * that lands on an occurrence, else the plain shift. RDATEs name absolute times and do not move, nor do the
 * exclusions and overrides of their instances. The rule lines are not changed.
 */
export function moveSeries(from: EventTime, to: EventTime, lines: readonly string[]): SeriesMove {
  const source = frameOf(from);
  const target = frameOf(to);
  if (source.allDay === target.allDay && source.zone === target.zone && source.start === target.start)
    return { lines: [...lines], start: (originalStart) => originalStart };

  const ruleLines = lines.filter((line) => /^RRULE[;:]/i.test(line.trim()));
  const rdates = new Set<number>();
  for (const line of lines) {
    const parsed = recurrenceDatesOf(line, from);
    if (parsed?.name === 'RDATE') for (const date of parsed.dates) rdates.add(date.unix);
  }
  const occursInMoved = (start: number) => ruleLines.length > 0 && isOccurrence(to, ruleLines, start);
  const sample: number[] = [];
  const oldRules = ruleLines.length > 0 ? parseRecurrence(ruleLines, from) : undefined;
  if (oldRules?.ok) {
    const limits = { maxOccurrences: MOVE_SAMPLE, maxIterations: EXPANSION_LIMITS.maxIterations };
    sample.push(...expandOccurrences(from, oldRules.value, source.start, NO_END, limits).starts);
    if (target.start > source.start)
      sample.push(...expandOccurrences(from, oldRules.value, target.start - DAY_SECONDS, NO_END, limits).starts);
  }

  const modes = [
    (wall: number) => unixIn(target, Math.floor(wall / DAY_SECONDS) * DAY_SECONDS + target.timeOfDay),
    (wall: number) => unixIn(target, wall + target.startWall - source.startWall),
  ];
  const shift = modes[1]!;
  const fits = (mode: (wall: number) => number) => {
    let matched = 0;
    for (const start of sample) {
      const moved = mode(wallIn(source, start));
      // Occurrences before the new start are gone from the series whatever happens to them.
      if (moved < target.start) continue;
      if (!occursInMoved(moved)) return false;
      matched++;
    }
    return matched > 0;
  };
  // No rule (an RDATE-only series): DTSTART is the only occurrence that moves, by the shift.
  const chosen = ruleLines.length === 0 ? shift : modes.find(fits);
  const moveWall = (wall: number) =>
    chosen ? chosen(wall) : (modes.map((mode) => mode(wall)).find(occursInMoved) ?? shift(wall));
  const start = (originalStart: number) =>
    rdates.has(originalStart) ? originalStart : moveWall(wallIn(source, originalStart));

  const movedLines = lines.map((line) => {
    const parsed = recurrenceDatesOf(line, from);
    if (parsed?.name !== 'EXDATE' || parsed.dates.length === 0) return line;
    // A line holds one kind of value: DATEs (all-day series, or whole days of a timed one) or date-times.
    const dates = parsed.dates.every((date) => date.date !== undefined);
    if (dates || target.allDay) {
      const moved = parsed.dates.map((date) => {
        // A DATE of a timed series names that day's occurrence.
        const wall =
          date.date !== undefined && !source.allDay
            ? dateToUnix(date.date) + source.timeOfDay
            : wallIn(source, date.unix);
        return dateIn(target, date.date === undefined && rdates.has(date.unix) ? date.unix : moveWall(wall));
      });
      if (dates && moved.every((date, index) => date === parsed.dates[index]!.date)) return line;
      return `EXDATE;VALUE=DATE:${moved.map((date) => date.replaceAll('-', '')).join(',')}`;
    }
    const moved = parsed.dates.map((date) => start(date.unix));
    if (moved.every((unix, index) => unix === parsed.dates[index]!.unix)) return line;
    return `EXDATE:${moved.map(formatUtcStamp).join(',')}`;
  });
  return { lines: movedLines, start };
}
