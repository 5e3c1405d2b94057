/**
 * @module calendar/ical-rules
 * Recurrence rules: checking RRULE values beyond what ical.js checks (so that no rule can make its iterator spin
 * forever) and reading a series' RRULE / EXDATE / RDATE lines into a {@link RecurrenceSet}.
 */
import ICAL from 'ical.js';
import { isAllDay, startTimeZone, utcRange, type EventTime } from './event-time.js';
import {
  dateToUnix,
  formatDate,
  ianaFromTzid,
  wallSecondsAt,
  wallTimeToEpochAsUtc,
  zonedWallTimeToEpoch,
} from '../time-zones.js';
import { ICAL_LIMITS, wallOf, type ICalProperty, type ICalRecur, type ICalTime, type Result } from './ical-values.js';

/** RRULE weekday names → 0 = Sunday … 6 = Saturday. */
export const WEEKDAY_INDEX: Record<string, number> = { SU: 0, MO: 1, TU: 2, WE: 3, TH: 4, FR: 5, SA: 6 };

/** Seconds in a day of wall-clock arithmetic (days since 1970 as numbers). */
export const DAY_SECONDS = 86_400;

/** Weekday of a day number (days since 1970-01-01, a Thursday): 0 = Sunday … 6 = Saturday. */
export const weekdayOfDay = (day: number) => (((day + 4) % 7) + 7) % 7;

const FREQUENCIES = new Set(['HOURLY', 'DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']);
const RANGES: Record<string, [number, number, boolean]> = {
  // part: [min, max, negative allowed]
  BYSECOND: [0, 60, false],
  BYMINUTE: [0, 59, false],
  BYHOUR: [0, 23, false],
  BYMONTHDAY: [1, 31, true],
  BYYEARDAY: [1, 366, true],
  BYWEEKNO: [1, 53, true],
  BYMONTH: [1, 12, false],
  BYSETPOS: [1, 366, true],
};
const MONTH_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const WEEKDAY = /^([+-]?)(\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/;

/**
 * Checks one RRULE value beyond what ical.js checks, so that no rule can make its iterator spin forever:
 * RFC 5545 §3.3.10 ranges and combinations, and that the month-day parts can ever match.
 * Sub-hourly frequencies are refused (no calendar service offers them, and they cost the most to expand).
 */
export function checkRule(text: string, frequencies: ReadonlySet<string> = FREQUENCIES): Result<ICalRecur> {
  let recur: ICalRecur;
  try {
    recur = ICAL.Recur.fromString(text);
  } catch (error) {
    return { ok: false, error: `RRULE ${JSON.stringify(text)} is not valid: ${(error as Error).message}` };
  }
  const freq = recur.freq as string | undefined;
  if (!freq) return { ok: false, error: 'RRULE needs FREQ (DAILY, WEEKLY, MONTHLY, YEARLY or HOURLY).' };
  if (!frequencies.has(freq))
    return { ok: false, error: `RRULE FREQ=${freq} is not supported; use HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY.` };
  if (!Number.isInteger(recur.interval) || recur.interval < 1 || recur.interval > 1000)
    return { ok: false, error: 'RRULE INTERVAL must be a whole number from 1 to 1000.' };
  if (recur.count !== null && recur.count !== undefined && (!Number.isInteger(recur.count) || recur.count < 1))
    return { ok: false, error: 'RRULE COUNT must be at least 1.' };
  if (recur.count && recur.until) return { ok: false, error: 'RRULE cannot have both COUNT and UNTIL.' };
  const parts = recur.parts as Record<string, (number | string)[] | undefined>;
  for (const [name, values] of Object.entries(parts)) {
    if (!values) continue;
    if (name === 'BYDAY') {
      for (const value of values) {
        const match = WEEKDAY.exec(String(value));
        if (!match)
          return {
            ok: false,
            error: `RRULE BYDAY value ${JSON.stringify(value)} is not a weekday such as MO, 1MO or -1FR.`,
          };
        if (match[2] !== undefined) {
          const ordinal = Number(match[2]);
          if (freq !== 'MONTHLY' && freq !== 'YEARLY')
            return {
              ok: false,
              error: `RRULE BYDAY=${value}: numbered weekdays are only allowed with FREQ=MONTHLY or YEARLY.`,
            };
          if (ordinal < 1 || ordinal > (freq === 'MONTHLY' ? 5 : 53))
            return { ok: false, error: `RRULE BYDAY=${value}: the number is out of range.` };
        }
      }
      continue;
    }
    const range = RANGES[name];
    if (!range) continue;
    for (const value of values) {
      const number = Number(value);
      const magnitude = Math.abs(number);
      if (
        !Number.isInteger(number) ||
        magnitude < range[0] ||
        magnitude > range[1] ||
        (number < 0 && !range[2]) ||
        (number === 0 && range[0] > 0)
      ) {
        return {
          ok: false,
          error: `RRULE ${name}=${value} is out of range (${range[2] ? '±' : ''}${range[0]} to ${range[1]}).`,
        };
      }
    }
  }
  if (parts.BYWEEKNO && freq !== 'YEARLY')
    return { ok: false, error: 'RRULE BYWEEKNO is only allowed with FREQ=YEARLY.' };
  if (parts.BYYEARDAY && (freq === 'DAILY' || freq === 'WEEKLY' || freq === 'MONTHLY'))
    return { ok: false, error: `RRULE BYYEARDAY is not allowed with FREQ=${freq}.` };
  if (parts.BYMONTHDAY && freq === 'WEEKLY')
    return { ok: false, error: 'RRULE BYMONTHDAY is not allowed with FREQ=WEEKLY.' };
  if (parts.BYMONTHDAY) {
    const months = (parts.BYMONTH as number[] | undefined) ?? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    const possible = months.some((month) =>
      (parts.BYMONTHDAY as number[]).some((day) => Math.abs(day) <= MONTH_DAYS[month - 1]!),
    );
    if (!possible) return { ok: false, error: `RRULE ${text} never matches a date (no such day in those months).` };
  }
  return { ok: true, value: recur };
}

/** A date-time or date of an EXDATE/RDATE/RECURRENCE-ID, resolved to an instant. */
export interface RecurrenceDate {
  /** Unix seconds (for a date: 00:00 UTC of it). */
  unix: number;
  /** Set for DATE values. */
  date?: string;
}

function resolveTime(time: ICalTime, tzid: string | null, fallbackZone: string): number | undefined {
  if (time.isDate) return dateToUnix(formatDate(time));
  if (time.zone === ICAL.Timezone.utcTimezone || (time.zone as { tzid?: string } | undefined)?.tzid === 'UTC')
    return wallTimeToEpochAsUtc(wallOf(time)) / 1000;
  const zone = tzid ? ianaFromTzid(tzid) : fallbackZone;
  if (!zone) return undefined;
  return Math.floor(zonedWallTimeToEpoch(zone, wallOf(time)) / 1000);
}

function readDates(property: ICalProperty, fallbackZone: string): Result<RecurrenceDate[]> {
  const tzid = (property.getParameter('tzid') as string | undefined) ?? null;
  if (tzid && !ianaFromTzid(tzid))
    return {
      ok: false,
      error: `${property.name.toUpperCase()} uses the unknown time zone ${JSON.stringify(tzid)}; use an IANA name such as America/New_York.`,
    };
  const result: RecurrenceDate[] = [];
  for (const raw of property.getValues() as unknown[]) {
    const value = raw instanceof ICAL.Period ? raw.start : raw;
    if (!(value instanceof ICAL.Time))
      return { ok: false, error: `${property.name.toUpperCase()} has a value that is not a date or date-time.` };
    const unix = resolveTime(value, tzid, fallbackZone);
    if (unix === undefined || !Number.isFinite(unix))
      return { ok: false, error: `${property.name.toUpperCase()} has a value that is not a date or date-time.` };
    result.push(value.isDate ? { unix, date: formatDate(value) } : { unix });
  }
  return { ok: true, value: result };
}

/** A series' recurrence, parsed once. */
export interface RecurrenceSet {
  rules: ICalRecur[];
  rdates: RecurrenceDate[];
  exdates: RecurrenceDate[];
}

/**
 * Parses and checks recurrence lines (`RRULE:…`, `EXDATE…:…`, `RDATE…:…`) for an event starting at
 * `when`. Returns the set, or an error message naming the offending line.
 */
export function parseRecurrence(lines: readonly string[], when: EventTime): Result<RecurrenceSet> {
  if (lines.length > ICAL_LIMITS.maxRecurrenceLines)
    return { ok: false, error: `at most ${ICAL_LIMITS.maxRecurrenceLines} recurrence lines are allowed.` };
  const set: RecurrenceSet = { rules: [], rdates: [], exdates: [] };
  const zone = startTimeZone(when);
  for (const line of lines) {
    const trimmed = line.trim();
    const name = /^([A-Za-z-]+)[;:]/.exec(trimmed)?.[1]?.toUpperCase();
    if (name === 'RRULE') {
      const rule = checkRule(trimmed.slice(trimmed.indexOf(':') + 1));
      if (!rule.ok) return rule;
      set.rules.push(rule.value);
      continue;
    }
    if (name !== 'EXDATE' && name !== 'RDATE') {
      return {
        ok: false,
        error: `${JSON.stringify(trimmed.slice(0, 80))} is not a recurrence line; use RRULE:…, EXDATE:… or RDATE:….`,
      };
    }
    let property: ICalProperty;
    try {
      property = ICAL.Property.fromString(trimmed);
    } catch (error) {
      return {
        ok: false,
        error: `${name} line ${JSON.stringify(trimmed.slice(0, 80))} is not valid: ${(error as Error).message}`,
      };
    }
    const dates = readDates(property, zone);
    if (!dates.ok) return dates;
    (name === 'EXDATE' ? set.exdates : set.rdates).push(...dates.value);
    if (set.exdates.length + set.rdates.length > ICAL_LIMITS.maxRecurrenceDates)
      return { ok: false, error: `at most ${ICAL_LIMITS.maxRecurrenceDates} EXDATE/RDATE values are allowed.` };
  }
  if (set.rules.length === 0 && set.rdates.length === 0)
    return { ok: false, error: 'give at least one RRULE (or RDATE) line.' };
  if (set.rules.length > 1) return { ok: false, error: 'only one RRULE line is allowed.' };
  const rule = set.rules[0];
  const byDay = (rule?.parts as Record<string, unknown[] | undefined> | undefined)?.BYDAY;
  if (rule && rule.freq === 'DAILY' && rule.interval % 7 === 0 && byDay && byDay.length > 0) {
    // Every 7·n days lands on DTSTART's weekday only; ical.js would search forever for another one.
    const range = utcRange(when);
    const first = isAllDay(when) ? range.start : wallSecondsAt(zone, range.start);
    const weekday = Object.keys(WEEKDAY_INDEX).find(
      (name) => WEEKDAY_INDEX[name] === weekdayOfDay(Math.floor(first / DAY_SECONDS)),
    )!;
    if (!byDay.some((day) => String(day).endsWith(weekday))) {
      return {
        ok: false,
        error: `RRULE FREQ=DAILY;INTERVAL=${rule.interval} only ever lands on the start's weekday (${weekday}), which BYDAY=${byDay.join(',')} leaves out; add ${weekday} to BYDAY or use FREQ=WEEKLY.`,
      };
    }
  }
  return { ok: true, value: set };
}

/**
 * The name (EXDATE or RDATE) and values of one such recurrence line of an event starting at `when` (whose zone
 * reads values without TZID), or undefined for any other line or one that is not valid.
 */
export function recurrenceDatesOf(
  line: string,
  when: EventTime,
): { name: 'EXDATE' | 'RDATE'; dates: RecurrenceDate[] } | undefined {
  const trimmed = line.trim();
  const name = /^([A-Za-z-]+)[;:]/.exec(trimmed)?.[1]?.toUpperCase();
  if (name !== 'EXDATE' && name !== 'RDATE') return undefined;
  try {
    const dates = readDates(ICAL.Property.fromString(trimmed), startTimeZone(when));
    return dates.ok ? { name, dates: dates.value } : undefined;
  } catch {
    return undefined;
  }
}

/** Checks recurrence lines; returns them trimmed, or an error message. */
export function checkRecurrence(lines: readonly string[], when: EventTime): Result<string[]> {
  const parsed = parseRecurrence(lines, when);
  return parsed.ok ? { ok: true, value: lines.map((line) => line.trim()) } : parsed;
}
