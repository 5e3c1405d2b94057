import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EventTime } from '../../../src/calendar/event-time.js';
import {
  buildCalendarFeed,
  buildItipCancel,
  buildItipReply,
  buildItipRequest,
  buildVtimezone,
  checkRecurrence,
  expandOccurrences,
  itipContentType,
  parseICalendar,
  parseRecurrence,
  type CalendarEventData,
  type ParsedCalendar,
  type ParsedEvent,
} from '../../../src/calendar/ical.js';
import { validateICalendar } from './ics-validator.js';
import { iso, utc } from '../../helpers/calendar.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/ics/${name}`, import.meta.url), 'utf8');
const NOW = new Date('2025-05-01T12:00:00Z');
const AGENT = 'agent@invites.agentpost.localhost';

function parsed(text: string): ParsedCalendar {
  const result = parseICalendar(text);
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

/** Occurrence starts of a parsed series in a window, as ISO strings. */
function occurrences(
  event: { when: EventTime | null; recurrence: string[] | null },
  from: string,
  to: string,
): string[] {
  const set = parseRecurrence(event.recurrence!, event.when!);
  if (!set.ok) throw new Error(set.error);
  return expandOccurrences(event.when!, set.value, utc(from), utc(to)).starts.map(iso);
}

describe('parsing real invitations', () => {
  it('reads a Google Calendar weekly invite with a TZID, an EXDATE and a moved instance across the March DST change', () => {
    const calendar = parsed(fixture('google-recurring-dst.ics'));
    expect(calendar.method).toBe('REQUEST');
    expect(calendar.events).toHaveLength(2);
    const [master, moved] = calendar.events as [ParsedEvent, ParsedEvent];
    expect(master).toMatchObject({
      uid: '6k0qg3a9v1lq2r7c8s4t5u6v7w@google.com',
      sequence: 0,
      when: {
        kind: 'timespan',
        startTime: utc('2025-02-25T15:00:00Z'),
        endTime: utc('2025-02-25T15:30:00Z'),
        startTimezone: 'America/New_York',
        endTimezone: 'America/New_York',
      },
      title: 'Weekly sync',
      location: 'Room 3, Building A',
      status: 'confirmed',
      busy: true,
      organizer: { email: 'alice@gmail.example', name: 'Alice Example' },
      conferencing: { provider: 'Google Meet', details: { url: 'https://meet.google.com/abc-defg-hij' } },
      reminders: { use_default: false, overrides: [{ reminder_minutes: 10, reminder_method: 'display' }] },
    });
    expect(master.description).toContain('Weekly sync about the launch.\n\nJoin with Google Meet');
    expect(master.participants).toEqual([
      { email: 'alice@gmail.example', name: 'Alice Example', status: 'yes' },
      { email: AGENT, status: 'noreply' },
      { email: 'bob@other.example', name: 'Bob Other', status: 'maybe' },
    ]);
    // 10:00 New York stays 10:00: 15:00Z before 9 March, 14:00Z after; 18 March is excluded.
    expect(occurrences(master, '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z')).toEqual([
      '2025-02-25T15:00:00Z',
      '2025-03-04T15:00:00Z',
      '2025-03-11T14:00:00Z',
      '2025-03-25T14:00:00Z',
      '2025-04-01T14:00:00Z',
    ]);
    expect(moved).toMatchObject({
      recurrenceId: utc('2025-03-25T14:00:00Z'),
      sequence: 1,
      title: 'Weekly sync (afternoon)',
      when: { kind: 'timespan', startTime: utc('2025-03-25T18:00:00Z'), endTime: utc('2025-03-25T18:30:00Z') },
      recurrence: null,
    });
  });

  it('reads an Outlook invite whose TZID is a Windows zone name, with a Teams link and a room', () => {
    const [event] = parsed(fixture('outlook-windows-tz.ics')).events as [ParsedEvent];
    expect(event.when).toEqual({
      kind: 'timespan',
      // 3 November 2025 is the day after the US fall-back: 09:00 PST is 17:00Z.
      startTime: utc('2025-11-03T17:00:00Z'),
      endTime: utc('2025-11-03T18:00:00Z'),
      startTimezone: 'America/Los_Angeles',
      endTimezone: 'America/Los_Angeles',
    });
    expect(event.uid).toBe(
      '040000008200E00074C5B7101A82E00800000000A0B1C2D3E4F5D901000000000000000010000000F1E2D3C4B5A69788',
    );
    expect(event.participants.map((participant) => participant.email)).toEqual([AGENT, 'carol@contoso.example']);
    expect(event.resources).toEqual([{ email: 'room4@contoso.example', name: 'Conf Room 4' }]);
    expect(event.conferencing?.provider).toBe('Microsoft Teams');
    expect(event.visibility).toBe('public');
    expect(event.reminders?.overrides).toEqual([{ reminder_minutes: 15, reminder_method: 'display' }]);
  });

  it('recognises an Outlook display-name TZID by its VTIMEZONE rules (Europe/Berlin in summer)', () => {
    const calendar = parsed(fixture('outlook-display-name-tz.ics'));
    expect(calendar.warnings).toEqual([]);
    expect(calendar.events[0]!.when).toMatchObject({
      startTime: utc('2025-07-15T13:00:00Z'),
      startTimezone: 'Europe/Berlin',
    });
    expect(calendar.events[0]!.organizer).toEqual({ email: 'grete@firma.example', name: 'Grete Muller' });
    expect(calendar.events[0]!.participants[0]!.email).toBe(AGENT);
  });

  it('reads Apple all-day events: a single day recurring yearly and a three-day span', () => {
    const [picnic, offsite] = parsed(fixture('apple-all-day.ics')).events as [ParsedEvent, ParsedEvent];
    expect(picnic.when).toEqual({ kind: 'date', date: '2025-07-04' });
    expect(picnic.busy).toBe(false);
    expect(occurrences(picnic, '2025-01-01T00:00:00Z', '2030-01-01T00:00:00Z')).toEqual([
      '2025-07-04T00:00:00Z',
      '2026-07-04T00:00:00Z',
      '2027-07-04T00:00:00Z',
    ]);
    expect(offsite.when).toEqual({ kind: 'datespan', startDate: '2025-08-01', endDate: '2025-08-03' });
    expect(offsite.visibility).toBe('private');
  });

  it("reads a REPLY with the attendee's answer and comment", () => {
    const calendar = parsed(fixture('google-reply.ics'));
    expect(calendar.method).toBe('REPLY');
    expect(calendar.events[0]!.participants).toEqual([
      { email: 'dana@gmail.example', name: 'Dana Person', status: 'yes', comment: 'Looking forward to it' },
    ]);
  });

  it('reads a CANCEL of a series and of one instance', () => {
    const series = parsed(fixture('google-cancel.ics'));
    expect(series.method).toBe('CANCEL');
    expect(series.events[0]).toMatchObject({ status: 'cancelled', sequence: 2 });
    const instance = parsed(fixture('google-cancel-instance.ics'));
    expect(instance.events[0]).toMatchObject({ status: 'cancelled', recurrenceId: utc('2025-03-04T15:00:00Z') });
  });
});

describe('hostile and malformed iCalendar', () => {
  const wrap = (body: string) =>
    `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nMETHOD:REQUEST\r\n${body}END:VCALENDAR\r\n`;
  const event = (lines: string) => wrap(`BEGIN:VEVENT\r\nUID:u1\r\nDTSTAMP:20250101T000000Z\r\n${lines}END:VEVENT\r\n`);

  it.each([
    ['garbage', 'this is not a calendar', 'not valid iCalendar'],
    ['an empty string', '', 'empty'],
    ['a vCard', 'BEGIN:VCARD\r\nVERSION:4.0\r\nFN:X\r\nEND:VCARD\r\n', 'expected VCALENDAR'],
    ['no event', wrap(''), 'no VEVENT'],
    ['an event without UID', wrap('BEGIN:VEVENT\r\nDTSTART:20250101T100000Z\r\nEND:VEVENT\r\n'), 'no UID'],
    ['a REQUEST without DTSTART', event(''), 'no DTSTART'],
    [
      'DTEND before DTSTART',
      event('DTSTART:20250101T100000Z\r\nDTEND:20250101T090000Z\r\n'),
      'DTEND is before DTSTART',
    ],
    [
      'a rule that never matches (30 February, daily)',
      event('DTSTART:20250101T100000Z\r\nRRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30\r\n'),
      'never matches',
    ],
    ['a secondly rule', event('DTSTART:20250101T100000Z\r\nRRULE:FREQ=SECONDLY\r\n'), 'not supported'],
    ['an hour 25', event('DTSTART:20250101T100000Z\r\nRRULE:FREQ=DAILY;BYHOUR=25\r\n'), 'BYHOUR'],
    ['BYWEEKNO with DAILY', event('DTSTART:20250101T100000Z\r\nRRULE:FREQ=DAILY;BYWEEKNO=60\r\n'), 'BYWEEKNO'],
    [
      'too many recurring events in one message',
      wrap(
        Array.from(
          { length: 51 },
          (_, index) =>
            `BEGIN:VEVENT\r\nUID:s${index}\r\nDTSTAMP:20250101T000000Z\r\nDTSTART:20250101T100000Z\r\nRRULE:FREQ=DAILY;COUNT=2000\r\nEND:VEVENT\r\n`,
        ).join(''),
      ),
      'more than 50 recurring events',
    ],
    ['an unbalanced component', 'BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nEND:VCALENDAR\r\n', 'not valid iCalendar'],
  ])('rejects %s without throwing', (_name, text, words) => {
    const result = parseICalendar(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(words);
  });

  it('rejects oversized input before parsing it', () => {
    const result = parseICalendar(event(`DTSTART:20250101T100000Z\r\nDESCRIPTION:${'x'.repeat(1_100_000)}\r\n`));
    expect(result).toEqual({ ok: false, error: 'the calendar is larger than 1000000 bytes.' });
  });

  it('survives deeply nested components', () => {
    const nested = `BEGIN:VCALENDAR\r\n${'BEGIN:X-A\r\n'.repeat(20_000)}${'END:X-A\r\n'.repeat(20_000)}END:VCALENDAR\r\n`;
    expect(parseICalendar(nested).ok).toBe(false);
  });

  it('reads an unknown TZID without a definition as UTC and says so', () => {
    const result = parsed(
      event('DTSTART;TZID=Somewhere/Else:20250101T100000\r\nDTEND;TZID=Somewhere/Else:20250101T110000\r\n'),
    );
    expect(result.events[0]!.when).toMatchObject({ startTime: utc('2025-01-01T10:00:00Z'), startTimezone: 'UTC' });
    expect(result.warnings.join(' ')).toContain('Somewhere/Else');
  });
});

const base: CalendarEventData = {
  uid: 'evt_1@agents.example',
  sequence: 0,
  when: {
    kind: 'timespan',
    startTime: utc('2025-03-03T14:00:00Z'),
    endTime: utc('2025-03-03T15:00:00Z'),
    startTimezone: 'America/New_York',
    endTimezone: 'America/New_York',
  },
  title: 'Planning, part 1; "draft"',
  description: 'Line one\nLine two, with a comma; and a semicolon',
  location: 'Room 7',
  status: 'confirmed',
  busy: true,
  visibility: 'private',
  organizer: { email: 'agent@agents.example', name: 'Agent Smith' },
  participants: [
    { email: 'dana@gmail.example', name: 'Dana "D" Person', status: 'noreply' },
    { email: 'erin@icloud.example', status: 'yes' },
  ],
  recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20250331T235959Z', 'EXDATE:20250317T130000Z'],
  conferencing: { provider: 'Zoom Meeting', details: { url: 'https://zoom.us/j/123456789' } },
  reminders: null,
  createdAt: utc('2025-02-01T00:00:00Z'),
  updatedAt: utc('2025-02-02T00:00:00Z'),
};

describe('building iTIP messages', () => {
  it('builds a REQUEST that validates and parses back to the same event', () => {
    const text = buildItipRequest([base], NOW);
    expect(validateICalendar(text, 'REQUEST')).toEqual([]);
    expect(text).toContain('DTSTART;TZID=America/New_York:20250303T090000');
    expect(text).toContain('BEGIN:VTIMEZONE\r\nTZID:America/New_York');
    expect(text).toContain('EXDATE;TZID=America/New_York:20250317T090000');
    expect(text.replaceAll('\r\n ', '')).toContain(
      'ATTENDEE;CN=Dana D Person;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:dana@gmail.example',
    );
    const [event] = parsed(text).events as [ParsedEvent];
    expect(event).toMatchObject({
      uid: base.uid,
      sequence: 0,
      when: base.when,
      title: base.title,
      description: base.description,
      location: base.location,
      status: 'confirmed',
      busy: true,
      visibility: 'private',
      organizer: base.organizer,
      participants: [
        { email: 'dana@gmail.example', name: 'Dana D Person', status: 'noreply' },
        { email: 'erin@icloud.example', status: 'yes' },
      ],
      conferencing: base.conferencing,
      dtstamp: NOW.getTime() / 1000,
      createdAt: base.createdAt,
      updatedAt: base.updatedAt,
    });
    // The series is the same series: same occurrences, 17 March excluded, DST respected.
    expect(occurrences(event, '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z')).toEqual(
      occurrences(base, '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z'),
    );
    expect(occurrences(base, '2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z')).toEqual([
      '2025-03-03T14:00:00Z',
      '2025-03-10T13:00:00Z',
      '2025-03-24T13:00:00Z',
      '2025-03-31T13:00:00Z',
    ]);
  });

  it('writes a series master and its moved instance with RECURRENCE-ID', () => {
    const moved: CalendarEventData = {
      ...base,
      recurrence: null,
      recurrenceId: utc('2025-03-10T13:00:00Z'),
      sequence: 1,
      when: { ...base.when, startTime: utc('2025-03-10T18:00:00Z'), endTime: utc('2025-03-10T19:00:00Z') } as EventTime,
    };
    const text = buildItipRequest([base, moved], NOW);
    expect(validateICalendar(text, 'REQUEST')).toEqual([]);
    expect(text).toContain('RECURRENCE-ID;TZID=America/New_York:20250310T090000');
    const events = parsed(text).events;
    expect(events[1]).toMatchObject({
      recurrenceId: utc('2025-03-10T13:00:00Z'),
      when: { startTime: utc('2025-03-10T18:00:00Z') },
      sequence: 1,
    });
  });

  it('builds a CANCEL with STATUS:CANCELLED and the given SEQUENCE', () => {
    const text = buildItipCancel({ ...base, sequence: 3 }, NOW);
    expect(validateICalendar(text, 'CANCEL')).toEqual([]);
    const [event] = parsed(text).events as [ParsedEvent];
    expect(event).toMatchObject({ status: 'cancelled', sequence: 3, uid: base.uid });
    expect(event.participants.map((participant) => participant.email)).toEqual([
      'dana@gmail.example',
      'erin@icloud.example',
    ]);
  });

  it("builds a REPLY carrying one attendee's PARTSTAT", () => {
    for (const [status, partstat] of [
      ['yes', 'ACCEPTED'],
      ['no', 'DECLINED'],
      ['maybe', 'TENTATIVE'],
    ] as const) {
      const text = buildItipReply(
        { ...base, organizer: { email: 'boss@corp.example' } },
        { email: 'agent@agents.example', status, comment: 'Sure' },
        NOW,
      );
      expect(validateICalendar(text, 'REPLY')).toEqual([]);
      expect(text).toContain(`PARTSTAT=${partstat}`);
      expect(text).not.toMatch(/^RRULE:FREQ=WEEKLY/m);
      const [event] = parsed(text).events as [ParsedEvent];
      expect(event.participants).toEqual([{ email: 'agent@agents.example', status, comment: 'Sure' }]);
      expect(event.organizer).toEqual({ email: 'boss@corp.example' });
    }
    expect(itipContentType('REPLY')).toBe('text/calendar; method=REPLY; charset=UTF-8');
  });

  it('builds all-day and UTC events without VTIMEZONE, and a feed with reminders', () => {
    const allDay: CalendarEventData = {
      ...base,
      uid: 'a@x',
      when: { kind: 'datespan', startDate: '2025-08-01', endDate: '2025-08-03' },
      recurrence: ['RRULE:FREQ=YEARLY;COUNT=2'],
      reminders: { use_default: false, overrides: [{ reminder_minutes: 30, reminder_method: 'popup' }] },
    };
    const moment: CalendarEventData = {
      ...base,
      uid: 'b@x',
      when: { kind: 'time', time: utc('2025-06-01T12:00:00Z'), timezone: 'UTC' },
      recurrence: null,
    };
    const text = buildCalendarFeed({ name: 'Agent', timezone: 'UTC', events: [allDay, moment], now: NOW });
    expect(validateICalendar(text, 'PUBLISH')).toEqual([]);
    expect(text).not.toContain('VTIMEZONE');
    expect(text).toContain('DTSTART;VALUE=DATE:20250801\r\nDTEND;VALUE=DATE:20250804');
    expect(text).toContain('DTSTART:20250601T120000Z');
    const events = parsed(text).events;
    expect(events[0]).toMatchObject({
      when: allDay.when,
      recurrence: ['RRULE:FREQ=YEARLY;COUNT=2'],
      reminders: { use_default: false, overrides: [{ reminder_minutes: 30, reminder_method: 'display' }] },
    });
    expect(events[1]!.when).toEqual({ kind: 'time', time: utc('2025-06-01T12:00:00Z'), timezone: 'UTC' });
  });

  it('generates VTIMEZONEs from the tz database that reproduce its offsets', () => {
    for (const zone of ['America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'Asia/Kolkata', 'America/Sao_Paulo']) {
      const event: CalendarEventData = {
        ...base,
        recurrence: null,
        when: {
          kind: 'timespan',
          startTime: utc('2025-01-15T10:00:00Z'),
          endTime: utc('2025-01-15T11:00:00Z'),
          startTimezone: zone,
          endTimezone: zone,
        },
      };
      const text = buildItipRequest([event], NOW);
      expect(validateICalendar(text, 'REQUEST')).toEqual([]);
      // Re-read with the zone's name hidden, so only the generated rules can explain the times.
      const renamed = text
        .replaceAll(`TZID:${zone}`, 'TZID:Custom Zone')
        .replaceAll(`TZID=${zone}:`, 'TZID=Custom Zone:');
      const [reread] = parsed(renamed).events as [ParsedEvent];
      expect(reread.when).toMatchObject({ startTime: event.when.kind === 'timespan' ? event.when.startTime : 0 });
    }
    expect(buildVtimezone('Asia/Tokyo', 2025).toString()).toContain('TZOFFSETTO:+0900');
  });
});

describe('round trips', () => {
  /** The fields an emitted REQUEST must carry unchanged. */
  const essence = (event: ParsedEvent) => ({
    uid: event.uid,
    sequence: event.sequence,
    when: event.when,
    recurrenceId: event.recurrenceId,
    title: event.title,
    description: event.description,
    location: event.location,
    status: event.status,
    busy: event.busy,
    visibility: event.visibility,
    organizer: event.organizer,
    participants: event.participants,
    conferencing: event.conferencing,
  });

  it.each(['google-recurring-dst.ics', 'outlook-windows-tz.ics', 'outlook-display-name-tz.ics', 'apple-all-day.ics'])(
    'what we read from %s, we write as a valid REQUEST that reads back identically',
    (name) => {
      const original = parsed(fixture(name)).events;
      const data = original.map((event) => ({ ...event, when: event.when! }));
      const text = buildItipRequest(data, NOW);
      expect(validateICalendar(text, 'REQUEST')).toEqual([]);
      const reread = parsed(text).events;
      expect(reread.map(essence)).toEqual(original.map(essence));
      for (const [index, event] of original.entries()) {
        if (event.recurrence)
          expect(occurrences(reread[index]!, '2024-01-01T00:00:00Z', '2030-01-01T00:00:00Z')).toEqual(
            occurrences(event, '2024-01-01T00:00:00Z', '2030-01-01T00:00:00Z'),
          );
      }
    },
  );
});

describe('recurrence rules', () => {
  const nine = (zone: string, isoStart: string): EventTime => ({
    kind: 'timespan',
    startTime: utc(isoStart),
    endTime: utc(isoStart) + 3600,
    startTimezone: zone,
    endTimezone: zone,
  });

  it.each([
    [
      'daily at 09:00 New York across the spring change',
      nine('America/New_York', '2024-01-01T14:00:00Z'),
      ['RRULE:FREQ=DAILY'],
      '2025-03-07T00:00:00Z',
      '2025-03-11T00:00:00Z',
      ['2025-03-07T14:00:00Z', '2025-03-08T14:00:00Z', '2025-03-09T13:00:00Z', '2025-03-10T13:00:00Z'],
    ],
    [
      'daily across the autumn change in Berlin',
      nine('Europe/Berlin', '2025-10-24T07:00:00Z'),
      ['RRULE:FREQ=DAILY;COUNT=4'],
      '2025-01-01T00:00:00Z',
      '2026-01-01T00:00:00Z',
      ['2025-10-24T07:00:00Z', '2025-10-25T07:00:00Z', '2025-10-26T08:00:00Z', '2025-10-27T08:00:00Z'],
    ],
    [
      'weekly Mon/Wed/Fri started years ago',
      nine('UTC', '2019-01-07T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR'],
      '2025-06-02T00:00:00Z',
      '2025-06-09T00:00:00Z',
      ['2025-06-02T09:00:00Z', '2025-06-04T09:00:00Z', '2025-06-06T09:00:00Z'],
    ],
    [
      'every other week keeps its phase after a long time',
      nine('UTC', '2020-01-06T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY;INTERVAL=2'],
      '2025-06-01T00:00:00Z',
      '2025-06-30T00:00:00Z',
      ['2025-06-02T09:00:00Z', '2025-06-16T09:00:00Z'],
    ],
    [
      'daily in July only, started in June',
      nine('UTC', '2024-06-04T09:00:00Z'),
      ['RRULE:FREQ=DAILY;BYMONTH=7'],
      '2030-06-28T00:00:00Z',
      '2030-07-03T00:00:00Z',
      ['2030-07-01T09:00:00Z', '2030-07-02T09:00:00Z'],
    ],
    [
      'monthly on the last Friday',
      nine('UTC', '2025-01-31T09:00:00Z'),
      ['RRULE:FREQ=MONTHLY;BYDAY=-1FR;COUNT=3'],
      '2025-01-01T00:00:00Z',
      '2026-01-01T00:00:00Z',
      ['2025-01-31T09:00:00Z', '2025-02-28T09:00:00Z', '2025-03-28T09:00:00Z'],
    ],
    [
      'UNTIL in UTC includes its own instant',
      nine('America/New_York', '2025-03-03T14:00:00Z'),
      ['RRULE:FREQ=WEEKLY;UNTIL=20250317T130000Z'],
      '2025-01-01T00:00:00Z',
      '2026-01-01T00:00:00Z',
      ['2025-03-03T14:00:00Z', '2025-03-10T13:00:00Z', '2025-03-17T13:00:00Z'],
    ],
    [
      'a date-only UNTIL on a timed event',
      nine('UTC', '2025-03-03T09:00:00Z'),
      ['RRULE:FREQ=DAILY;UNTIL=20250305'],
      '2025-01-01T00:00:00Z',
      '2026-01-01T00:00:00Z',
      ['2025-03-03T09:00:00Z', '2025-03-04T09:00:00Z', '2025-03-05T09:00:00Z'],
    ],
    [
      'EXDATE in local time and RDATE',
      nine('America/New_York', '2025-03-03T14:00:00Z'),
      ['RRULE:FREQ=DAILY;COUNT=3', 'EXDATE;TZID=America/New_York:20250304T090000', 'RDATE:20250310T150000Z'],
      '2025-01-01T00:00:00Z',
      '2026-01-01T00:00:00Z',
      ['2025-03-03T14:00:00Z', '2025-03-05T14:00:00Z', '2025-03-10T15:00:00Z'],
    ],
    [
      'an all-day weekly series with a date EXDATE',
      { kind: 'date' as const, date: '2025-06-02' },
      ['RRULE:FREQ=WEEKLY;COUNT=3', 'EXDATE;VALUE=DATE:20250609'],
      '2025-01-01T00:00:00Z',
      '2026-01-01T00:00:00Z',
      ['2025-06-02T00:00:00Z', '2025-06-16T00:00:00Z'],
    ],
    [
      'an event overlapping the window start is included',
      nine('UTC', '2025-06-01T09:00:00Z'),
      ['RRULE:FREQ=DAILY'],
      '2025-06-03T09:30:00Z',
      '2025-06-04T00:00:00Z',
      ['2025-06-03T09:00:00Z'],
    ],
  ])('%s', (_name, when, lines, from, to, expected) => {
    expect(occurrences({ when, recurrence: lines }, from, to)).toEqual(expected);
  });

  it('caps an unbounded rule over a huge window instead of hanging', { timeout: 10_000 }, () => {
    const when = nine('America/New_York', '2000-01-01T14:00:00Z');
    const set = parseRecurrence(['RRULE:FREQ=HOURLY'], when);
    if (!set.ok) throw new Error(set.error);
    const expansion = expandOccurrences(when, set.value, 0, 253_402_300_799);
    expect(expansion.truncated).toBe(true);
    expect(expansion.starts.length).toBeLessThanOrEqual(2_000);
    expect(expansion.starts.length).toBeGreaterThan(0);
    const daily = parseRecurrence(['RRULE:FREQ=DAILY'], when);
    if (!daily.ok) throw new Error(daily.error);
    const wide = expandOccurrences(when, daily.value, 0, 253_402_300_799);
    expect(wide).toMatchObject({ truncated: true });
    expect(wide.starts).toHaveLength(2_000);
  });

  it.each([
    [['RRULE:FREQ=MINUTELY'], 'not supported'],
    [['RRULE:FREQ=DAILY;COUNT=2;UNTIL=20250101T000000Z'], 'both COUNT and UNTIL'],
    [['RRULE:FREQ=WEEKLY;BYMONTHDAY=3'], 'BYMONTHDAY is not allowed'],
    [['RRULE:FREQ=DAILY;BYDAY=1MO'], 'only allowed with FREQ=MONTHLY'],
    [['RRULE:FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=31'], 'never matches'],
    [['RRULE:INTERVAL=2'], 'FREQ'],
    [['RRULE:FREQ=DAILY', 'RRULE:FREQ=WEEKLY'], 'only one RRULE'],
    [['EXRULE:FREQ=DAILY'], 'not a recurrence line'],
    [['EXDATE;TZID=Nowhere/Land:20250101T090000'], 'unknown time zone'],
    [['EXDATE:20250101T090000Z'], 'at least one RRULE'],
  ])('rejects %j', (lines, words) => {
    const result = checkRecurrence(lines, nine('UTC', '2025-01-01T09:00:00Z'));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(words);
  });
});
