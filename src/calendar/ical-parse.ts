/**
 * @module calendar/ical-parse
 * Parsing incoming iCalendar (an iMIP attachment, an .ics file) into event-shaped objects: a result union, never a
 * throw, bounded by {@link ICAL_LIMITS}. VTIMEZONEs are resolved by ical-time-zones.ts, never by ical.js.
 */
import ICAL from 'ical.js';
import { utcRange, type EventTime } from './event-time.js';
import { addDays, dateToUnix, formatDate, normalizeTimeZone } from '../time-zones.js';
import { checkRecurrence } from './ical-rules.js';
import { resolveZones, timeReader, type TimeReader } from './ical-time-zones.js';
import {
  ICAL_LIMITS,
  clip,
  conferencingProviderOf,
  emailOf,
  statusOfPartstat,
  utcTime,
  type Conferencing,
  type EmailName,
  type EventStatus,
  type ICalComponent,
  type ICalProperty,
  type ParsedCalendar,
  type ParsedEvent,
  type Participant,
  type Reminders,
  type Result,
} from './ical-values.js';

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
    else if (durationValue instanceof ICAL.Duration)
      endDate = addDays(startDate, Math.max(1, Math.round(durationValue.toSeconds() / 86_400)) - 1);
    if (endDate < startDate) endDate = startDate;
    return {
      ok: true,
      value: endDate === startDate ? { kind: 'date', date: startDate } : { kind: 'datespan', startDate, endDate },
    };
  }
  const startTzid = (startProperty.getParameter('tzid') as string | undefined) ?? null;
  const startRead = reader.read(start, startTzid);
  if (!startRead) return { ok: false, error: 'DTSTART has an unknown time zone.' };
  let endRead = startRead;
  if (end instanceof ICAL.Time) {
    const read = end.isDate
      ? { unix: dateToUnix(formatDate(end)), zone: startRead.zone }
      : reader.read(end, (endProperty!.getParameter('tzid') as string | undefined) ?? null);
    if (read) endRead = read;
  } else if (durationValue instanceof ICAL.Duration) {
    endRead = { unix: startRead.unix + durationValue.toSeconds(), zone: startRead.zone };
  }
  if (endRead.unix < startRead.unix) return { ok: false, error: 'DTEND is before DTSTART.' };
  if (endRead.unix === startRead.unix)
    return { ok: true, value: { kind: 'time', time: startRead.unix, timezone: startRead.zone } };
  return {
    ok: true,
    value: {
      kind: 'timespan',
      startTime: startRead.unix,
      endTime: endRead.unix,
      startTimezone: startRead.zone,
      endTimezone: endRead.zone,
    },
  };
}

/** Rewrites EXDATE/RDATE lines whose TZID is not an IANA name into UTC (or DATE) form, so they are stored portably. */
function recurrenceLinesOf(
  component: ICalComponent,
  when: EventTime | null,
  reader: TimeReader,
): Result<string[] | null> {
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
    overrides.push({
      reminder_minutes: minutes,
      reminder_method: action === 'EMAIL' ? 'email' : action === 'AUDIO' ? 'sound' : 'display',
    });
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
  const sequence =
    typeof sequenceValue === 'number' && Number.isInteger(sequenceValue) && sequenceValue >= 0
      ? Math.min(sequenceValue, 2_147_483_647)
      : 0;

  let recurrenceId: number | undefined;
  const recurrenceProperty = component.getFirstProperty('recurrence-id');
  if (recurrenceProperty) {
    const value = recurrenceProperty.getFirstValue();
    if (!(value instanceof ICAL.Time))
      return { ok: false, error: `event ${JSON.stringify(uid.slice(0, 80))}: RECURRENCE-ID is not valid.` };
    const read = value.isDate
      ? { unix: dateToUnix(formatDate(value)) }
      : reader.read(value, (recurrenceProperty.getParameter('tzid') as string | undefined) ?? null);
    if (!read)
      return { ok: false, error: `event ${JSON.stringify(uid.slice(0, 80))}: RECURRENCE-ID has an unknown time zone.` };
    recurrenceId = read.unix;
  }
  const recurrence = recurrenceProperty
    ? { ok: true as const, value: null }
    : recurrenceLinesOf(component, when.value, reader);
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
  const status: EventStatus =
    method === 'CANCEL' || statusValue === 'CANCELLED'
      ? 'cancelled'
      : statusValue === 'TENTATIVE'
        ? 'maybe'
        : 'confirmed';
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
      visibility:
        classValue === 'PRIVATE' || classValue === 'CONFIDENTIAL'
          ? 'private'
          : classValue === 'PUBLIC'
            ? 'public'
            : 'default',
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
        if (++components > ICAL_LIMITS.maxComponents)
          return `the calendar has more than ${ICAL_LIMITS.maxComponents} components.`;
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
export function parseICalendar(
  text: string,
  options: { defaultTimeZone?: string; maxBytes?: number } = {},
): Result<ParsedCalendar> {
  const maxBytes = options.maxBytes ?? ICAL_LIMITS.maxBytes;
  if (typeof text !== 'string' || text.trim() === '') return { ok: false, error: 'the calendar is empty.' };
  if (Buffer.byteLength(text, 'utf8') > maxBytes)
    return { ok: false, error: `the calendar is larger than ${maxBytes} bytes.` };
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
    root = new ICAL.Component(
      Array.isArray(first) && first.length >= 3
        ? [first[0], first[1], children.filter((child) => !isZone(child))]
        : first,
    );
  } catch (error) {
    return { ok: false, error: `not valid iCalendar: ${(error as Error).message}`.slice(0, 300) };
  }
  if (root.name !== 'vcalendar')
    return { ok: false, error: `not an iCalendar object (found ${root.name.toUpperCase()}, expected VCALENDAR).` };
  const warnings: string[] = [];
  try {
    const methodValue = root.getFirstPropertyValue('method');
    const method =
      typeof methodValue === 'string' && methodValue.trim() !== '' ? methodValue.trim().toUpperCase() : null;
    const calendarZone = root.getFirstPropertyValue('x-wr-timezone');
    const floatingZone =
      (typeof calendarZone === 'string' && normalizeTimeZone(calendarZone)) || options.defaultTimeZone || 'UTC';
    const components = root.getAllSubcomponents('vevent');
    if (components.length === 0) return { ok: false, error: 'the calendar has no VEVENT.' };
    if (components.length > ICAL_LIMITS.maxEvents)
      return { ok: false, error: `the calendar has more than ${ICAL_LIMITS.maxEvents} events.` };
    const series = components.filter(
      (component) => component.hasProperty('rrule') || component.hasProperty('rdate'),
    ).length;
    if (series > ICAL_LIMITS.maxSeries)
      return { ok: false, error: `the calendar has more than ${ICAL_LIMITS.maxSeries} recurring events.` };
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
          return {
            ok: false,
            error: `event ${JSON.stringify(parsed.value.uid.slice(0, 80))} is outside the years ${ICAL_LIMITS.firstYear}–${ICAL_LIMITS.lastYear}.`,
          };
        }
      }
      events.push(parsed.value);
    }
    return { ok: true, value: { method, events, warnings } };
  } catch (error) {
    return { ok: false, error: `not valid iCalendar: ${(error as Error).message}`.slice(0, 300) };
  }
}
