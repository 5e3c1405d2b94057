import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventTime } from '../../../src/calendar/event-time.js';
import { expandOccurrences, expandOccurrencesByIterator, parseRecurrence } from '../../../src/calendar/ical.js';
import { seriesInstances, seriesStarts } from '../../../src/calendar/recurrence.js';
import { epochToWallAsUtc, offsetAt, zonedWallSecondsToUnix, zonedWallTimeToEpoch } from '../../../src/time-zones.js';
import { iso, utc } from '../../helpers/calendar.js';

const DAY = 86_400;
const ZONES = [
  'UTC',
  'America/New_York',
  'Europe/London',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'America/Sao_Paulo',
  'Pacific/Chatham',
];
const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

function bothWays(when: EventTime, lines: string[], from: number, to: number) {
  const set = parseRecurrence(lines, when);
  if (!set.ok) throw new Error(set.error);
  return {
    fast: expandOccurrences(when, set.value, from, to),
    reference: expandOccurrencesByIterator(when, set.value, from, to),
  };
}

const nine = (zone: string, isoStart: string, minutes = 60): EventTime => ({
  kind: 'timespan',
  startTime: utc(isoStart),
  endTime: utc(isoStart) + minutes * 60,
  startTimezone: zone,
  endTimezone: zone,
});

describe('recurrence expansion by day arithmetic', () => {
  const march = ['2025-03-01T00:00:00Z', '2025-06-01T00:00:00Z'] as const;
  it.each([
    // A DTSTART that BYDAY leaves out is the first occurrence all the same, and COUNT counts it (RFC 5545
    // §3.3.10), WEEKLY (which ical.js alone would leave out) as DAILY (which it yields).
    [
      'weekly BYDAY without the start weekday',
      nine('UTC', '2025-03-04T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=3'],
      march,
      ['2025-03-04T09:00:00Z', '2025-03-05T09:00:00Z', '2025-03-07T09:00:00Z'],
    ],
    [
      'daily BYDAY without the start weekday',
      nine('UTC', '2025-03-04T09:00:00Z'),
      ['RRULE:FREQ=DAILY;BYDAY=MO,WE;COUNT=3'],
      march,
      ['2025-03-04T09:00:00Z', '2025-03-05T09:00:00Z', '2025-03-10T09:00:00Z'],
    ],
    [
      'every third day on Mondays and Wednesdays',
      nine('UTC', '2025-03-04T09:00:00Z'),
      ['RRULE:FREQ=DAILY;INTERVAL=3;BYDAY=MO,WE;COUNT=4'],
      march,
      ['2025-03-04T09:00:00Z', '2025-03-10T09:00:00Z', '2025-03-19T09:00:00Z', '2025-03-31T09:00:00Z'],
    ],
    [
      'every other week, weeks starting on Sunday',
      nine('UTC', '2025-03-04T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=SU,TU;WKST=SU;COUNT=4'],
      march,
      ['2025-03-04T09:00:00Z', '2025-03-16T09:00:00Z', '2025-03-18T09:00:00Z', '2025-03-30T09:00:00Z'],
    ],
    [
      'every other week, weeks starting on Monday',
      nine('UTC', '2025-03-04T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=SU,TU;COUNT=4'],
      march,
      ['2025-03-04T09:00:00Z', '2025-03-09T09:00:00Z', '2025-03-18T09:00:00Z', '2025-03-23T09:00:00Z'],
    ],
    [
      'weekdays at 08:30 New York across the spring change, EXDATEs in UTC and local time',
      nine('America/New_York', '2023-01-02T13:30:00Z', 15),
      [
        'RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR',
        'EXDATE:20250310T123000Z',
        'EXDATE;TZID=America/New_York:20250307T083000',
      ],
      ['2025-03-06T00:00:00Z', '2025-03-13T00:00:00Z'],
      ['2025-03-06T13:30:00Z', '2025-03-11T12:30:00Z', '2025-03-12T12:30:00Z'],
    ],
    [
      'an UNTIL before DTSTART gives DTSTART alone',
      nine('UTC', '2025-03-04T09:00:00Z'),
      ['RRULE:FREQ=WEEKLY;UNTIL=20250301T000000Z'],
      march,
      ['2025-03-04T09:00:00Z'],
    ],
  ] as const)('%s', (_name, when, lines, window, expected) => {
    const { fast, reference } = bothWays(when, [...lines], utc(window[0]), utc(window[1]));
    expect(fast.starts.map(iso)).toEqual(expected);
    expect(reference.starts.map(iso)).toEqual(expected);
  });

  it('starts at the window for a series begun long ago, and still caps a window of millennia', () => {
    const when = nine('Europe/London', '1990-01-01T09:00:00Z');
    const { fast } = bothWays(when, ['RRULE:FREQ=DAILY'], utc('2025-03-29T00:00:00Z'), utc('2025-04-01T00:00:00Z'));
    expect(fast.starts.map(iso)).toEqual(['2025-03-29T09:00:00Z', '2025-03-30T08:00:00Z', '2025-03-31T08:00:00Z']);
    const set = parseRecurrence(['RRULE:FREQ=WEEKLY'], when);
    if (!set.ok) throw new Error(set.error);
    const wide = expandOccurrences(when, set.value, 0, 253_402_300_799);
    expect(wide.truncated).toBe(true);
    expect(wide.starts).toHaveLength(2_000);
  });

  it('converts wall seconds exactly as zonedWallTimeToEpoch does, gaps and repeated hours included', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: utc('2020-01-01T00:00:00Z') / 60, max: utc('2030-01-01T00:00:00Z') / 60 }),
        (zone, minute) => {
          const wallSeconds = minute * 60;
          expect(zonedWallSecondsToUnix(zone, wallSeconds)).toBe(
            Math.floor(zonedWallTimeToEpoch(zone, epochToWallAsUtc(wallSeconds * 1000)) / 1000),
          );
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('offsets (memoised per zone) agree with Intl for instants in any order', () => {
    const formatters = new Map<string, Intl.DateTimeFormat>();
    const intlOffset = (zone: string, unix: number) => {
      let formatter = formatters.get(zone);
      if (!formatter)
        formatters.set(
          zone,
          (formatter = new Intl.DateTimeFormat('en-US', {
            timeZone: zone,
            hourCycle: 'h23',
            year: 'numeric',
            month: 'numeric',
            day: 'numeric',
            hour: 'numeric',
            minute: 'numeric',
            second: 'numeric',
          })),
        );
      const parts = Object.fromEntries(
        formatter.formatToParts(new Date(unix * 1000)).map((part) => [part.type, Number(part.value)]),
      );
      return (
        (Date.UTC(parts.year!, parts.month! - 1, parts.day, parts.hour, parts.minute, parts.second) / 1000 - unix) *
        1000
      );
    };
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom(...ZONES),
            fc.integer({ min: utc('2023-01-01T00:00:00Z'), max: utc('2027-01-01T00:00:00Z') }),
          ),
          { minLength: 1, maxLength: 20 },
        ),
        (lookups) => {
          for (const [zone, unix] of lookups) expect(offsetAt(zone, unix * 1000)).toBe(intlOffset(zone, unix));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('property: DAILY and WEEKLY rules by day arithmetic equal the ical.js iterator', () => {
    const rule = fc.record({
      freq: fc.constantFrom('DAILY', 'WEEKLY'),
      interval: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constantFrom(7, 14)),
      byDay: fc.option(fc.uniqueArray(fc.constantFrom(...WEEKDAYS), { minLength: 1, maxLength: 7 }), {
        nil: undefined,
      }),
      weekStart: fc.option(fc.constantFrom('SU', 'MO', 'WE'), { nil: undefined }),
      end: fc.oneof(
        fc.constant({ kind: 'none' as const }),
        fc.record({ kind: fc.constant('count' as const), count: fc.integer({ min: 1, max: 80 }) }),
        fc.record({
          kind: fc.constantFrom('utc' as const, 'date' as const, 'floating' as const),
          days: fc.integer({ min: -3, max: 400 }),
          minutes: fc.integer({ min: 0, max: 1439 }),
        }),
      ),
    });
    const series = fc.record({
      zone: fc.constantFrom(...ZONES),
      allDay: fc.boolean(),
      // Minutes since 2023-01-01 00:00 wall time (gaps and repeated hours included), and the length.
      startMinute: fc.integer({ min: 0, max: 3 * 365 * 1440 }),
      minutes: fc.constantFrom(0, 15, 30, 60, 90, 180, 1440),
      days: fc.integer({ min: 1, max: 3 }),
      rule,
      exdates: fc.array(
        fc.record({ days: fc.integer({ min: 0, max: 500 }), form: fc.constantFrom('utc', 'zoned', 'date') }),
        { maxLength: 3 },
      ),
      rdates: fc.array(fc.integer({ min: -10, max: 500 }), { maxLength: 2 }),
      windowDays: fc.integer({ min: -20, max: 700 }),
      windowLength: fc.integer({ min: 1, max: 60 }),
    });
    fc.assert(
      fc.property(series, (input) => {
        const wallStart = utc('2023-01-01T00:00:00Z') + input.startMinute * 60;
        const start = zonedWallSecondsToUnix(input.zone, wallStart);
        const date = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 10);
        const when: EventTime = input.allDay
          ? input.days === 1
            ? { kind: 'date', date: date(wallStart) }
            : { kind: 'datespan', startDate: date(wallStart), endDate: date(wallStart + (input.days - 1) * DAY) }
          : {
              kind: 'timespan',
              startTime: start,
              endTime: start + input.minutes * 60,
              startTimezone: input.zone,
              endTimezone: input.zone,
            };
        const stamp = (unix: number) =>
          new Date(unix * 1000)
            .toISOString()
            .replace(/[-:]/g, '')
            .replace(/\.\d{3}/, '');
        const { end } = input.rule;
        const parts = [`FREQ=${input.rule.freq}`, `INTERVAL=${input.rule.interval}`];
        if (input.rule.byDay) parts.push(`BYDAY=${input.rule.byDay.join(',')}`);
        if (input.rule.weekStart) parts.push(`WKST=${input.rule.weekStart}`);
        if (end.kind === 'count') parts.push(`COUNT=${end.count}`);
        if (end.kind === 'utc' || end.kind === 'date' || end.kind === 'floating') {
          const until = wallStart + end.days * DAY + end.minutes * 60;
          parts.push(
            `UNTIL=${end.kind === 'utc' ? stamp(until - (wallStart - start)) : end.kind === 'date' ? stamp(until).slice(0, 8) : stamp(until).slice(0, 15)}`,
          );
        }
        const lines = [`RRULE:${parts.join(';')}`];
        for (const exdate of input.exdates) {
          const wall = wallStart + exdate.days * DAY;
          if (exdate.form === 'date') lines.push(`EXDATE;VALUE=DATE:${stamp(wall).slice(0, 8)}`);
          else if (exdate.form === 'zoned' && input.zone !== 'UTC')
            lines.push(`EXDATE;TZID=${input.zone}:${stamp(wall).slice(0, 15)}`);
          else lines.push(`EXDATE:${stamp(zonedWallSecondsToUnix(input.zone, wall))}`);
        }
        for (const days of input.rdates) lines.push(`RDATE:${stamp(start + days * DAY + 3600)}`);
        const set = parseRecurrence(lines, when);
        fc.pre(set.ok);
        if (!set.ok) return;
        const from = start + input.windowDays * DAY;
        const to = from + input.windowLength * DAY;
        const reference = expandOccurrencesByIterator(when, set.value, from, to);
        fc.pre(!reference.truncated);
        expect(expandOccurrences(when, set.value, from, to).starts).toEqual(reference.starts);
      }),
      { numRuns: 1_500 },
    );
  });
});

describe('series instances', () => {
  it('seriesStarts gives the starts of seriesInstances, overrides left out', () => {
    const when = nine('America/New_York', '2025-03-03T14:00:00Z');
    const lines = ['RRULE:FREQ=DAILY;COUNT=10', 'EXDATE:20250305T140000Z'];
    const window = { start: utc('2025-03-04T00:00:00Z'), end: utc('2025-03-12T00:00:00Z') };
    const overridden = new Set([utc('2025-03-06T14:00:00Z')]);
    const instances = seriesInstances('evt', when, lines, window, overridden);
    expect(instances.instances.map((instance) => instance.id)).toEqual([
      'evt_20250304T140000Z',
      'evt_20250307T140000Z',
      'evt_20250308T140000Z',
      'evt_20250309T130000Z',
      'evt_20250310T130000Z',
      'evt_20250311T130000Z',
    ]);
    expect(seriesStarts(when, lines, window, overridden)).toEqual({
      starts: instances.instances.map((instance) => instance.originalStart),
      truncated: false,
    });
  });

  it('reads the lines as stored (JSON text) the same as the list, and a series whose stored lines are unreadable as its first instance only', () => {
    const when = nine('UTC', '2025-03-03T09:00:00Z');
    const window = { start: utc('2025-03-03T00:00:00Z'), end: utc('2025-03-06T00:00:00Z') };
    const lines = ['RRULE:FREQ=DAILY', 'EXDATE:20250304T090000Z'];
    expect(seriesStarts(when, JSON.stringify(lines), window, new Set()).starts.map(iso)).toEqual([
      '2025-03-03T09:00:00Z',
      '2025-03-05T09:00:00Z',
    ]);
    expect(seriesStarts(when, lines, window, new Set())).toEqual(
      seriesStarts(when, JSON.stringify(lines), window, new Set()),
    );
    expect(seriesStarts(when, '{"not":"lines"}', window, new Set()).starts.map(iso)).toEqual(['2025-03-03T09:00:00Z']);
    expect(seriesStarts(when, '["RRULE:FREQ=SOMETIMES"]', window, new Set()).starts.map(iso)).toEqual([
      '2025-03-03T09:00:00Z',
    ]);
  });

  it('a changed series is expanded from its new content, not from what was prepared for the old one', () => {
    const when = nine('UTC', '2025-03-03T09:00:00Z');
    const window = { start: utc('2025-03-03T00:00:00Z'), end: utc('2025-03-10T00:00:00Z') };
    expect(seriesStarts(when, ['RRULE:FREQ=DAILY'], window, new Set()).starts).toHaveLength(7);
    expect(seriesStarts(when, ['RRULE:FREQ=DAILY', 'EXDATE:20250304T090000Z'], window, new Set()).starts).toHaveLength(
      6,
    );
    const later: EventTime = {
      kind: 'timespan',
      startTime: utc('2025-03-03T10:00:00Z'),
      endTime: utc('2025-03-03T11:00:00Z'),
      startTimezone: 'UTC',
      endTimezone: 'UTC',
    };
    expect(seriesStarts(later, ['RRULE:FREQ=DAILY'], window, new Set()).starts[0]).toBe(utc('2025-03-03T10:00:00Z'));
    expect(seriesStarts(when, ['RRULE:FREQ=DAILY'], window, new Set()).starts).toHaveLength(7);
  });
});
