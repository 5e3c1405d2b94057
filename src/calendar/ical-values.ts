/**
 * @module calendar/ical-values
 * What the iCalendar modules share: the event shapes the codec reads and writes, the limits on untrusted input,
 * and conversions between ical.js values and ours. Part of the iCalendar codec (ical.ts is its facade); ical.js is
 * imported only by the ical-*.ts modules.
 */
import ICAL from 'ical.js';
import type { EventTime } from './event-time.js';
import { epochToWallAsUtc, wallTimeToEpochAsUtc, type WallTime } from '../time-zones.js';

/**
 * ical.js folds every chunk to `foldLength` octets and then prefixes continuation lines with a space, so 75
 * gives 76-octet lines; RFC 5545 §3.1 asks for at most 75 octets including that space.
 */
ICAL.foldLength = 74;

/** ical.js value classes, as types (internal to the ical-*.ts modules). */
export type ICalTime = InstanceType<typeof ICAL.Time>;
export type ICalComponent = InstanceType<typeof ICAL.Component>;
export type ICalProperty = InstanceType<typeof ICAL.Property>;
export type ICalRecur = InstanceType<typeof ICAL.Recur>;

/** Parser results are unions, never throws (STYLE.md: result types only for parsers). */
export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

/** iTIP methods we build and understand. */
export type ItipMethod = 'REQUEST' | 'CANCEL' | 'REPLY' | 'PUBLISH';

/** A participant's answer, as Nylas spells it (PARTSTAT in iCalendar). */
export type ParticipantStatus = 'yes' | 'no' | 'maybe' | 'noreply';
/** An event's STATUS, as Nylas spells it. */
export type EventStatus = 'confirmed' | 'maybe' | 'cancelled';
/** An event's CLASS, as Nylas spells it. */
export type Visibility = 'default' | 'public' | 'private';

/** A person: ORGANIZER, ATTENDEE or resource. */
export interface EmailName {
  email: string;
  name?: string | undefined;
}

/** An attendee and their answer. */
export interface Participant extends EmailName {
  status: ParticipantStatus;
  comment?: string;
}

/** A meeting link (CONFERENCE, X-GOOGLE-CONFERENCE, Teams' X- properties). */
export interface Conferencing {
  provider: string;
  details: {
    url?: string | undefined;
    meeting_code?: string | undefined;
    password?: string | undefined;
    pin?: string | undefined;
    phone?: string[] | undefined;
  };
}

/** VALARMs, as Nylas reminders. */
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

const PARTSTAT_TO_STATUS: Record<string, ParticipantStatus> = { ACCEPTED: 'yes', DECLINED: 'no', TENTATIVE: 'maybe' };
const STATUS_TO_PARTSTAT: Record<ParticipantStatus, string> = {
  yes: 'ACCEPTED',
  no: 'DECLINED',
  maybe: 'TENTATIVE',
  noreply: 'NEEDS-ACTION',
};

/** iCalendar PARTSTAT of a participant status. */
export function partstatOf(status: ParticipantStatus): string {
  return STATUS_TO_PARTSTAT[status];
}

/** Participant status of a PARTSTAT value (anything unknown is `noreply`). */
export function statusOfPartstat(partstat: string | null | undefined): ParticipantStatus {
  return PARTSTAT_TO_STATUS[(partstat ?? '').toUpperCase()] ?? 'noreply';
}

/** An ICAL.Time in UTC for an instant (unix seconds). */
export function utcTime(unix: number): ICalTime {
  const wall = epochToWallAsUtc(unix * 1000);
  return ICAL.Time.fromData({ ...wall, isDate: false }, ICAL.Timezone.utcTimezone);
}

/** A floating (zone-less) ICAL.Time for a wall-clock time. */
export function floatingTime(wall: WallTime): ICalTime {
  return ICAL.Time.fromData({ ...wall, isDate: false });
}

/** An ICAL.Time DATE value for `YYYY-MM-DD`. */
export function dateValue(date: string): ICalTime {
  return ICAL.Time.fromDateString(date);
}

/** The wall-clock fields of an ICAL.Time, whatever its zone. */
export function wallOf(time: ICalTime): WallTime {
  return {
    year: time.year,
    month: time.month,
    day: time.day,
    hour: time.hour,
    minute: time.minute,
    second: time.second,
  };
}

/** Whether a zone name means UTC (written with the `Z` form, without a VTIMEZONE). */
export function isUtcZone(zone: string): boolean {
  const lower = zone.toLowerCase();
  return lower === 'utc' || lower === 'etc/utc' || lower === 'gmt' || lower === 'etc/gmt' || lower === 'z';
}

/** The `mailto:` URI of an address (ORGANIZER and ATTENDEE values). */
export function mailto(email: string): string {
  return `mailto:${email}`;
}

/** The lower-cased address of a `mailto:` value, or undefined when it is not one. */
export function emailOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const address = value
    .trim()
    .replace(/^mailto:/i, '')
    .trim();
  return /^[^\s@<>]+@[^\s@<>]+$/.test(address) ? address.toLowerCase() : undefined;
}

/** A parameter value we write (CN): no quotes or control characters, which some clients mishandle. */
export function cleanParam(value: string): string {
  return value.replace(/["\u0000-\u001f\u007f]/g, '').slice(0, 256);
}

/** A text property cut to {@link ICAL_LIMITS}.maxTextLength. */
export function clip(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return text.length > ICAL_LIMITS.maxTextLength ? text.slice(0, ICAL_LIMITS.maxTextLength) : text;
}

/** Wall-clock seconds since 1970 of a floating or date ICAL.Time (a date counts from 00:00). */
export function wallSecondsOf(time: ICalTime): number {
  return (
    wallTimeToEpochAsUtc(
      time.isDate ? { year: time.year, month: time.month, day: time.day, hour: 0, minute: 0, second: 0 } : wallOf(time),
    ) / 1000
  );
}

/** Meeting hosts by URL host name, with the provider names Nylas uses. */
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

/** The instant of `unix` as an iCalendar UTC date-time (`20240610T130000Z`), as used in instance ids. */
export function formatUtcStamp(unix: number): string {
  // Plain string work: this runs once per expanded instance.
  return new Date(unix * 1000)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}
