/**
 * @module calendar/ical-build
 * Building iCalendar text from events: iTIP REQUEST / CANCEL / REPLY (RFC 5546) and PUBLISH feeds, with a
 * VTIMEZONE for every TZID written, and the iMIP content type (RFC 6047).
 */
import ICAL from 'ical.js';
import { isAllDay, startTimeZone, utcRange, type EventTime } from './event-time.js';
import { addDays, formatDate, unixToDate, wallTimeAt, zonedWallTimeToEpoch } from '../time-zones.js';
import { parseRecurrence, type RecurrenceDate } from './ical-rules.js';
import { buildVtimezone } from './ical-time-zones.js';
import {
  cleanParam,
  dateValue,
  floatingTime,
  isUtcZone,
  mailto,
  partstatOf,
  utcTime,
  wallOf,
  PRODUCT_ID,
  type CalendarEventData,
  type EmailName,
  type ICalComponent,
  type ICalProperty,
  type ICalRecur,
  type ItipMethod,
  type Participant,
} from './ical-values.js';

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
  const wall = until.isDate
    ? { year: until.year, month: until.month, day: until.day, hour: 23, minute: 59, second: 59 }
    : wallOf(until);
  copy.until = utcTime(Math.floor(zonedWallTimeToEpoch(zone, wall) / 1000));
  return copy;
}

function addPerson(
  component: ICalComponent,
  name: 'organizer' | 'attendee',
  person: EmailName,
  params: Record<string, string> = {},
) {
  const property = new ICAL.Property(name);
  if (person.name) property.setParameter('cn', cleanParam(person.name));
  for (const [key, value] of Object.entries(params)) property.setParameter(key, value);
  property.setValue(mailto(person.email));
  component.addProperty(property);
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
    component.addProperty(
      isAllDay(when)
        ? dateProperty('recurrence-id', unixToDate(event.recurrenceId))
        : timeProperty('recurrence-id', event.recurrenceId, startTimeZone(when)),
    );
  }
  if (event.sequence > 0 || options.method !== 'PUBLISH') component.addPropertyWithValue('sequence', event.sequence);
  if (event.title) component.addPropertyWithValue('summary', event.title);
  if (options.method !== 'REPLY') {
    if (event.description) component.addPropertyWithValue('description', event.description);
    if (event.location) component.addPropertyWithValue('location', event.location);
  }
  const status = options.method === 'CANCEL' ? 'cancelled' : event.status;
  component.addPropertyWithValue(
    'status',
    status === 'cancelled' ? 'CANCELLED' : status === 'maybe' ? 'TENTATIVE' : 'CONFIRMED',
  );
  if (options.method !== 'REPLY') {
    component.addPropertyWithValue('transp', event.busy ? 'OPAQUE' : 'TRANSPARENT');
    if (event.visibility !== 'default')
      component.addPropertyWithValue('class', event.visibility === 'private' ? 'PRIVATE' : 'PUBLIC');
  }
  if (event.organizer) addPerson(component, 'organizer', event.organizer);
  const attendees = options.attendees ?? event.participants;
  for (const participant of attendees) {
    const params: Record<string, string> = {
      cutype: 'INDIVIDUAL',
      role: 'REQ-PARTICIPANT',
      partstat: partstatOf(participant.status),
    };
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

function buildCalendar(
  events: CalendarEventData[],
  options: BuildOptions & { name?: string; timezone?: string; noMethod?: boolean },
): string {
  const calendar = new ICAL.Component('vcalendar');
  calendar.addPropertyWithValue('prodid', PRODUCT_ID);
  calendar.addPropertyWithValue('version', '2.0');
  calendar.addPropertyWithValue('calscale', 'GREGORIAN');
  // A stored calendar object (CalDAV, RFC 4791 §4.1) carries no METHOD: it is written as a PUBLISH without one.
  if (!options.noMethod) calendar.addPropertyWithValue('method', options.method);
  if (options.name !== undefined) calendar.addPropertyWithValue('x-wr-calname', options.name);
  if (options.timezone !== undefined) calendar.addPropertyWithValue('x-wr-timezone', options.timezone);
  const zones = new Map<string, number>();
  for (const event of events) zonesOf(event, zones);
  for (const [zone, year] of [...zones].sort(([a], [b]) => a.localeCompare(b)))
    calendar.addSubcomponent(buildVtimezone(zone, year));
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
  return buildCalendar([{ ...event, status: 'cancelled' }], {
    method: 'CANCEL',
    now,
    ...(attendees ? { attendees } : {}),
  });
}

/** An iTIP REPLY from one attendee: their PARTSTAT for the event (or one instance), to the organizer. */
export function buildItipReply(event: CalendarEventData, attendee: Participant, now: Date): string {
  return buildCalendar([event], { method: 'REPLY', now, attendees: [attendee] });
}

/** A calendar feed (METHOD:PUBLISH) for subscription: every event, with reminders as VALARMs. */
export function buildCalendarFeed(input: {
  name: string;
  timezone?: string;
  events: CalendarEventData[];
  now: Date;
}): string {
  return buildCalendar(input.events, {
    method: 'PUBLISH',
    now: input.now,
    alarms: true,
    name: input.name,
    ...(input.timezone ? { timezone: input.timezone } : {}),
  });
}

/**
 * A calendar object resource as a CalDAV server stores it (RFC 4791 §4.1): one UID, the series master first and its
 * changed instances after, no METHOD, reminders as VALARMs.
 */
export function buildCalendarObject(events: CalendarEventData[], now: Date): string {
  return buildCalendar(events, { method: 'PUBLISH', now, alarms: true, noMethod: true });
}

/** The MIME type of an iMIP part (RFC 6047 §2.4): `text/calendar; method=REQUEST; charset=UTF-8`. */
export function itipContentType(method: ItipMethod): string {
  return `text/calendar; method=${method}; charset=UTF-8`;
}
