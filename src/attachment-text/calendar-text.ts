/**
 * @module attachment-text/calendar-text
 * An iCalendar attachment as a readable summary. The parse is the calendar area's (src/calendar, ical.js in a
 * bounded worker thread, through its front door); this module writes what it returns: per event its title, when
 * (in the event's own time zone), where, organizer, attendees with their answers, recurrence, online meeting and
 * description. When that parser refuses a file (over its limits, not strict iCalendar), {@link readCalendarLines}
 * reads the common properties itself, line by line, bounded.
 */
import type { CalendarParser } from '../calendar/index.js';
import type { Extracted } from './extracted.js';
import { count } from './markdown-table.js';

type BoundedResult = Awaited<ReturnType<CalendarParser['parse']>>;
/** What the calendar area's parser returns for a calendar it read. */
export type ParsedCalendarLike = Extract<BoundedResult, { ok: true }>['value'];
type EventLike = ParsedCalendarLike['events'][number];
type EventTimeLike = NonNullable<EventLike['when']>;

/** Events and attendees written out; the rest are counted. */
const MAX_EVENTS = 200;
const MAX_ATTENDEES = 50;
const MAX_DESCRIPTION = 4_000;

const TITLES: Record<string, string> = {
  REQUEST: 'Calendar invitation',
  CANCEL: 'Calendar cancellation',
  REPLY: 'Calendar reply',
  COUNTER: 'Calendar counter-proposal',
};

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `YYYY-MM-DD HH:MM` of a unix time in a zone (UTC when the zone is unknown). */
function wallTime(seconds: number, zone: string): { text: string; zone: string } {
  let formatter = formatters.get(zone);
  let used = zone;
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat('en-CA', {
        timeZone: zone,
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
    } catch {
      used = 'UTC';
      formatter = new Intl.DateTimeFormat('en-CA', {
        timeZone: 'UTC',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
    }
    if (formatters.size < 100) formatters.set(zone, formatter);
  }
  const parts = Object.fromEntries(
    formatter.formatToParts(new Date(seconds * 1000)).map((part) => [part.type, part.value]),
  );
  return { text: `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`, zone: used };
}

/** An event's time as one line. */
export function describeWhen(when: EventTimeLike): string {
  switch (when.kind) {
    case 'time': {
      const at = wallTime(when.time, when.timezone || 'UTC');
      return `${at.text} (${at.zone})`;
    }
    case 'timespan': {
      const start = wallTime(when.startTime, when.startTimezone || 'UTC');
      const end = wallTime(when.endTime, when.endTimezone || start.zone);
      const sameDay = start.zone === end.zone && start.text.slice(0, 10) === end.text.slice(0, 10);
      return start.zone === end.zone
        ? `${start.text} – ${sameDay ? end.text.slice(11) : end.text} (${start.zone})`
        : `${start.text} (${start.zone}) – ${end.text} (${end.zone})`;
    }
    case 'date':
      return `${when.date} (all day)`;
    case 'datespan':
      return `${when.startDate} – ${when.endDate} (all day)`;
  }
}

const person = (who: { email: string; name?: string | undefined }) =>
  who.name && who.name !== who.email ? `${who.name} <${who.email}>` : who.email;

const ANSWERS: Record<string, string> = {
  yes: 'accepted',
  no: 'declined',
  maybe: 'tentative',
  noreply: 'no answer yet',
};

function describeEvent(event: EventLike): string {
  const lines = [`## ${(event.title ?? '').trim() || '(no title)'}`, ''];
  if (event.when) lines.push(`- When: ${describeWhen(event.when)}`);
  if (event.location) lines.push(`- Where: ${event.location}`);
  if (event.organizer) lines.push(`- Organizer: ${person(event.organizer)}`);
  if (event.participants.length) {
    const shown = event.participants
      .slice(0, MAX_ATTENDEES)
      .map((participant) => `${person(participant)} (${ANSWERS[participant.status] ?? participant.status})`);
    const more = event.participants.length - shown.length;
    lines.push(`- Attendees: ${shown.join('; ')}${more > 0 ? `; and ${count(more)} more` : ''}`);
  }
  if (event.resources.length) lines.push(`- Rooms and resources: ${event.resources.map(person).join('; ')}`);
  if (event.status !== 'confirmed') lines.push(`- Status: ${event.status}`);
  if (event.recurrence?.length) lines.push(`- Repeats: ${event.recurrence.join('; ')}`);
  if (event.conferencing?.details.url) lines.push(`- Online meeting: ${event.conferencing.details.url}`);
  const description = (event.description ?? '').trim();
  if (description) {
    const cut = description.length > MAX_DESCRIPTION ? `${description.slice(0, MAX_DESCRIPTION)}…` : description;
    lines.push('', cut);
  }
  return lines.join('\n');
}

/** The summary of a parsed calendar. */
export function describeCalendar(calendar: ParsedCalendarLike): Extracted {
  const events = calendar.events;
  const title = TITLES[calendar.method ?? ''] ?? 'Calendar';
  const shown = events.slice(0, MAX_EVENTS).map(describeEvent);
  const parts = [`# ${title}: ${count(events.length)} event${events.length === 1 ? '' : 's'}`, ...shown];
  const omitted = events.length > MAX_EVENTS ? [`Events ${MAX_EVENTS + 1}–${events.length} not shown.`] : [];
  if (events.length > MAX_EVENTS) parts.push(`_${omitted[0]}_`);
  return {
    text: parts.join('\n\n'),
    format: 'markdown',
    metadata: { events: events.length, ...(omitted.length ? { omitted } : {}) },
  };
}

/** Content lines read by the fallback, at most. */
const MAX_LINES = 200_000;

/** An iCalendar text value unescaped (`\n`, `\,`, `\;`, `\\`). */
function unescapeText(value: string): string {
  let out = '';
  for (let index = 0; index < value.length; index++) {
    const char = value[index]!;
    if (char !== '\\' || index + 1 >= value.length) {
      out += char;
      continue;
    }
    const next = value[++index]!;
    out += next === 'n' || next === 'N' ? '\n' : next;
  }
  return out;
}

/** A content line split into name, parameters and value (the first colon outside quotes ends the parameters). */
function splitLine(line: string): { name: string; parameters: Map<string, string>; value: string } | undefined {
  let quoted = false;
  let colon = -1;
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (char === '"') quoted = !quoted;
    else if (char === ':' && !quoted) {
      colon = index;
      break;
    }
  }
  if (colon < 0) return undefined;
  const [name = '', ...rest] = line.slice(0, colon).split(';');
  const parameters = new Map<string, string>();
  for (const parameter of rest.slice(0, 20)) {
    const equals = parameter.indexOf('=');
    if (equals > 0)
      parameters.set(parameter.slice(0, equals).toUpperCase(), parameter.slice(equals + 1).replace(/^"|"$/g, ''));
  }
  return { name: name.toUpperCase(), parameters, value: line.slice(colon + 1) };
}

/** A DTSTART/DTEND value as readable text: `20250512T140000` → `2025-05-12 14:00`, with its TZID. */
function readableTime(value: string, zone: string | undefined): string {
  const match = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})?(Z)?)?$/.exec(value.trim());
  if (!match) return value;
  const [, year, month, day, hour, minute, , utc] = match;
  const date = `${year}-${month}-${day}`;
  if (hour === undefined) return `${date} (all day)`;
  return `${date} ${hour}:${minute}${utc ? ' (UTC)' : zone ? ` (${zone})` : ''}`;
}

/** The fallback: SUMMARY, DTSTART, DTEND, LOCATION, ORGANIZER, ATTENDEE and DESCRIPTION of each VEVENT, bounded. */
export function readCalendarLines(text: string): Extracted {
  const events: string[] = [];
  let total = 0;
  let method = '';
  let current: Map<string, string[]> | undefined;
  let logical = '';
  let lines = 0;
  const flush = (line: string) => {
    const parsed = splitLine(line);
    if (!parsed) return;
    if (parsed.name === 'METHOD' && !current) method = parsed.value.trim().toUpperCase();
    if (parsed.name === 'BEGIN' && parsed.value.trim().toUpperCase() === 'VEVENT') current = new Map();
    else if (parsed.name === 'END' && parsed.value.trim().toUpperCase() === 'VEVENT' && current) {
      total++;
      if (events.length < MAX_EVENTS) events.push(describeLines(current));
      current = undefined;
    } else if (current) {
      let value: string;
      if (parsed.name === 'ORGANIZER' || parsed.name === 'ATTENDEE') {
        const email = parsed.value.replace(/^mailto:/i, '');
        const name = parsed.parameters.get('CN');
        const answer = parsed.parameters.get('PARTSTAT');
        value = `${name ? `${name} <${email}>` : email}${parsed.name === 'ATTENDEE' && answer ? ` (${answer.toLowerCase()})` : ''}`;
      } else if (parsed.name === 'DTSTART' || parsed.name === 'DTEND')
        value = readableTime(parsed.value, parsed.parameters.get('TZID'));
      else value = unescapeText(parsed.value);
      const list = current.get(parsed.name) ?? [];
      if (list.length < MAX_ATTENDEES) list.push(value.slice(0, MAX_DESCRIPTION));
      current.set(parsed.name, list);
    }
  };
  for (const raw of text.split(/\r?\n/)) {
    if (++lines > MAX_LINES) break;
    if ((raw.startsWith(' ') || raw.startsWith('\t')) && logical) {
      if (logical.length < MAX_DESCRIPTION * 2) logical += raw.slice(1);
      continue;
    }
    if (logical) flush(logical);
    logical = raw;
  }
  if (logical) flush(logical);
  const title = TITLES[method] ?? 'Calendar';
  const omitted = total > events.length ? [`Events ${events.length + 1}–${total} not shown.`] : [];
  return {
    text: [`# ${title}: ${count(total)} event${total === 1 ? '' : 's'}`, ...events].join('\n\n'),
    format: 'markdown',
    metadata: { events: total, ...(omitted.length ? { omitted } : {}) },
  };
}

function describeLines(properties: Map<string, string[]>): string {
  const first = (name: string) => properties.get(name)?.[0]?.trim();
  const lines = [`## ${first('SUMMARY') || '(no title)'}`, ''];
  const start = first('DTSTART');
  const end = first('DTEND');
  if (start) lines.push(`- When: ${start}${end ? ` – ${end}` : ''}`);
  if (first('LOCATION')) lines.push(`- Where: ${first('LOCATION')}`);
  if (first('ORGANIZER')) lines.push(`- Organizer: ${first('ORGANIZER')}`);
  const attendees = properties.get('ATTENDEE');
  if (attendees?.length) lines.push(`- Attendees: ${attendees.join('; ')}`);
  if (first('RRULE')) lines.push(`- Repeats: RRULE:${first('RRULE')}`);
  const description = first('DESCRIPTION');
  if (description) lines.push('', description);
  return lines.join('\n');
}
