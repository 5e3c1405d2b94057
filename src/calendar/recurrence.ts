/**
 * @module calendar/recurrence
 * Recurring series as the API shows them: instance ids (`<master id>_<YYYYMMDDTHHMMSSZ>`, as Nylas does),
 * and the merge of a series' computed occurrences with its stored overrides (changed or cancelled
 * instances). Pure functions; the rule arithmetic itself is in ical.ts.
 */
import { utcRange, shiftTo, type EventTime } from './event-time.js';
import { expandPrepared, formatUtcStamp, parseRecurrence, prepareExpansion, seriesEnd, type PreparedExpansion, type RecurrenceSet } from './ical.js';
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
export function storedRange(when: EventTime, recurrence: RecurrenceSet | null): { rangeStart: number; rangeEnd: number } {
  const range = utcRange(when);
  if (!recurrence) return { rangeStart: range.start, rangeEnd: range.end };
  const end = seriesEnd(when, recurrence);
  const firstRdate = Math.min(range.start, ...recurrence.rdates.map((rdate) => rdate.unix));
  return { rangeStart: firstRdate, rangeEnd: end === null ? tables.OPEN_ENDED_RANGE_END : Math.min(end, tables.OPEN_ENDED_RANGE_END) };
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
    const parsed = list ? parseRecurrence(list, when) : { ok: false as const, error: 'recurrence: not a list of lines.' };
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
function invalidSeriesStart(when: EventTime, window: { start: number; end: number }, overridden: ReadonlySet<number>): number[] {
  const range = utcRange(when);
  const inWindow = range.start < window.end && (range.end > window.start || range.start >= window.start);
  return inWindow && !overridden.has(range.start) ? [range.start] : [];
}

/**
 * The original starts (unix seconds, ascending) of a series' computed instances overlapping `[start, end)`,
 * leaving out those a stored override replaces: {@link seriesInstances} without building instances, for
 * free/busy and availability, which only need the times. `recurrenceLines` may be the stored JSON text.
 */
export function seriesStarts(
  when: EventTime,
  recurrenceLines: readonly string[] | string,
  window: { start: number; end: number },
  overridden: ReadonlySet<number>,
): { starts: number[]; truncated: boolean } {
  const series = preparedSeries(when, recurrenceLines);
  if (typeof series === 'string') return { starts: invalidSeriesStart(when, window, overridden), truncated: false };
  const expansion = expandPrepared(series, window.start, window.end);
  return { starts: overridden.size === 0 ? expansion.starts : expansion.starts.filter((start) => !overridden.has(start)), truncated: expansion.truncated };
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
): { instances: SeriesInstance[]; truncated: boolean } {
  const { starts, truncated } = seriesStarts(when, recurrenceLines, window, overridden);
  return { instances: starts.map((start) => ({ id: instanceId(masterId, start), originalStart: start, when: shiftTo(when, start) })), truncated };
}

/** Whether `originalStart` is an occurrence of the series (used to resolve an instance id). */
export function isOccurrence(when: EventTime, recurrenceLines: readonly string[], originalStart: number): boolean {
  const series = preparedSeries(when, recurrenceLines);
  if (typeof series === 'string') return false;
  const expansion = expandPrepared(series, originalStart - Math.max(series.duration, 0), originalStart + 1);
  return expansion.starts.includes(originalStart);
}
