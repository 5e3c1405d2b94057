/**
 * RFC 5545: "The "DTSTART" property defines the first instance in the recurrence set" (§3.8.5.3) and "The
 * "DTSTART" property value always counts as the first occurrence" of COUNT (§3.3.10), even when the rule itself
 * would not produce it (DTSTART on a Monday, BYDAY=TU,TH). ical.js yields such a DTSTART for some rules (DAILY
 * with BYDAY) and not for others (WEEKLY, MONTHLY, YEARLY: kewisch/ical.js#294); our expansion follows the RFC for
 * every rule, in both of its paths (day arithmetic, ical.js iterator), and every reader (expand_recurring, instance
 * lookup, free/busy, availability) goes through it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventTime } from '../../../src/calendar/event-time.js';
import { expandOccurrences, expandOccurrencesByIterator, parseRecurrence } from '../../../src/calendar/ical.js';
import { isOccurrence, seriesStarts, storedRange } from '../../../src/calendar/recurrence.js';
import type { TestService } from '../../helpers/service.js';
import { iso, nyHour, readStarts, startNewYorkPlanner, utc, zonedHour as hour } from '../../helpers/calendar.js';
const YEARS = [utc('2024-01-01T00:00:00Z'), utc('2027-01-01T00:00:00Z')] as const;

/** The occurrences by both expansion paths, which must agree. */
function expand(when: EventTime, lines: string[], from: number = YEARS[0], to: number = YEARS[1]): string[] {
  const set = parseRecurrence(lines, when);
  if (!set.ok) throw new Error(set.error);
  const fast = expandOccurrences(when, set.value, from, to).starts.map(iso);
  expect(expandOccurrencesByIterator(when, set.value, from, to).starts.map(iso)).toEqual(fast);
  return fast;
}

describe('DTSTART is the first occurrence and counts toward COUNT (RFC 5545 §3.3.10, §3.8.5.3)', () => {
  // Monday 3 March 2025.
  const monday = hour('UTC', '2025-03-03T09:00:00Z');

  it('WEEKLY;BYDAY=TU,TH;COUNT=4 from a Monday: Mon, Tue, Thu, Tue', () => {
    expect(expand(monday, ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4'])).toEqual([
      '2025-03-03T09:00:00Z',
      '2025-03-04T09:00:00Z',
      '2025-03-06T09:00:00Z',
      '2025-03-11T09:00:00Z',
    ]);
  });

  it.each([
    [
      'every other week, Sunday weeks',
      hour('UTC', '2025-03-05T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;WKST=SU;COUNT=3'],
      ['2025-03-05T09:00:00Z', '2025-03-07T09:00:00Z', '2025-03-17T09:00:00Z'],
    ],
    [
      'weekly with UNTIL',
      monday,
      ['RRULE:FREQ=WEEKLY;BYDAY=WE;UNTIL=20250312T235959Z'],
      ['2025-03-03T09:00:00Z', '2025-03-05T09:00:00Z', '2025-03-12T09:00:00Z'],
    ],
    [
      'daily with BYDAY (unchanged: ical.js already did this)',
      hour('UTC', '2025-03-04T09:00:00Z'),
      ['RRULE:FREQ=DAILY;BYDAY=MO,WE;COUNT=3'],
      ['2025-03-04T09:00:00Z', '2025-03-05T09:00:00Z', '2025-03-10T09:00:00Z'],
    ],
    [
      'monthly on the 15th from the 10th',
      hour('UTC', '2025-03-10T09:00:00Z'),
      ['RRULE:FREQ=MONTHLY;BYMONTHDAY=15;COUNT=3'],
      ['2025-03-10T09:00:00Z', '2025-03-15T09:00:00Z', '2025-04-15T09:00:00Z'],
    ],
    [
      'monthly on the first Monday from a second Monday',
      hour('UTC', '2025-03-10T09:00:00Z'),
      ['RRULE:FREQ=MONTHLY;BYDAY=1MO;COUNT=2'],
      ['2025-03-10T09:00:00Z', '2025-04-07T09:00:00Z'],
    ],
    [
      'yearly in June from March',
      hour('UTC', '2025-03-10T09:00:00Z'),
      ['RRULE:FREQ=YEARLY;BYMONTH=6;COUNT=2'],
      ['2025-03-10T09:00:00Z', '2025-06-10T09:00:00Z'],
    ],
    ['COUNT=1 is DTSTART alone', monday, ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=1'], ['2025-03-03T09:00:00Z']],
    [
      'an UNTIL before DTSTART leaves DTSTART alone',
      monday,
      ['RRULE:FREQ=WEEKLY;UNTIL=20250301T000000Z'],
      ['2025-03-03T09:00:00Z'],
    ],
    [
      'an EXDATE removes DTSTART (it still counts)',
      monday,
      ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=3', 'EXDATE:20250303T090000Z'],
      ['2025-03-04T09:00:00Z', '2025-03-06T09:00:00Z'],
    ],
    [
      'an all-day series',
      { kind: 'date', date: '2025-03-03' },
      ['RRULE:FREQ=WEEKLY;BYDAY=SA;COUNT=2'],
      ['2025-03-03T00:00:00Z', '2025-03-08T00:00:00Z'],
    ],
    [
      'New York wall time across the spring change',
      hour('America/New_York', '2025-03-03T14:00:00Z'),
      ['RRULE:FREQ=WEEKLY;BYDAY=TU;COUNT=3'],
      ['2025-03-03T14:00:00Z', '2025-03-04T14:00:00Z', '2025-03-11T13:00:00Z'],
    ],
  ] as const)('%s', (_name, when, lines, expected) => {
    expect(expand(when, [...lines])).toEqual(expected);
  });

  it('an open-ended series shows DTSTART in a window holding it, and not in later windows (fast-forwarded)', () => {
    const lines = ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH'];
    expect(expand(monday, lines, utc('2025-03-01T00:00:00Z'), utc('2025-03-08T00:00:00Z'))).toEqual([
      '2025-03-03T09:00:00Z',
      '2025-03-04T09:00:00Z',
      '2025-03-06T09:00:00Z',
    ]);
    expect(expand(monday, lines, utc('2026-03-01T00:00:00Z'), utc('2026-03-08T00:00:00Z'))).toEqual([
      '2026-03-03T09:00:00Z',
      '2026-03-05T09:00:00Z',
    ]);
  });

  it('the stored range ends with the COUNT-th occurrence, DTSTART included; DTSTART is an instance', () => {
    const set = parseRecurrence(['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4'], monday);
    if (!set.ok) throw new Error(set.error);
    expect(storedRange(monday, set.value)).toEqual({
      rangeStart: utc('2025-03-03T09:00:00Z'),
      rangeEnd: utc('2025-03-11T10:00:00Z'),
    });
    expect(isOccurrence(monday, ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4'], utc('2025-03-03T09:00:00Z'))).toBe(true);
    expect(isOccurrence(monday, ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4'], utc('2025-03-13T09:00:00Z'))).toBe(false);
    expect(
      seriesStarts(
        monday,
        ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4'],
        { start: utc('2025-03-01T00:00:00Z'), end: utc('2025-04-01T00:00:00Z') },
        new Set(),
      ).starts.map(iso),
    ).toEqual(['2025-03-03T09:00:00Z', '2025-03-04T09:00:00Z', '2025-03-06T09:00:00Z', '2025-03-11T09:00:00Z']);
  });
});

describe('every reader of the API shows the DTSTART instance', () => {
  const DOMAIN = 'dtstart.agentpost.localhost';
  const EMAIL = `planner@${DOMAIN}`;
  const WINDOW = { start: utc('2025-03-02T00:00:00Z'), end: utc('2025-03-16T00:00:00Z') };
  let service: TestService;
  let grantId: string;

  beforeAll(async () => {
    ({ service, grantId } = await startNewYorkPlanner(EMAIL, '2025-03-01T12:00:00Z'));
  });
  afterAll(async () => {
    await service?.close();
  });

  it('expand_recurring, the instance id, free/busy and availability agree: Mon, Tue, Thu, Tue', async () => {
    // Monday 3 March 2025, 09:00–10:00 New York (14:00Z); after the 9th, 09:00 is 13:00Z.
    const created = await service.nylas.events.create({
      identifier: grantId,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
      requestBody: {
        title: 'Tuesdays and Thursdays',
        when: nyHour('2025-03-03T14:00:00Z'),
        recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=TU,TH;COUNT=4'],
      },
    });
    const id = created.data.id;
    const expected = ['2025-03-03T14:00:00Z', '2025-03-04T14:00:00Z', '2025-03-06T14:00:00Z', '2025-03-11T13:00:00Z'];

    const read = await readStarts(service, grantId, EMAIL, WINDOW, [1, 2, 4]);
    expect(read.instances).toEqual(expected);
    expect(read.events[0]).toMatchObject({
      id: `${id}_20250303T140000Z`,
      masterEventId: id,
      originalStartTime: utc('2025-03-03T14:00:00Z'),
    });

    const first = await service.nylas.events.find({
      identifier: grantId,
      eventId: `${id}_20250303T140000Z`,
      queryParams: { calendarId: 'primary' },
    });
    expect(first.data.when).toMatchObject({ startTime: utc('2025-03-03T14:00:00Z') });

    expect(read.busy).toEqual(expected);
    // Mondays, Tuesdays and Thursdays at 09:00 in the two weeks, minus the four busy ones.
    expect(read.free).toEqual(['2025-03-10T13:00:00Z', '2025-03-13T13:00:00Z']);

    // Deleting the DTSTART instance excludes it; the series still ends on the 11th (DTSTART counted).
    await service.nylas.events.destroy({
      identifier: grantId,
      eventId: `${id}_20250303T140000Z`,
      queryParams: { calendarId: 'primary', notifyParticipants: false },
    });
    expect((await readStarts(service, grantId, EMAIL, WINDOW, [1, 2, 4])).instances).toEqual(expected.slice(1));
  });
});
