/**
 * @module calendar/recurrence
 * Recurring series as the API shows them: instance ids (`<master id>_<YYYYMMDDTHHMMSSZ>`, as Nylas does),
 * and the merge of a series' computed occurrences with its stored overrides (changed or cancelled
 * instances). Pure functions; the rule arithmetic itself is in ical.ts.
 */
import { utcRange, shiftTo, type EventTime } from './event-time.js';
import { expandOccurrences, formatUtcStamp, parseRecurrence, seriesEnd, type RecurrenceSet } from './ical.js';
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
  const parsed = parseRecurrence(recurrenceLines, when);
  if (!parsed.ok) {
    const range = utcRange(when);
    const inWindow = range.start < window.end && (range.end > window.start || range.start >= window.start);
    return { instances: inWindow && !overridden.has(range.start) ? [{ id: instanceId(masterId, range.start), originalStart: range.start, when }] : [], truncated: false };
  }
  const expansion = expandOccurrences(when, parsed.value, window.start, window.end);
  return {
    instances: expansion.starts
      .filter((start) => !overridden.has(start))
      .map((start) => ({ id: instanceId(masterId, start), originalStart: start, when: shiftTo(when, start) })),
    truncated: expansion.truncated,
  };
}

/** Whether `originalStart` is an occurrence of the series (used to resolve an instance id). */
export function isOccurrence(when: EventTime, recurrenceLines: readonly string[], originalStart: number): boolean {
  const parsed = parseRecurrence(recurrenceLines, when);
  if (!parsed.ok) return false;
  const duration = utcRange(when).end - utcRange(when).start;
  const expansion = expandOccurrences(when, parsed.value, originalStart - Math.max(duration, 0), originalStart + 1);
  return expansion.starts.includes(originalStart);
}
