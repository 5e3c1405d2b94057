/**
 * @module calendar/ical
 * The iCalendar codec (RFC 5545) and iTIP/iMIP payloads (RFC 5546 / RFC 6047). The ONLY module that
 * imports ical.js. Pure functions: build REQUEST / CANCEL / REPLY / PUBLISH text from events, parse
 * incoming iCalendar into event-shaped objects (a result union, never a throw), validate and expand
 * recurrence rules (RRULE, RDATE, EXDATE) with hard caps so hostile rules cannot hang the process.
 *
 * Time zones come from the runtime's tz database (time-zones.ts); every TZID we write has a VTIMEZONE
 * generated from it, and every TZID we read is mapped to an IANA name (Windows names included).
 */
import ICAL from 'ical.js';
import { isAllDay, startTimeZone, utcRange, type EventTime } from './event-time.js';
import {
  addDays,
  dateToUnix,
  epochToWallAsUtc,
  formatDate,
  ianaFromTzid,
  normalizeTimeZone,
  offsetAt,
  transitionsBetween,
  unixToDate,
  wallSecondsAt,
  wallTimeAt,
  wallTimeToEpochAsUtc,
  zonedWallSecondsToUnix,
  zonedWallTimeToEpoch,
  zoneMatchingOffsets,
  type OffsetTransition,
  type WallTime,
} from './time-zones.js';

/**
 * ical.js folds every chunk to `foldLength` octets and then prefixes continuation lines with a space, so 75
 * gives 76-octet lines; RFC 5545 §3.1 asks for at most 75 octets including that space.
 */
ICAL.foldLength = 74;

type ICalTime = InstanceType<typeof ICAL.Time>;
type ICalComponent = InstanceType<typeof ICAL.Component>;
type ICalProperty = InstanceType<typeof ICAL.Property>;
type ICalRecur = InstanceType<typeof ICAL.Recur>;

/** Parser results are unions, never throws (STYLE.md: result types only for parsers). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

/** iTIP methods we build and understand. */
export type ItipMethod = 'REQUEST' | 'CANCEL' | 'REPLY' | 'PUBLISH';

export type ParticipantStatus = 'yes' | 'no' | 'maybe' | 'noreply';
export type EventStatus = 'confirmed' | 'maybe' | 'cancelled';
export type Visibility = 'default' | 'public' | 'private';

export interface EmailName {
  email: string;
  name?: string;
}

export interface Participant extends EmailName {
  status: ParticipantStatus;
  comment?: string;
}

export interface Conferencing {
  provider: string;
  details: { url?: string; meeting_code?: string; password?: string; pin?: string; phone?: string[] };
}

export interface Reminders {
  use_default: boolean;
  overrides: { reminder_minutes: number; reminder_method: 'email' | 'popup' | 'sound' | 'display' }[];
}

/** An event as the codec sees it: what iCalendar can carry of a Nylas event. */
export interface CalendarEventData {
  uid: string;
  sequence: number;
  when: EventTime;
  /** On an override of one instance of a series: the instance's original start (unix seconds; all-day: 00:00 UTC). */
  recurrenceId?: number | undefined;
  title: string | null;
  description: string | null;
  location: string | null;
  status: EventStatus;
  busy: boolean;
  visibility: Visibility;
  organizer: EmailName | null;
  participants: Participant[];
  /** RRULE / EXDATE / RDATE lines (series masters only). */
  recurrence: string[] | null;
  conferencing: Conferencing | null;
  reminders: Reminders | null;
  createdAt?: number | undefined;
  updatedAt?: number | undefined;
}

/** An event read from incoming iCalendar. `when` is null when the component had no DTSTART (allowed in REPLY and CANCEL). */
export interface ParsedEvent extends Omit<CalendarEventData, 'when'> {
  when: EventTime | null;
  /** DTSTAMP, unix seconds. */
  dtstamp: number | null;
  /** Attendees with CUTYPE=ROOM or RESOURCE. */
  resources: EmailName[];
}

/** A parsed iCalendar object. */
export interface ParsedCalendar {
  /** METHOD (upper case), or null for a plain calendar file. */
  method: string | null;
  events: ParsedEvent[];
  /** Things that were tolerated (unknown time zone read as UTC, skipped components). */
  warnings: string[];
}

/** Product identifier written into every iCalendar object we make. */
export const PRODUCT_ID = '-//Agentpost//Agentpost Calendar//EN';

/** Limits on untrusted input (README, "Limits › iCalendar"). */
export const ICAL_LIMITS = {
  /** Largest iCalendar text parsed (1 MB: real invitations are a few KB). */
  maxBytes: 1_000_000,
  /**
   * Components of every kind (VCALENDAR, VEVENT, VTIMEZONE, STANDARD/DAYLIGHT, VALARM, anything unknown) and
   * content lines other than BEGIN/END, counted on the text before it is parsed.
   */
  maxComponents: 2_000,
  maxProperties: 20_000,
  /** VEVENTs read from one object (a series with its overrides), and recurring series among them. */
  maxEvents: 500,
  maxSeries: 50,
  /** VTIMEZONEs in one object, and STANDARD/DAYLIGHT observances in one VTIMEZONE. */
  maxTimeZones: 20,
  maxObservances: 200,
  /**
   * Offset changes computed for one VTIMEZONE over the years its events need, and rule steps taken for all of an
   * object's VTIMEZONEs: observances are expanded only from the year before the earliest event on (never from
   * their DTSTART, such as Outlook's 1601), up to the year after the latest.
   */
  maxZoneChanges: 2_000,
  maxZoneSteps: 20_000,
  /** Largest UTC offset (TZOFFSETFROM/TZOFFSETTO) accepted, seconds: ±18 hours, as ISO 8601 and java.time allow. */
  maxUtcOffset: 18 * 3600,
  /** Years an event may start or end in; anything outside is refused as not a real event. */
  firstYear: 1900,
  lastYear: 2199,
  /** Recurrence lines on one event, and date values across its EXDATE/RDATE lines. */
  maxRecurrenceLines: 50,
  maxRecurrenceDates: 1_000,
  /** Attendees kept per event. */
  maxParticipants: 500,
  /** Longest text property kept (longer is cut). */
  maxTextLength: 65_536,
} as const;

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

// ---------------------------------------------------------------------------------------------
// Small helpers

const PARTSTAT_TO_STATUS: Record<string, ParticipantStatus> = { ACCEPTED: 'yes', DECLINED: 'no', TENTATIVE: 'maybe' };
const STATUS_TO_PARTSTAT: Record<ParticipantStatus, string> = { yes: 'ACCEPTED', no: 'DECLINED', maybe: 'TENTATIVE', noreply: 'NEEDS-ACTION' };

/** iCalendar PARTSTAT of a participant status. */
export function partstatOf(status: ParticipantStatus): string {
  return STATUS_TO_PARTSTAT[status];
}

/** Participant status of a PARTSTAT value (anything unknown is `noreply`). */
export function statusOfPartstat(partstat: string | null | undefined): ParticipantStatus {
  return PARTSTAT_TO_STATUS[(partstat ?? '').toUpperCase()] ?? 'noreply';
}

function utcTime(unix: number): ICalTime {
  const wall = epochToWallAsUtc(unix * 1000);
  return ICAL.Time.fromData({ ...wall, isDate: false }, ICAL.Timezone.utcTimezone);
}

function floatingTime(wall: WallTime): ICalTime {
  return ICAL.Time.fromData({ ...wall, isDate: false });
}

function dateValue(date: string): ICalTime {
  return ICAL.Time.fromDateString(date);
}

function wallOf(time: ICalTime): WallTime {
  return { year: time.year, month: time.month, day: time.day, hour: time.hour, minute: time.minute, second: time.second };
}

function isUtcZone(zone: string): boolean {
  const lower = zone.toLowerCase();
  return lower === 'utc' || lower === 'etc/utc' || lower === 'gmt' || lower === 'etc/gmt' || lower === 'z';
}

function mailto(email: string): string {
  return `mailto:${email}`;
}

function emailOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const address = value.trim().replace(/^mailto:/i, '').trim();
  return /^[^\s@<>]+@[^\s@<>]+$/.test(address) ? address.toLowerCase() : undefined;
}

/** A parameter value we write (CN): no quotes or control characters, which some clients mishandle. */
function cleanParam(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/["\u0000-\u001f\u007f]/g, '').slice(0, 256);
}

function clip(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return text.length > ICAL_LIMITS.maxTextLength ? text.slice(0, ICAL_LIMITS.maxTextLength) : text;
}

// ---------------------------------------------------------------------------------------------
// VTIMEZONE from the tz database

interface Observance {
  kind: 'standard' | 'daylight';
  transition: OffsetTransition;
}

function localOnset(transition: OffsetTransition): WallTime {
  return epochToWallAsUtc(transition.epochMs + transition.offsetFrom);
}

function weekdayRule(wall: WallTime, last: boolean): string {
  const weekday = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'][new Date(Date.UTC(wall.year, wall.month - 1, wall.day)).getUTCDay()]!;
  return `FREQ=YEARLY;BYMONTH=${wall.month};BYDAY=${last ? -1 : Math.ceil(wall.day / 7)}${weekday}`;
}

/** The yearly rule that produces the given transitions, tried as "last weekday" and "nth weekday" of the month. */
function yearlyRuleFor(transition: OffsetTransition, later: OffsetTransition[]): string | undefined {
  const onset = localOnset(transition);
  const daysInMonth = new Date(Date.UTC(onset.year, onset.month, 0)).getUTCDate();
  const candidates = onset.day + 7 > daysInMonth ? [weekdayRule(onset, true), weekdayRule(onset, false)] : [weekdayRule(onset, false)];
  for (const rule of candidates) {
    const iterator = ICAL.Recur.fromString(rule).iterator(floatingTime(onset));
    iterator.next();
    const matches = later.every((expected) => {
      const next = iterator.next();
      if (!next) return false;
      const got = wallOf(next);
      const want = localOnset(expected);
      return got.year === want.year && got.month === want.month && got.day === want.day && got.hour === want.hour && got.minute === want.minute;
    });
    if (matches) return rule;
  }
  return undefined;
}

const vtimezoneCache = new Map<string, ICalComponent>();

/**
 * A VTIMEZONE for an IANA zone, valid from `fromYear` on: yearly rules when the zone follows one (checked
 * against the next years), otherwise the explicit transitions of twenty years (RDATE).
 */
export function buildVtimezone(timeZone: string, fromYear: number): ICalComponent {
  const key = `${timeZone}@${fromYear}`;
  const cached = vtimezoneCache.get(key);
  if (cached) return new ICAL.Component(cached.toJSON());

  const component = new ICAL.Component('vtimezone');
  component.addPropertyWithValue('tzid', timeZone);
  const transitions = transitionsBetween(timeZone, fromYear, fromYear + 8);
  const firstYear = transitions.filter((transition) => new Date(transition.epochMs).getUTCFullYear() === fromYear);
  const addObservance = (kind: 'standard' | 'daylight', from: number, to: number, onset: WallTime, extra: (sub: ICalComponent) => void) => {
    const sub = new ICAL.Component(kind);
    sub.addPropertyWithValue('dtstart', floatingTime(onset));
    sub.addPropertyWithValue('tzoffsetfrom', ICAL.UtcOffset.fromSeconds(Math.round(from / 1000)));
    sub.addPropertyWithValue('tzoffsetto', ICAL.UtcOffset.fromSeconds(Math.round(to / 1000)));
    extra(sub);
    component.addSubcomponent(sub);
  };

  if (transitions.length === 0) {
    const offset = offsetAt(timeZone, Date.UTC(fromYear, 0, 1));
    addObservance('standard', offset, offset, { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0 }, () => undefined);
  } else {
    const observances: Observance[] = firstYear.map((transition) => ({
      kind: transition.offsetTo > transition.offsetFrom ? 'daylight' : 'standard',
      transition,
    }));
    const rules = observances.map((observance) => {
      const same = transitions.filter(
        (other) =>
          other.epochMs > observance.transition.epochMs && other.offsetFrom === observance.transition.offsetFrom && other.offsetTo === observance.transition.offsetTo,
      );
      return same.length >= 2 ? yearlyRuleFor(observance.transition, same) : undefined;
    });
    if (observances.length > 0 && rules.every((rule) => rule !== undefined)) {
      observances.forEach((observance, index) => {
        addObservance(observance.kind, observance.transition.offsetFrom, observance.transition.offsetTo, localOnset(observance.transition), (sub) => {
          sub.addPropertyWithValue('rrule', ICAL.Recur.fromString(rules[index]!));
        });
      });
    } else {
      // Irregular zone: list every transition of twenty years explicitly.
      const all = transitionsBetween(timeZone, fromYear, fromYear + 20);
      const before = offsetAt(timeZone, Date.UTC(fromYear, 0, 1));
      addObservance('standard', before, before, { year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0 }, () => undefined);
      for (const transition of all) {
        addObservance(transition.offsetTo > transition.offsetFrom ? 'daylight' : 'standard', transition.offsetFrom, transition.offsetTo, localOnset(transition), () => undefined);
      }
    }
  }
  vtimezoneCache.set(key, component);
  return new ICAL.Component(component.toJSON());
}

// ---------------------------------------------------------------------------------------------
// Recurrence: validation

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
function checkRule(text: string, frequencies: ReadonlySet<string> = FREQUENCIES): Result<ICalRecur> {
  let recur: ICalRecur;
  try {
    recur = ICAL.Recur.fromString(text);
  } catch (error) {
    return { ok: false, error: `RRULE ${JSON.stringify(text)} is not valid: ${(error as Error).message}` };
  }
  const freq = recur.freq as string | undefined;
  if (!freq) return { ok: false, error: 'RRULE needs FREQ (DAILY, WEEKLY, MONTHLY, YEARLY or HOURLY).' };
  if (!frequencies.has(freq)) return { ok: false, error: `RRULE FREQ=${freq} is not supported; use HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY.` };
  if (!Number.isInteger(recur.interval) || recur.interval < 1 || recur.interval > 1000) return { ok: false, error: 'RRULE INTERVAL must be a whole number from 1 to 1000.' };
  if (recur.count !== null && recur.count !== undefined && (!Number.isInteger(recur.count) || recur.count < 1)) return { ok: false, error: 'RRULE COUNT must be at least 1.' };
  if (recur.count && recur.until) return { ok: false, error: 'RRULE cannot have both COUNT and UNTIL.' };
  const parts = recur.parts as Record<string, (number | string)[] | undefined>;
  for (const [name, values] of Object.entries(parts)) {
    if (!values) continue;
    if (name === 'BYDAY') {
      for (const value of values) {
        const match = WEEKDAY.exec(String(value));
        if (!match) return { ok: false, error: `RRULE BYDAY value ${JSON.stringify(value)} is not a weekday such as MO, 1MO or -1FR.` };
        if (match[2] !== undefined) {
          const ordinal = Number(match[2]);
          if (freq !== 'MONTHLY' && freq !== 'YEARLY') return { ok: false, error: `RRULE BYDAY=${value}: numbered weekdays are only allowed with FREQ=MONTHLY or YEARLY.` };
          if (ordinal < 1 || ordinal > (freq === 'MONTHLY' ? 5 : 53)) return { ok: false, error: `RRULE BYDAY=${value}: the number is out of range.` };
        }
      }
      continue;
    }
    const range = RANGES[name];
    if (!range) continue;
    for (const value of values) {
      const number = Number(value);
      const magnitude = Math.abs(number);
      if (!Number.isInteger(number) || magnitude < range[0] || magnitude > range[1] || (number < 0 && !range[2]) || (number === 0 && range[0] > 0)) {
        return { ok: false, error: `RRULE ${name}=${value} is out of range (${range[2] ? '±' : ''}${range[0]} to ${range[1]}).` };
      }
    }
  }
  if (parts.BYWEEKNO && freq !== 'YEARLY') return { ok: false, error: 'RRULE BYWEEKNO is only allowed with FREQ=YEARLY.' };
  if (parts.BYYEARDAY && (freq === 'DAILY' || freq === 'WEEKLY' || freq === 'MONTHLY')) return { ok: false, error: `RRULE BYYEARDAY is not allowed with FREQ=${freq}.` };
  if (parts.BYMONTHDAY && freq === 'WEEKLY') return { ok: false, error: 'RRULE BYMONTHDAY is not allowed with FREQ=WEEKLY.' };
  if (parts.BYMONTHDAY) {
    const months = (parts.BYMONTH as number[] | undefined) ?? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    const possible = months.some((month) => (parts.BYMONTHDAY as number[]).some((day) => Math.abs(day) <= MONTH_DAYS[month - 1]!));
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
  if (time.zone === ICAL.Timezone.utcTimezone || (time.zone as { tzid?: string } | undefined)?.tzid === 'UTC') return wallTimeToEpochAsUtc(wallOf(time)) / 1000;
  const zone = tzid ? ianaFromTzid(tzid) : fallbackZone;
  if (!zone) return undefined;
  return Math.floor(zonedWallTimeToEpoch(zone, wallOf(time)) / 1000);
}

function readDates(property: ICalProperty, fallbackZone: string): Result<RecurrenceDate[]> {
  const tzid = (property.getParameter('tzid') as string | undefined) ?? null;
  if (tzid && !ianaFromTzid(tzid)) return { ok: false, error: `${property.name.toUpperCase()} uses the unknown time zone ${JSON.stringify(tzid)}; use an IANA name such as America/New_York.` };
  const result: RecurrenceDate[] = [];
  for (const raw of property.getValues() as unknown[]) {
    const value = raw instanceof ICAL.Period ? raw.start : raw;
    if (!(value instanceof ICAL.Time)) return { ok: false, error: `${property.name.toUpperCase()} has a value that is not a date or date-time.` };
    const unix = resolveTime(value, tzid, fallbackZone);
    if (unix === undefined || !Number.isFinite(unix)) return { ok: false, error: `${property.name.toUpperCase()} has a value that is not a date or date-time.` };
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
  if (lines.length > ICAL_LIMITS.maxRecurrenceLines) return { ok: false, error: `at most ${ICAL_LIMITS.maxRecurrenceLines} recurrence lines are allowed.` };
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
      return { ok: false, error: `${JSON.stringify(trimmed.slice(0, 80))} is not a recurrence line; use RRULE:…, EXDATE:… or RDATE:….` };
    }
    let property: ICalProperty;
    try {
      property = ICAL.Property.fromString(trimmed);
    } catch (error) {
      return { ok: false, error: `${name} line ${JSON.stringify(trimmed.slice(0, 80))} is not valid: ${(error as Error).message}` };
    }
    const dates = readDates(property, zone);
    if (!dates.ok) return dates;
    (name === 'EXDATE' ? set.exdates : set.rdates).push(...dates.value);
    if (set.exdates.length + set.rdates.length > ICAL_LIMITS.maxRecurrenceDates) return { ok: false, error: `at most ${ICAL_LIMITS.maxRecurrenceDates} EXDATE/RDATE values are allowed.` };
  }
  if (set.rules.length === 0 && set.rdates.length === 0) return { ok: false, error: 'give at least one RRULE (or RDATE) line.' };
  if (set.rules.length > 1) return { ok: false, error: 'only one RRULE line is allowed.' };
  const rule = set.rules[0];
  const byDay = (rule?.parts as Record<string, unknown[] | undefined> | undefined)?.BYDAY;
  if (rule && rule.freq === 'DAILY' && rule.interval % 7 === 0 && byDay && byDay.length > 0) {
    // Every 7·n days lands on DTSTART's weekday only; ical.js would search forever for another one.
    const range = utcRange(when);
    const first = isAllDay(when) ? range.start : wallSecondsAt(zone, range.start);
    const weekday = Object.keys(WEEKDAY_INDEX).find((name) => WEEKDAY_INDEX[name] === weekdayOfDay(Math.floor(first / DAY_SECONDS)))!;
    if (!byDay.some((day) => String(day).endsWith(weekday))) {
      return { ok: false, error: `RRULE FREQ=DAILY;INTERVAL=${rule.interval} only ever lands on the start's weekday (${weekday}), which BYDAY=${byDay.join(',')} leaves out; add ${weekday} to BYDAY or use FREQ=WEEKLY.` };
    }
  }
  return { ok: true, value: set };
}

/**
 * The name (EXDATE or RDATE) and values of one such recurrence line of an event starting at `when` (whose zone
 * reads values without TZID), or undefined for any other line or one that is not valid.
 */
export function recurrenceDatesOf(line: string, when: EventTime): { name: 'EXDATE' | 'RDATE'; dates: RecurrenceDate[] } | undefined {
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

// ---------------------------------------------------------------------------------------------
// Recurrence: expansion

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
    copy.until = floatingTime({ year: until.year, month: until.month, day: until.day, hour: 23, minute: 59, second: 59 });
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

const WEEKDAY_INDEX: Record<string, number> = { SU: 0, MO: 1, TU: 2, WE: 3, TH: 4, FR: 5, SA: 6 };

/** Whether a (shifted) series start satisfies the day filters of a rule; used after fast-forwarding. */
function startMatchesFilters(rule: ICalRecur, start: ICalTime): boolean {
  const parts = rule.parts as Record<string, (number | string)[] | undefined>;
  if (parts.BYMONTH && !parts.BYMONTH.includes(start.month)) return false;
  if (parts.BYMONTHDAY) {
    const days = ICAL.Time.daysInMonth(start.month, start.year);
    if (!parts.BYMONTHDAY.some((day) => (Number(day) > 0 ? Number(day) === start.day : days + Number(day) + 1 === start.day))) return false;
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
  const freq = rule.freq as string;
  if (rule.count || (freq !== 'DAILY' && freq !== 'WEEKLY')) return start;
  if (parts.BYSETPOS || parts.BYHOUR || parts.BYMINUTE || parts.BYSECOND || parts.BYYEARDAY || parts.BYWEEKNO) return start;
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

const DAY_SECONDS = 86_400;

/** Weekday of a day number (days since 1970-01-01, a Thursday): 0 = Sunday … 6 = Saturday. */
const weekdayOfDay = (day: number) => (((day + 4) % 7) + 7) % 7;

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

/** Wall-clock seconds since 1970 of a floating or date ICAL.Time (a date counts from 00:00). */
function wallSecondsOf(time: ICalTime): number {
  return wallTimeToEpochAsUtc(time.isDate ? { year: time.year, month: time.month, day: time.day, hour: 0, minute: 0, second: 0 } : wallOf(time)) / 1000;
}

/** ICAL.Time weekday numbers (SU = 1 … SA = 7) → 0 = Sunday … 6 = Saturday. */
const ICAL_WEEKDAY_OFFSET = 1;
const PLAIN_WEEKDAY = /^(MO|TU|WE|TH|FR|SA|SU)$/;

/** The arithmetic form of a rule, or undefined when only the iterator can expand it. */
function arithmeticRule(rule: ICalRecur, local: ICalRecur, firstDay: number, timeOfDay: number): ArithmeticRule | undefined {
  const freq = rule.freq as string;
  if (freq !== 'DAILY' && freq !== 'WEEKLY') return undefined;
  const parts = rule.parts as Record<string, (number | string)[] | undefined>;
  for (const [name, values] of Object.entries(parts)) if (values && values.length > 0 && name !== 'BYDAY') return undefined;
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
    if (!weekdays) return { kind: 'arithmetic', firstDay, timeOfDay, base: firstDay, period: interval, offsets: [0], skipped: 0, extraStart: false, count, untilWall };
    // The weekday pattern of every `interval` days repeats after 7·interval days (interval if it is a multiple of 7).
    const period = interval % 7 === 0 ? interval : interval * 7;
    const offsets: number[] = [];
    // No offsets (BYDAY misses DTSTART's weekday and INTERVAL is a multiple of 7; parseRecurrence refuses such
    // rules): DTSTART alone, where the ical.js iterator would search forever.
    for (let offset = 0; offset < period; offset += interval) if (weekdays.has(weekdayOfDay(firstDay + offset))) offsets.push(offset);
    return { kind: 'arithmetic', firstDay, timeOfDay, base: firstDay, period, offsets, skipped: 0, extraStart: !weekdays.has(firstWeekday), count, untilWall };
  }
  const weekStart = (typeof rule.wkst === 'number' ? rule.wkst : 2) - ICAL_WEEKDAY_OFFSET;
  const base = firstDay - ((firstWeekday - weekStart + 7) % 7);
  const offsets = [...(weekdays ?? new Set([firstWeekday]))].map((weekday) => (weekday - weekStart + 7) % 7).sort((a, b) => a - b);
  const skipped = offsets.filter((offset) => base + offset < firstDay).length;
  return { kind: 'arithmetic', firstDay, timeOfDay, base, period: 7 * interval, offsets, skipped, extraStart: !offsets.includes(firstDay - base), count, untilWall };
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
    excluded: new Set(recurrence.exdates.filter((exdate) => exdate.date === undefined || allDay).map((exdate) => exdate.unix)),
    excludedDates: new Set(recurrence.exdates.filter((exdate) => exdate.date !== undefined && !allDay).map((exdate) => exdate.date!)),
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
    return start < this.windowEnd && (start + duration > this.windowStart || (duration === 0 && start >= this.windowStart));
  }

  isExcluded(start: number): boolean {
    const { excluded, excludedDates, zone } = this.prepared;
    return excluded.has(start) || (excludedDates.size > 0 && excludedDates.has(formatDate(wallTimeAt(zone, start * 1000))));
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
function expandArithmetic(occurrences: Occurrences, rule: ArithmeticRule, firstCandidateDay: number, lastCandidateDay: number): boolean {
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
function expandIterator(occurrences: Occurrences, rule: ICalRecur, maxIterations: number, iterations: { count: number }): boolean {
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

function expandWith(prepared: PreparedExpansion, windowStart: number, requestedEnd: number, limits: ExpansionLimits): Expansion {
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
  if (occurrences.overlaps(prepared.rangeStart) && !occurrences.isExcluded(prepared.rangeStart)) found.add(prepared.rangeStart);
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
  const capped = { maxOccurrences: Math.min(limits.maxOccurrences, budget.occurrences), maxIterations: Math.min(limits.maxIterations, budget.iterations) };
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
  const rules = prepared.rules.map((rule, index): IteratorRule => (rule.kind === 'iterator' ? rule : { kind: 'iterator', local: localRule(recurrence.rules[index]!, when) }));
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
      const unix = until.isDate ? dateToUnix(addDays(formatDate(until), 1)) : until.zone === ICAL.Timezone.utcTimezone ? wallTimeToEpochAsUtc(wallOf(until)) / 1000 : occurrenceUnix(until, when) + 86_400;
      end = Math.max(end, unix + duration);
    } else if (rule.count) {
      // Counting a long series costs as much as expanding it; past the cap it is treated as never ending.
      if (rule.count > EXPANSION_LIMITS.maxOccurrences) return null;
      const expansion = expandOccurrences(when, { rules: [rule], rdates: [], exdates: [] }, range.start, Number.MAX_SAFE_INTEGER, {
        maxOccurrences: EXPANSION_LIMITS.maxOccurrences,
        maxIterations: EXPANSION_LIMITS.maxIterations,
      });
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

// ---------------------------------------------------------------------------------------------
// Building

/** Zones (non-UTC) an event writes in TZID parameters, with the first year it needs. */
function zonesOf(event: CalendarEventData, into: Map<string, number>) {
  if (event.when.kind !== 'time' && event.when.kind !== 'timespan') return;
  const year = new Date(utcRange(event.when).start * 1000).getUTCFullYear() - 1;
  const zones = event.when.kind === 'time' ? [event.when.timezone] : [event.when.startTimezone, event.when.endTimezone];
  for (const zone of zones) {
    if (isUtcZone(zone)) continue;
    into.set(zone, Math.min(into.get(zone) ?? year, year));
  }
}

/** A DTSTART-like property for an instant in a zone (UTC: `Z` form; otherwise TZID + local time). */
function timeProperty(name: string, unix: number, zone: string): ICalProperty {
  const property = new ICAL.Property(name);
  if (isUtcZone(zone)) {
    property.setValue(utcTime(unix));
  } else {
    property.setParameter('tzid', zone);
    property.setValue(floatingTime(wallTimeAt(zone, unix * 1000)));
  }
  return property;
}

function dateProperty(name: string, date: string): ICalProperty {
  const property = new ICAL.Property(name);
  property.setValue(dateValue(date));
  return property;
}

/** EXDATE / RDATE / RECURRENCE-ID values written in the same form as DTSTART (what Outlook expects). */
function datesProperty(name: 'exdate' | 'rdate', dates: RecurrenceDate[], when: EventTime): ICalProperty {
  const property = new ICAL.Property(name);
  if (isAllDay(when)) {
    property.setValues(dates.map((date) => dateValue(date.date ?? unixToDate(date.unix))));
    return property;
  }
  const zone = startTimeZone(when);
  if (isUtcZone(zone)) {
    property.setValues(dates.map((date) => utcTime(date.unix)));
  } else {
    property.setParameter('tzid', zone);
    property.setValues(dates.map((date) => floatingTime(wallTimeAt(zone, date.unix * 1000))));
  }
  return property;
}

/** The RRULE as written: UNTIL in UTC for timed events (RFC 5545 §3.3.10), a DATE for all-day ones. */
function ruleForOutput(rule: ICalRecur, when: EventTime): ICalRecur {
  const copy = rule.clone();
  const until = copy.until;
  if (!until) return copy;
  if (isAllDay(when)) {
    if (!until.isDate) copy.until = dateValue(formatDate(until));
    return copy;
  }
  if (until.zone === ICAL.Timezone.utcTimezone && !until.isDate) return copy;
  const zone = startTimeZone(when);
  const wall = until.isDate ? { year: until.year, month: until.month, day: until.day, hour: 23, minute: 59, second: 59 } : wallOf(until);
  copy.until = utcTime(Math.floor(zonedWallTimeToEpoch(zone, wall) / 1000));
  return copy;
}

function addPerson(component: ICalComponent, name: 'organizer' | 'attendee', person: EmailName, params: Record<string, string> = {}) {
  const property = new ICAL.Property(name);
  if (person.name) property.setParameter('cn', cleanParam(person.name));
  for (const [key, value] of Object.entries(params)) property.setParameter(key, value);
  property.setValue(mailto(person.email));
  component.addProperty(property);
}

const CONFERENCE_LABELS: [RegExp, string][] = [
  [/(^|\.)meet\.google\.com$/i, 'Google Meet'],
  [/(^|\.)zoom\.(us|com)$/i, 'Zoom Meeting'],
  [/(^|\.)teams\.(microsoft|live)\.com$/i, 'Microsoft Teams'],
  [/(^|\.)webex\.com$/i, 'WebEx'],
  [/(^|\.)(gotomeeting\.com|gotomeet\.me|goto\.com)$/i, 'GoToMeeting'],
];

/** The conferencing provider a meeting URL belongs to. */
export function conferencingProviderOf(url: string): string {
  try {
    const host = new URL(url).hostname;
    return CONFERENCE_LABELS.find(([pattern]) => pattern.test(host))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

interface BuildOptions {
  method: ItipMethod;
  /** DTSTAMP of every component. */
  now: Date;
  /** Write VALARMs (feeds only: an organizer's reminders are not the attendees'). */
  alarms?: boolean;
  /** Only these attendees (REPLY: the one answering). */
  attendees?: Participant[];
}

function buildEvent(event: CalendarEventData, options: BuildOptions): ICalComponent {
  const component = new ICAL.Component('vevent');
  component.addPropertyWithValue('uid', event.uid);
  component.addPropertyWithValue('dtstamp', utcTime(Math.floor(options.now.getTime() / 1000)));
  const when = event.when;
  switch (when.kind) {
    case 'time':
      component.addProperty(timeProperty('dtstart', when.time, when.timezone));
      component.addProperty(timeProperty('dtend', when.time, when.timezone));
      break;
    case 'timespan':
      component.addProperty(timeProperty('dtstart', when.startTime, when.startTimezone));
      component.addProperty(timeProperty('dtend', when.endTime, when.endTimezone));
      break;
    case 'date':
      component.addProperty(dateProperty('dtstart', when.date));
      component.addProperty(dateProperty('dtend', addDays(when.date, 1)));
      break;
    case 'datespan':
      component.addProperty(dateProperty('dtstart', when.startDate));
      component.addProperty(dateProperty('dtend', addDays(when.endDate, 1)));
      break;
  }
  if (event.recurrenceId !== undefined) {
    component.addProperty(isAllDay(when) ? dateProperty('recurrence-id', unixToDate(event.recurrenceId)) : timeProperty('recurrence-id', event.recurrenceId, startTimeZone(when)));
  }
  if (event.sequence > 0 || options.method !== 'PUBLISH') component.addPropertyWithValue('sequence', event.sequence);
  if (event.title) component.addPropertyWithValue('summary', event.title);
  if (options.method !== 'REPLY') {
    if (event.description) component.addPropertyWithValue('description', event.description);
    if (event.location) component.addPropertyWithValue('location', event.location);
  }
  const status = options.method === 'CANCEL' ? 'cancelled' : event.status;
  component.addPropertyWithValue('status', status === 'cancelled' ? 'CANCELLED' : status === 'maybe' ? 'TENTATIVE' : 'CONFIRMED');
  if (options.method !== 'REPLY') {
    component.addPropertyWithValue('transp', event.busy ? 'OPAQUE' : 'TRANSPARENT');
    if (event.visibility !== 'default') component.addPropertyWithValue('class', event.visibility === 'private' ? 'PRIVATE' : 'PUBLIC');
  }
  if (event.organizer) addPerson(component, 'organizer', event.organizer);
  const attendees = options.attendees ?? event.participants;
  for (const participant of attendees) {
    const params: Record<string, string> = { cutype: 'INDIVIDUAL', role: 'REQ-PARTICIPANT', partstat: partstatOf(participant.status) };
    if (options.method === 'REQUEST' && participant.status === 'noreply') params.rsvp = 'TRUE';
    addPerson(component, 'attendee', participant, params);
  }
  if (options.method === 'REPLY') {
    const comment = attendees[0]?.comment;
    if (comment) component.addPropertyWithValue('comment', comment);
  }
  if (event.recurrence && event.recurrenceId === undefined && options.method !== 'REPLY') {
    const parsed = parseRecurrence(event.recurrence, when);
    if (parsed.ok) {
      for (const rule of parsed.value.rules) component.addPropertyWithValue('rrule', ruleForOutput(rule, when));
      if (parsed.value.rdates.length > 0) component.addProperty(datesProperty('rdate', parsed.value.rdates, when));
      if (parsed.value.exdates.length > 0) component.addProperty(datesProperty('exdate', parsed.value.exdates, when));
    }
  }
  const url = event.conferencing?.details.url;
  if (url && options.method !== 'REPLY') {
    const conference = new ICAL.Property('conference');
    conference.setParameter('value', 'URI');
    conference.setParameter('feature', 'VIDEO');
    conference.setParameter('label', cleanParam(event.conferencing!.provider));
    conference.setValue(url);
    component.addProperty(conference);
    if (event.conferencing!.provider === 'Google Meet') component.addPropertyWithValue('x-google-conference', url);
  }
  if (event.createdAt !== undefined) component.addPropertyWithValue('created', utcTime(event.createdAt));
  if (event.updatedAt !== undefined) component.addPropertyWithValue('last-modified', utcTime(event.updatedAt));
  if (options.alarms && event.reminders && !event.reminders.use_default) {
    for (const reminder of event.reminders.overrides) {
      const alarm = new ICAL.Component('valarm');
      alarm.addPropertyWithValue('action', reminder.reminder_method === 'sound' ? 'AUDIO' : 'DISPLAY');
      alarm.addPropertyWithValue('trigger', ICAL.Duration.fromSeconds(-reminder.reminder_minutes * 60));
      if (reminder.reminder_method !== 'sound') alarm.addPropertyWithValue('description', event.title ?? 'Reminder');
      component.addSubcomponent(alarm);
    }
  }
  return component;
}

function buildCalendar(events: CalendarEventData[], options: BuildOptions & { name?: string; timezone?: string }): string {
  const calendar = new ICAL.Component('vcalendar');
  calendar.addPropertyWithValue('prodid', PRODUCT_ID);
  calendar.addPropertyWithValue('version', '2.0');
  calendar.addPropertyWithValue('calscale', 'GREGORIAN');
  calendar.addPropertyWithValue('method', options.method);
  if (options.name !== undefined) calendar.addPropertyWithValue('x-wr-calname', options.name);
  if (options.timezone !== undefined) calendar.addPropertyWithValue('x-wr-timezone', options.timezone);
  const zones = new Map<string, number>();
  for (const event of events) zonesOf(event, zones);
  for (const [zone, year] of [...zones].sort(([a], [b]) => a.localeCompare(b))) calendar.addSubcomponent(buildVtimezone(zone, year));
  for (const event of events) calendar.addSubcomponent(buildEvent(event, options));
  return calendar.toString() + '\r\n';
}

/**
 * An iTIP REQUEST: the organizer's invitation (or update: raise `sequence` on significant changes). Pass
 * the series master first, then any overridden instances (`recurrenceId` set). Every participant gets
 * RSVP=TRUE while their answer is pending.
 */
export function buildItipRequest(events: CalendarEventData[], now: Date): string {
  return buildCalendar(events, { method: 'REQUEST', now });
}

/**
 * An iTIP CANCEL of a whole event (or of one instance when `recurrenceId` is set), to `attendees` (all
 * participants when omitted). The caller raises `sequence` first, as RFC 5546 requires.
 */
export function buildItipCancel(event: CalendarEventData, now: Date, attendees?: Participant[]): string {
  return buildCalendar([{ ...event, status: 'cancelled' }], { method: 'CANCEL', now, ...(attendees ? { attendees } : {}) });
}

/** An iTIP REPLY from one attendee: their PARTSTAT for the event (or one instance), to the organizer. */
export function buildItipReply(event: CalendarEventData, attendee: Participant, now: Date): string {
  return buildCalendar([event], { method: 'REPLY', now, attendees: [attendee] });
}

/** A calendar feed (METHOD:PUBLISH) for subscription: every event, with reminders as VALARMs. */
export function buildCalendarFeed(input: { name: string; timezone?: string; events: CalendarEventData[]; now: Date }): string {
  return buildCalendar(input.events, { method: 'PUBLISH', now: input.now, alarms: true, name: input.name, ...(input.timezone ? { timezone: input.timezone } : {}) });
}

/** The MIME type of an iMIP part (RFC 6047 §2.4): `text/calendar; method=REQUEST; charset=UTF-8`. */
export function itipContentType(method: ItipMethod): string {
  return `text/calendar; method=${method}; charset=UTF-8`;
}

// ---------------------------------------------------------------------------------------------
// Parsing

interface ZoneResolution {
  /** The IANA zone we store. */
  zone: string;
  /** The VTIMEZONE to convert with, when the name alone did not say (times converted by its rules). */
  definition?: CustomZone;
}

/** One change of UTC offset of a VTIMEZONE: its instant (unix seconds) and the offsets before and after (seconds). */
interface ZoneChange {
  onset: number;
  from: number;
  to: number;
}

/**
 * A VTIMEZONE whose TZID names no zone we know, reduced to its offset changes over the years the calendar needs.
 * ical.js's own ICAL.Timezone is never built from untrusted input: on first use it expands every observance from
 * its DTSTART (1601 in Outlook's) up to five years past the current year, step by step of its rule, and again for
 * each later year asked for; a MINUTELY rule from 1601 ran the heap out.
 */
interface CustomZone {
  /** Sorted by the wall-clock time from which each applies. */
  changes: ZoneChange[];
}

/** Wall-clock seconds (as if UTC) from which a change applies: a gap's times take the new offset, a repeated hour's the later. */
const appliesFrom = (change: ZoneChange) => change.onset + Math.min(change.from, change.to);

/** The UTC offset (seconds) of a wall-clock time (seconds as if UTC) in a custom zone; before its first change, that change's TZOFFSETFROM. */
function customOffsetAt(zone: CustomZone, wall: number): number {
  const { changes } = zone;
  let low = 0;
  let high = changes.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (appliesFrom(changes[middle]!) <= wall) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found >= 0 ? changes[found]!.to : (changes[0]?.from ?? 0);
}

/**
 * Seconds of a UTC-OFFSET property (TZOFFSETFROM/TZOFFSETTO), or undefined when it is missing, malformed or beyond
 * ±18 hours. Read from the text as written: ical.js wraps an offset such as +9959 into -0801.
 */
function offsetSeconds(property: ICalProperty | null): number | undefined {
  const raw = property?.toJSON()[3];
  const match = typeof raw === 'string' ? /^([+-])(\d{2}):?(\d{2})(?::?(\d{2}))?$/.exec(raw) : null;
  if (!match) return undefined;
  const [, sign, hours, minutes, seconds] = match;
  if (Number(minutes) > 59 || Number(seconds ?? 0) > 59) return undefined;
  const total = Number(hours) * 3600 + Number(minutes) * 60 + Number(seconds ?? 0);
  return total <= ICAL_LIMITS.maxUtcOffset ? (sign === '-' ? -total : total) : undefined;
}

/** Frequencies an observance rule may have: sub-daily ones are refused (no zone changes offset more than daily). */
const OBSERVANCE_FREQUENCIES = new Set(['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY']);

/**
 * The start of an observance's rule moved forward by whole periods of the rule, to the latest such date in
 * `year` or before. Only rules without COUNT are moved (COUNT numbers occurrences from the real start). The moved
 * start itself may not match the rule (ical.js yields it first regardless): that touches only `year`, which is
 * before every year read.
 */
function rebasedStart(start: ICalTime, rule: ICalRecur, year: number): ICalTime {
  if (rule.count || start.year >= year) return start;
  const interval = Math.max(1, rule.interval);
  const freq = rule.freq as string;
  const make = (y: number, m: number) =>
    ICAL.Time.fromData({ year: y, month: m, day: Math.min(start.day, ICAL.Time.daysInMonth(m, y)), hour: start.hour, minute: start.minute, second: start.second, isDate: start.isDate });
  if (freq === 'YEARLY') return make(start.year + Math.floor((year - start.year) / interval) * interval, start.month);
  if (freq === 'MONTHLY') {
    const months = Math.floor(((year - start.year) * 12) / interval) * interval;
    const index = start.month - 1 + months;
    return make(start.year + Math.floor(index / 12), (index % 12) + 1);
  }
  const periodDays = (freq === 'WEEKLY' ? 7 : 1) * interval;
  const days = Math.floor((Date.UTC(year, 0, 1) - Date.UTC(start.year, start.month - 1, start.day)) / 86_400_000);
  const moved = start.clone();
  moved.adjust(Math.floor(days / periodDays) * periodDays, 0, 0, 0);
  return moved;
}

/**
 * The offset changes of one VTIMEZONE during the UTC years `fromYear`..`toYear` (plus the last one before, which
 * gives the offset in force at the start), or the reason it is refused: an offset beyond ±18 hours, a sub-daily
 * rule, too many observances or changes. `steps` counts rule steps across the calendar's zones.
 */
function customZoneOf(vtimezone: ICalComponent, tzid: string, fromYear: number, toYear: number, steps: { count: number }): Result<CustomZone> {
  const name = JSON.stringify(tzid.slice(0, 80));
  const observances = vtimezone.getAllSubcomponents().filter((sub) => sub.name === 'standard' || sub.name === 'daylight');
  if (observances.length > ICAL_LIMITS.maxObservances) return { ok: false, error: `VTIMEZONE ${name} has more than ${ICAL_LIMITS.maxObservances} observances.` };
  const changes: ZoneChange[] = [];
  const tooMany = (): Result<CustomZone> => ({ ok: false, error: `VTIMEZONE ${name} has more than ${ICAL_LIMITS.maxZoneChanges} offset changes in ${fromYear}–${toYear}.` });
  for (const observance of observances) {
    const kind = observance.name.toUpperCase();
    const start = observance.getFirstPropertyValue('dtstart');
    const from = offsetSeconds(observance.getFirstProperty('tzoffsetfrom'));
    const to = offsetSeconds(observance.getFirstProperty('tzoffsetto'));
    if (from === undefined || to === undefined) {
      return { ok: false, error: `VTIMEZONE ${name}: a ${kind} needs TZOFFSETFROM and TZOFFSETTO within ±18:00.` };
    }
    if (!(start instanceof ICAL.Time)) return { ok: false, error: `VTIMEZONE ${name}: a ${kind} has no DTSTART.` };
    // Changes before the years needed are dropped, but for the latest one of each observance (it may be in force).
    const cutoff = Date.UTC(fromYear - 1, 0, 1) / 1000;
    let before: ZoneChange | undefined;
    const add = (time: ICalTime, utc: boolean): boolean => {
      const wall = wallSecondsOf(time.isDate ? ICAL.Time.fromData({ year: time.year, month: time.month, day: time.day, hour: start.hour, minute: start.minute, second: start.second }) : time);
      const change = { onset: utc ? wall : wall - from, from, to };
      if (change.onset < cutoff) {
        if (!before || before.onset < change.onset) before = change;
        return true;
      }
      changes.push(change);
      return changes.length <= ICAL_LIMITS.maxZoneChanges;
    };
    const rdates = observance.getAllProperties('rdate');
    const ruleValue = observance.getFirstPropertyValue('rrule');
    if (!ruleValue && rdates.length === 0) add(start, false);
    for (const property of rdates) {
      for (const raw of property.getValues() as unknown[]) {
        const value = raw instanceof ICAL.Period ? raw.start : raw;
        if (!(value instanceof ICAL.Time) || value.year > toYear) continue;
        if (!add(value, value.zone === ICAL.Timezone.utcTimezone)) return tooMany();
      }
    }
    if (ruleValue) {
      if (!(ruleValue instanceof ICAL.Recur)) return { ok: false, error: `VTIMEZONE ${name}: a ${kind} RRULE is not valid.` };
      if (!OBSERVANCE_FREQUENCIES.has(ruleValue.freq as string)) {
        return { ok: false, error: `VTIMEZONE ${name}: a ${kind} RRULE with FREQ=${String(ruleValue.freq)} is refused; observances recur yearly (DAILY at most).` };
      }
      const checked = checkRule(ruleValue.toString(), OBSERVANCE_FREQUENCIES);
      if (!checked.ok) return { ok: false, error: `VTIMEZONE ${name}: ${checked.error}` };
      const rule = checked.value;
      if (rule.until && rule.until.zone === ICAL.Timezone.utcTimezone) {
        // UNTIL is UTC; the iterator runs in the observance's wall time (before the change), as ical.js does it.
        const until = ICAL.Time.fromData({ ...wallOf(rule.until), isDate: rule.until.isDate });
        until.adjust(0, 0, 0, from);
        rule.until = until;
      }
      let iterator;
      try {
        iterator = rule.iterator(rebasedStart(start, rule, fromYear - 1));
      } catch {
        return { ok: false, error: `VTIMEZONE ${name}: a ${kind} RRULE cannot be expanded.` };
      }
      for (;;) {
        if (++steps.count > ICAL_LIMITS.maxZoneSteps) return { ok: false, error: `the calendar's VTIMEZONEs take more than ${ICAL_LIMITS.maxZoneSteps} rule steps to expand.` };
        let next: ICalTime | null;
        try {
          next = iterator.next();
        } catch {
          return { ok: false, error: `VTIMEZONE ${name}: a ${kind} RRULE cannot be expanded.` };
        }
        if (!next || next.year > toYear) break;
        if (!add(next, false)) return tooMany();
      }
    }
    if (before) changes.push(before);
  }
  changes.sort((a, b) => appliesFrom(a) - appliesFrom(b) || a.onset - b.onset);
  return { ok: true, value: { changes } };
}

/**
 * The zone of each VTIMEZONE: an IANA zone its TZID names (Windows names included), else the IANA zone whose
 * offsets its rules reproduce in `years[0]` (when one does) with the definition to convert with, else UTC with the
 * definition. Definitions are computed only for `years` (the calendar's events' years, padded by one).
 */
function resolveZones(vtimezones: ICalComponent[], warnings: string[], years: [number, number]): Result<Map<string, ZoneResolution>> {
  const result = new Map<string, ZoneResolution>();
  if (vtimezones.length > ICAL_LIMITS.maxTimeZones) return { ok: false, error: `the calendar has more than ${ICAL_LIMITS.maxTimeZones} VTIMEZONEs.` };
  const steps = { count: 0 };
  for (const vtimezone of vtimezones) {
    const tzid = vtimezone.getFirstPropertyValue('tzid');
    if (typeof tzid !== 'string' || result.has(tzid)) continue;
    const named = ianaFromTzid(tzid);
    if (named) {
      result.set(tzid, { zone: named });
      continue;
    }
    const definition = customZoneOf(vtimezone, tzid, years[0], years[1], steps);
    if (!definition.ok) return definition;
    const matched = zoneMatchingOffsets(Math.max(years[0], Math.min(years[1] - 1, years[0] + 1)), (wall) => customOffsetAt(definition.value, wallTimeToEpochAsUtc(wall) / 1000) * 1000);
    if (matched) {
      result.set(tzid, { zone: matched, definition: definition.value });
    } else {
      warnings.push(`time zone ${JSON.stringify(tzid)} is not known; its own definition is used and events are stored in UTC.`);
      result.set(tzid, { zone: 'UTC', definition: definition.value });
    }
  }
  return { ok: true, value: result };
}

interface TimeReader {
  /** The instant and the IANA zone of a date-time property value; undefined when its zone is unknown. */
  read(time: ICalTime, tzid: string | null): { unix: number; zone: string } | undefined;
}

function timeReader(zones: Map<string, ZoneResolution>, floatingZone: string, warnings: string[]): TimeReader {
  return {
    read(time, tzid) {
      if (time.zone === ICAL.Timezone.utcTimezone) return { unix: wallTimeToEpochAsUtc(wallOf(time)) / 1000, zone: 'UTC' };
      if (!tzid) return { unix: Math.floor(zonedWallTimeToEpoch(floatingZone, wallOf(time)) / 1000), zone: floatingZone };
      const resolution = zones.get(tzid) ?? (ianaFromTzid(tzid) ? { zone: ianaFromTzid(tzid)! } : undefined);
      if (!resolution) {
        warnings.push(`time zone ${JSON.stringify(tzid)} has no definition; read as UTC.`);
        return { unix: wallTimeToEpochAsUtc(wallOf(time)) / 1000, zone: 'UTC' };
      }
      if (resolution.definition) {
        const wall = wallTimeToEpochAsUtc(wallOf(time)) / 1000;
        return { unix: wall - customOffsetAt(resolution.definition, wall), zone: resolution.zone };
      }
      return { unix: Math.floor(zonedWallTimeToEpoch(resolution.zone, wallOf(time)) / 1000), zone: resolution.zone };
    },
  };
}

function textOf(component: ICalComponent, name: string): string | null {
  const value = component.getFirstPropertyValue(name);
  return typeof value === 'string' && value.trim() !== '' ? clip(value) : null;
}

function personOf(property: ICalProperty): EmailName | undefined {
  const email = emailOf(property.getFirstValue());
  if (!email) return undefined;
  const cn = property.getParameter('cn');
  const name = typeof cn === 'string' ? cn.trim().slice(0, 256) : '';
  // Google writes the address itself as CN when it knows no name.
  return name && name.toLowerCase() !== email ? { email, name } : { email };
}

function readWhenOf(component: ICalComponent, reader: TimeReader): Result<EventTime | null> {
  const startProperty = component.getFirstProperty('dtstart');
  if (!startProperty) return { ok: true, value: null };
  const start = startProperty.getFirstValue();
  if (!(start instanceof ICAL.Time)) return { ok: false, error: 'DTSTART is not a date or date-time.' };
  const endProperty = component.getFirstProperty('dtend');
  const end = endProperty?.getFirstValue();
  const durationValue = component.getFirstPropertyValue('duration');
  if (start.isDate) {
    const startDate = formatDate(start);
    let endDate = startDate;
    if (end instanceof ICAL.Time) endDate = addDays(formatDate(end), end.isDate ? -1 : 0);
    else if (durationValue instanceof ICAL.Duration) endDate = addDays(startDate, Math.max(1, Math.round(durationValue.toSeconds() / 86_400)) - 1);
    if (endDate < startDate) endDate = startDate;
    return { ok: true, value: endDate === startDate ? { kind: 'date', date: startDate } : { kind: 'datespan', startDate, endDate } };
  }
  const startTzid = (startProperty.getParameter('tzid') as string | undefined) ?? null;
  const startRead = reader.read(start, startTzid);
  if (!startRead) return { ok: false, error: 'DTSTART has an unknown time zone.' };
  let endRead = startRead;
  if (end instanceof ICAL.Time) {
    const read = end.isDate ? { unix: dateToUnix(formatDate(end)), zone: startRead.zone } : reader.read(end, (endProperty!.getParameter('tzid') as string | undefined) ?? null);
    if (read) endRead = read;
  } else if (durationValue instanceof ICAL.Duration) {
    endRead = { unix: startRead.unix + durationValue.toSeconds(), zone: startRead.zone };
  }
  if (endRead.unix < startRead.unix) return { ok: false, error: 'DTEND is before DTSTART.' };
  if (endRead.unix === startRead.unix) return { ok: true, value: { kind: 'time', time: startRead.unix, timezone: startRead.zone } };
  return { ok: true, value: { kind: 'timespan', startTime: startRead.unix, endTime: endRead.unix, startTimezone: startRead.zone, endTimezone: endRead.zone } };
}

/** Rewrites EXDATE/RDATE lines whose TZID is not an IANA name into UTC (or DATE) form, so they are stored portably. */
function recurrenceLinesOf(component: ICalComponent, when: EventTime | null, reader: TimeReader): Result<string[] | null> {
  const lines: string[] = [];
  for (const rule of component.getAllProperties('rrule')) {
    const value = rule.getFirstValue();
    if (!(value instanceof ICAL.Recur)) return { ok: false, error: 'RRULE is not valid.' };
    lines.push(`RRULE:${value.toString()}`);
  }
  for (const name of ['exdate', 'rdate'] as const) {
    for (const property of component.getAllProperties(name)) {
      const tzid = (property.getParameter('tzid') as string | undefined) ?? null;
      const values: string[] = [];
      let dateOnly = false;
      for (const raw of property.getValues() as unknown[]) {
        const value = raw instanceof ICAL.Period ? raw.start : raw;
        if (!(value instanceof ICAL.Time)) return { ok: false, error: `${name.toUpperCase()} is not valid.` };
        if (value.isDate) {
          dateOnly = true;
          values.push(formatDate(value).replaceAll('-', ''));
          continue;
        }
        const read = reader.read(value, tzid);
        if (!read) return { ok: false, error: `${name.toUpperCase()} has an unknown time zone.` };
        values.push(utcTime(read.unix).toICALString());
      }
      if (values.length > 0) lines.push(`${name.toUpperCase()}${dateOnly ? ';VALUE=DATE' : ''}:${values.join(',')}`);
    }
  }
  if (lines.length === 0) return { ok: true, value: null };
  if (when) {
    const checked = checkRecurrence(lines, when);
    if (!checked.ok) return checked;
  }
  return { ok: true, value: lines };
}

function remindersOf(component: ICalComponent): Reminders | null {
  const overrides: Reminders['overrides'] = [];
  for (const alarm of component.getAllSubcomponents('valarm').slice(0, 10)) {
    const trigger = alarm.getFirstPropertyValue('trigger');
    if (!(trigger instanceof ICAL.Duration)) continue;
    const minutes = Math.round(-trigger.toSeconds() / 60);
    if (minutes < 0 || minutes > 40_320) continue;
    const action = String(alarm.getFirstPropertyValue('action') ?? '').toUpperCase();
    overrides.push({ reminder_minutes: minutes, reminder_method: action === 'EMAIL' ? 'email' : action === 'AUDIO' ? 'sound' : 'display' });
  }
  return overrides.length > 0 ? { use_default: false, overrides } : null;
}

function conferencingOf(component: ICalComponent): Conferencing | null {
  const candidates: (string | undefined)[] = [
    ...component.getAllProperties('conference').map((property) => String(property.getFirstValue() ?? '')),
    String(component.getFirstPropertyValue('x-google-conference') ?? ''),
    String(component.getFirstPropertyValue('x-microsoft-skypeteamsmeetingurl') ?? ''),
    String(component.getFirstPropertyValue('x-microsoft-onlinemeetingconflink') ?? ''),
  ];
  const url = candidates.find((candidate) => candidate && /^https:\/\//i.test(candidate));
  return url ? { provider: conferencingProviderOf(url), details: { url } } : null;
}

function parseEvent(component: ICalComponent, method: string | null, reader: TimeReader): Result<ParsedEvent> {
  const uid = component.getFirstPropertyValue('uid');
  if (typeof uid !== 'string' || uid.trim() === '') return { ok: false, error: 'a VEVENT has no UID.' };
  if (uid.length > 1024) return { ok: false, error: 'a VEVENT UID is longer than 1024 characters.' };
  const when = readWhenOf(component, reader);
  if (!when.ok) return { ok: false, error: `event ${JSON.stringify(uid.slice(0, 80))}: ${when.error}` };
  if (when.value === null && (method === null || method === 'REQUEST' || method === 'PUBLISH')) {
    return { ok: false, error: `event ${JSON.stringify(uid.slice(0, 80))} has no DTSTART.` };
  }
  const sequenceValue = component.getFirstPropertyValue('sequence');
  const sequence = typeof sequenceValue === 'number' && Number.isInteger(sequenceValue) && sequenceValue >= 0 ? Math.min(sequenceValue, 2_147_483_647) : 0;

  let recurrenceId: number | undefined;
  const recurrenceProperty = component.getFirstProperty('recurrence-id');
  if (recurrenceProperty) {
    const value = recurrenceProperty.getFirstValue();
    if (!(value instanceof ICAL.Time)) return { ok: false, error: `event ${JSON.stringify(uid.slice(0, 80))}: RECURRENCE-ID is not valid.` };
    const read = value.isDate ? { unix: dateToUnix(formatDate(value)) } : reader.read(value, (recurrenceProperty.getParameter('tzid') as string | undefined) ?? null);
    if (!read) return { ok: false, error: `event ${JSON.stringify(uid.slice(0, 80))}: RECURRENCE-ID has an unknown time zone.` };
    recurrenceId = read.unix;
  }
  const recurrence = recurrenceProperty ? { ok: true as const, value: null } : recurrenceLinesOf(component, when.value, reader);
  if (!recurrence.ok) return { ok: false, error: `event ${JSON.stringify(uid.slice(0, 80))}: ${recurrence.error}` };

  const participants: Participant[] = [];
  const resources: EmailName[] = [];
  const seen = new Set<string>();
  for (const property of component.getAllProperties('attendee')) {
    const person = personOf(property);
    if (!person || seen.has(person.email)) continue;
    seen.add(person.email);
    const cutype = String(property.getParameter('cutype') ?? '').toUpperCase();
    if (cutype === 'ROOM' || cutype === 'RESOURCE') {
      resources.push(person);
      continue;
    }
    if (participants.length >= ICAL_LIMITS.maxParticipants) continue;
    participants.push({ ...person, status: statusOfPartstat(property.getParameter('partstat') as string | undefined) });
  }
  const comment = textOf(component, 'comment');
  if (method === 'REPLY' && comment && participants.length === 1) participants[0]!.comment = comment.slice(0, 1024);

  const organizerProperty = component.getFirstProperty('organizer');
  const organizer = organizerProperty ? (personOf(organizerProperty) ?? null) : null;
  const statusValue = String(component.getFirstPropertyValue('status') ?? '').toUpperCase();
  const status: EventStatus = method === 'CANCEL' || statusValue === 'CANCELLED' ? 'cancelled' : statusValue === 'TENTATIVE' ? 'maybe' : 'confirmed';
  const transp = String(component.getFirstPropertyValue('transp') ?? '').toUpperCase();
  const busyStatus = String(component.getFirstPropertyValue('x-microsoft-cdo-busystatus') ?? '').toUpperCase();
  const classValue = String(component.getFirstPropertyValue('class') ?? '').toUpperCase();
  const stamp = (name: string) => {
    const value = component.getFirstPropertyValue(name);
    return value instanceof ICAL.Time ? Math.floor(value.toUnixTime()) : undefined;
  };

  return {
    ok: true,
    value: {
      uid: uid.trim(),
      sequence,
      when: when.value,
      ...(recurrenceId !== undefined ? { recurrenceId } : {}),
      title: textOf(component, 'summary'),
      description: textOf(component, 'description'),
      location: textOf(component, 'location'),
      status,
      busy: transp === 'TRANSPARENT' ? false : busyStatus === 'FREE' ? false : true,
      visibility: classValue === 'PRIVATE' || classValue === 'CONFIDENTIAL' ? 'private' : classValue === 'PUBLIC' ? 'public' : 'default',
      organizer,
      participants,
      resources,
      recurrence: recurrence.value,
      conferencing: conferencingOf(component),
      reminders: remindersOf(component),
      dtstamp: stamp('dtstamp') ?? null,
      ...(stamp('created') !== undefined ? { createdAt: stamp('created') } : {}),
      ...(stamp('last-modified') !== undefined ? { updatedAt: stamp('last-modified') } : {}),
    },
  };
}

/**
 * Counts the components (BEGIN lines) and other content lines of iCalendar text without parsing it, and says
 * which limit the text exceeds, if any. Linear, and stops at the first excess.
 */
function structureError(text: string): string | undefined {
  let components = 0;
  let properties = 0;
  let at = 0;
  while (at < text.length) {
    const next = text.indexOf('\n', at);
    const end = next < 0 ? text.length : next;
    const first = text.charCodeAt(at);
    // A line starting with a space or tab continues the previous one (RFC 5545 §3.1); blank lines are nothing.
    if (end > at && first !== 0x20 && first !== 0x09 && first !== 0x0d) {
      const head = text.slice(at, at + 6).toUpperCase();
      if (head === 'BEGIN:') {
        if (++components > ICAL_LIMITS.maxComponents) return `the calendar has more than ${ICAL_LIMITS.maxComponents} components.`;
      } else if (!head.startsWith('END:') && ++properties > ICAL_LIMITS.maxProperties) {
        return `the calendar has more than ${ICAL_LIMITS.maxProperties} properties.`;
      }
    }
    at = end + 1;
  }
  return undefined;
}

/** First and last year of the date-times the events of a calendar start and end at (clamped to the accepted years). */
function eventYears(events: ICalComponent[]): [number, number] {
  let first = Infinity;
  let last = -Infinity;
  for (const event of events) {
    for (const name of ['dtstart', 'dtend', 'recurrence-id']) {
      const value = event.getFirstPropertyValue(name);
      if (!(value instanceof ICAL.Time)) continue;
      const year = Math.min(ICAL_LIMITS.lastYear, Math.max(ICAL_LIMITS.firstYear, value.year));
      first = Math.min(first, year);
      last = Math.max(last, year);
    }
  }
  return Number.isFinite(first) ? [first, last] : [2025, 2025];
}

/** The UTC bounds of the accepted event years. */
const FIRST_EVENT_UNIX = Date.UTC(ICAL_LIMITS.firstYear, 0, 1) / 1000;
const END_EVENT_UNIX = Date.UTC(ICAL_LIMITS.lastYear + 1, 0, 1) / 1000;

/**
 * Parses iCalendar text (an iMIP attachment, an .ics file). Never throws: malformed, oversized or hostile
 * input gives `{ ok: false, error }` and nothing else happens. Floating times are read in the calendar's
 * X-WR-TIMEZONE, else in `defaultTimeZone`. Bounded by {@link ICAL_LIMITS} (size, components, properties,
 * events, time zones and their expansion); for input from outside, prefer `parseICalendarBounded`
 * (ical-bounded.ts), which also runs it off the event loop under a deadline and a heap cap.
 */
export function parseICalendar(text: string, options: { defaultTimeZone?: string; maxBytes?: number } = {}): Result<ParsedCalendar> {
  const maxBytes = options.maxBytes ?? ICAL_LIMITS.maxBytes;
  if (typeof text !== 'string' || text.trim() === '') return { ok: false, error: 'the calendar is empty.' };
  if (Buffer.byteLength(text, 'utf8') > maxBytes) return { ok: false, error: `the calendar is larger than ${maxBytes} bytes.` };
  const tooLarge = structureError(text);
  if (tooLarge) return { ok: false, error: tooLarge };
  let root: ICalComponent;
  let vtimezones: ICalComponent[];
  try {
    const jcal: unknown = ICAL.parse(text.replace(/^\uFEFF/, ''));
    const first = (Array.isArray(jcal) && Array.isArray(jcal[0]) ? jcal[0] : jcal) as unknown[];
    // VTIMEZONEs are kept apart, so that ical.js never turns them into ICAL.Timezone (see CustomZone).
    const children = Array.isArray(first) && Array.isArray(first[2]) ? (first[2] as unknown[]) : [];
    const isZone = (child: unknown) => Array.isArray(child) && child[0] === 'vtimezone';
    vtimezones = children.filter(isZone).map((child) => new ICAL.Component(child as unknown[]));
    root = new ICAL.Component(Array.isArray(first) && first.length >= 3 ? [first[0], first[1], children.filter((child) => !isZone(child))] : first);
  } catch (error) {
    return { ok: false, error: `not valid iCalendar: ${(error as Error).message}`.slice(0, 300) };
  }
  if (root.name !== 'vcalendar') return { ok: false, error: `not an iCalendar object (found ${root.name.toUpperCase()}, expected VCALENDAR).` };
  const warnings: string[] = [];
  try {
    const methodValue = root.getFirstPropertyValue('method');
    const method = typeof methodValue === 'string' && methodValue.trim() !== '' ? methodValue.trim().toUpperCase() : null;
    const calendarZone = root.getFirstPropertyValue('x-wr-timezone');
    const floatingZone = (typeof calendarZone === 'string' && normalizeTimeZone(calendarZone)) || options.defaultTimeZone || 'UTC';
    const components = root.getAllSubcomponents('vevent');
    if (components.length === 0) return { ok: false, error: 'the calendar has no VEVENT.' };
    if (components.length > ICAL_LIMITS.maxEvents) return { ok: false, error: `the calendar has more than ${ICAL_LIMITS.maxEvents} events.` };
    const series = components.filter((component) => component.hasProperty('rrule') || component.hasProperty('rdate')).length;
    if (series > ICAL_LIMITS.maxSeries) return { ok: false, error: `the calendar has more than ${ICAL_LIMITS.maxSeries} recurring events.` };
    const [firstYear, lastYear] = eventYears(components);
    const zones = resolveZones(vtimezones, warnings, [firstYear - 1, lastYear + 1]);
    if (!zones.ok) return zones;
    const reader = timeReader(zones.value, floatingZone, warnings);
    const events: ParsedEvent[] = [];
    for (const component of components) {
      const parsed = parseEvent(component, method, reader);
      if (!parsed.ok) return parsed;
      const when = parsed.value.when;
      if (when) {
        const range = utcRange(when);
        if (range.start < FIRST_EVENT_UNIX || range.end >= END_EVENT_UNIX) {
          return { ok: false, error: `event ${JSON.stringify(parsed.value.uid.slice(0, 80))} is outside the years ${ICAL_LIMITS.firstYear}–${ICAL_LIMITS.lastYear}.` };
        }
      }
      events.push(parsed.value);
    }
    return { ok: true, value: { method, events, warnings } };
  } catch (error) {
    return { ok: false, error: `not valid iCalendar: ${(error as Error).message}`.slice(0, 300) };
  }
}

/** The instant of `unix` as an iCalendar UTC date-time (`20240610T130000Z`), as used in instance ids. */
export function formatUtcStamp(unix: number): string {
  // Plain string work: this runs once per expanded instance.
  return new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}
