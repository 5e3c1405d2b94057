import { describe, expect, it } from 'vitest';
import type { EventTime } from '../../../src/calendar/event-time.js';
import {
  expandOccurrences,
  expandPrepared,
  ICAL_LIMITS,
  parseICalendar,
  parseRecurrence,
  prepareExpansion,
  requestExpansionBudget,
  SERIES_HORIZON_YEARS,
} from '../../../src/calendar/ical.js';
import { seriesStarts } from '../../../src/calendar/recurrence.js';
import { iso, utc } from '../../helpers/calendar.js';

const wrap = (...lines: string[]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', 'METHOD:REQUEST', ...lines, 'END:VCALENDAR', ''].join(
    '\r\n',
  );
const event = (...lines: string[]) => [
  'BEGIN:VEVENT',
  'UID:u1@example.com',
  'DTSTAMP:20250101T000000Z',
  'ORGANIZER:mailto:o@example.com',
  ...lines,
  'END:VEVENT',
];
const inZone = (zone = 'Custom Zone') =>
  event(`DTSTART;TZID=${zone}:20250601T100000`, `DTEND;TZID=${zone}:20250601T110000`);

/** A VTIMEZONE named `Custom Zone` (a name we do not know) with the given observances. */
const vtimezone = (...observances: string[][]) => [
  'BEGIN:VTIMEZONE',
  'TZID:Custom Zone',
  ...observances.flat(),
  'END:VTIMEZONE',
];
const observance = (kind: 'STANDARD' | 'DAYLIGHT', start: string, from: string, to: string, ...extra: string[]) => [
  `BEGIN:${kind}`,
  `DTSTART:${start}`,
  `TZOFFSETFROM:${from}`,
  `TZOFFSETTO:${to}`,
  ...extra,
  `END:${kind}`,
];

/** Parses and measures; the error when refused. */
function timed(text: string): { ms: number; error: string | undefined; result: ReturnType<typeof parseICalendar> } {
  const started = performance.now();
  const result = parseICalendar(text);
  return { ms: performance.now() - started, error: result.ok ? undefined : result.error, result };
}

describe('hostile VTIMEZONEs', () => {
  it.each(['SECONDLY', 'MINUTELY', 'HOURLY'])(
    'refuses a FREQ=%s observance from 1601 at once (it ran the heap out)',
    (freq) => {
      const { ms, error } = timed(
        wrap(
          ...vtimezone(observance('STANDARD', '16010101T000000', '+0000', '+0100', `RRULE:FREQ=${freq}`)),
          ...inZone(),
        ),
      );
      expect(error).toBe(
        `VTIMEZONE "Custom Zone": a STANDARD RRULE with FREQ=${freq} is refused; observances recur yearly (DAILY at most).`,
      );
      expect(ms).toBeLessThan(250);
    },
  );

  it.each([
    ['+9959', '+0000'],
    ['+0000', '-1801'],
    ['+0000', '+0160'],
    ['+0000', 'nonsense'],
  ])('refuses offsets beyond ±18:00 or malformed (%s → %s), read as written', (from, to) => {
    const { error } = timed(wrap(...vtimezone(observance('STANDARD', '19700101T000000', from, to)), ...inZone()));
    expect(error).toContain('needs TZOFFSETFROM and TZOFFSETTO within ±18:00');
  });

  it('accepts offsets of exactly ±18:00', () => {
    const { result } = timed(
      wrap(...vtimezone(observance('STANDARD', '19700101T000000', '-1800', '+1800')), ...inZone()),
    );
    expect(result.ok && result.value.events[0]!.when).toMatchObject({
      startTime: utc('2025-06-01T10:00:00Z') - 18 * 3600,
    });
  });

  it('expands a daily observance from 1601 only over the years needed, in bounded time', () => {
    // Daily changes back and forth: only 2024–2026 are expanded (about 1,100 changes), not 150,000 from 1601.
    const { ms, result } = timed(
      wrap(...vtimezone(observance('STANDARD', '16010101T000000', '+0000', '+0100', 'RRULE:FREQ=DAILY')), ...inZone()),
    );
    expect(result.ok).toBe(true);
    // Every day at 00:00 the offset becomes +01:00 (all year, as in Lagos): 10:00 local is 09:00 UTC.
    expect(result.ok && result.value.events[0]!.when).toMatchObject({
      startTime: utc('2025-06-01T09:00:00Z'),
      startTimezone: 'Africa/Lagos',
    });
    expect(ms).toBeLessThan(1_000);
  });

  it('refuses a daily observance whose events span centuries (too many changes)', () => {
    const events = [
      ...event('DTSTART;TZID=Custom Zone:19000601T100000'),
      ...event('DTSTART;TZID=Custom Zone:21000601T100000').map((line) => line.replace('UID:u1', 'UID:u2')),
    ];
    const { ms, error } = timed(
      wrap(...vtimezone(observance('STANDARD', '16010101T000000', '+0000', '+0100', 'RRULE:FREQ=DAILY')), ...events),
    );
    expect(error).toBe(
      `VTIMEZONE "Custom Zone" has more than ${ICAL_LIMITS.maxZoneChanges} offset changes in 1899–2101.`,
    );
    expect(ms).toBeLessThan(1_000);
  });

  it('refuses a rule with a huge COUNT from 1601 after a bounded number of steps', () => {
    const { ms, error } = timed(
      wrap(
        ...vtimezone(observance('STANDARD', '16010101T000000', '+0000', '+0100', 'RRULE:FREQ=DAILY;COUNT=2000000000')),
        ...inZone(),
      ),
    );
    expect(error).toBe(`the calendar's VTIMEZONEs take more than ${ICAL_LIMITS.maxZoneSteps} rule steps to expand.`);
    expect(ms).toBeLessThan(1_000);
  });

  it('reads Outlook-style yearly rules from 1601 correctly in any year', () => {
    const zone = vtimezone(
      observance('STANDARD', '16010101T030000', '+0200', '+0100', 'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU'),
      observance('DAYLIGHT', '16010101T020000', '+0100', '+0200', 'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU'),
    );
    for (const [local, expected] of [
      ['20250601T100000', '2025-06-01T08:00:00Z'],
      ['20250115T100000', '2025-01-15T09:00:00Z'],
      ['21500601T100000', '2150-06-01T08:00:00Z'],
      ['19500115T100000', '1950-01-15T09:00:00Z'],
    ] as const) {
      const { result } = timed(wrap(...zone, ...event(`DTSTART;TZID=Custom Zone:${local}`)));
      expect(result.ok && iso((result.value.events[0]!.when as { time: number }).time)).toBe(expected);
    }
  });

  it('refuses too many observances in one VTIMEZONE, and too many VTIMEZONEs', () => {
    const many = Array.from({ length: ICAL_LIMITS.maxObservances + 1 }, (_, index) =>
      observance('STANDARD', `${1970 + (index % 50)}0101T000000`, '+0000', '+0000'),
    );
    expect(timed(wrap(...vtimezone(...many), ...inZone())).error).toBe(
      `VTIMEZONE "Custom Zone" has more than ${ICAL_LIMITS.maxObservances} observances.`,
    );
    const zones = Array.from({ length: ICAL_LIMITS.maxTimeZones + 1 }, (_, index) =>
      vtimezone(observance('STANDARD', '19700101T000000', '+0000', '+0100')).map((line) =>
        line.replace('TZID:Custom Zone', `TZID:Zone ${index}`),
      ),
    ).flat();
    expect(timed(wrap(...zones, ...inZone('Zone 1'))).error).toBe(
      `the calendar has more than ${ICAL_LIMITS.maxTimeZones} VTIMEZONEs.`,
    );
  });
});

describe('structural limits', () => {
  it('refuses more components than allowed, of any kind, before parsing', () => {
    const alarms = Array.from({ length: ICAL_LIMITS.maxComponents }, () => [
      'BEGIN:VALARM',
      'ACTION:DISPLAY',
      'TRIGGER:-PT5M',
      'END:VALARM',
    ]).flat();
    const { ms, error } = timed(wrap(...event('DTSTART:20250601T100000Z', ...alarms)));
    expect(error).toBe(`the calendar has more than ${ICAL_LIMITS.maxComponents} components.`);
    expect(ms).toBeLessThan(250);
  });

  it('refuses more properties than allowed', () => {
    const lines = Array.from({ length: ICAL_LIMITS.maxProperties }, (_, index) => `X-FILLER-${index}:x`);
    expect(timed(wrap(...event('DTSTART:20250601T100000Z', ...lines))).error).toBe(
      `the calendar has more than ${ICAL_LIMITS.maxProperties} properties.`,
    );
  });

  it('counts folded lines as one property', () => {
    const folded = Array.from({ length: ICAL_LIMITS.maxProperties }, () => ' continued').join('\r\n');
    const { result } = timed(wrap(...event('DTSTART:20250601T100000Z', `DESCRIPTION:start\r\n${folded}`)));
    expect(result.ok).toBe(true);
  });

  it.each([
    ['in 2200', 'DTSTART:22000101T100000Z'],
    ['in the year 9999', 'DTSTART:99991231T100000Z'],
    ['in 1601', 'DTSTART:16010101T100000Z'],
    ['ending in 2200', 'DTSTART:21991231T100000Z', 'DTEND:22000101T100000Z'],
  ])('refuses an event %s', (_name, ...lines) => {
    expect(timed(wrap(...event(...lines))).error).toBe('event "u1@example.com" is outside the years 1900–2199.');
  });
});

describe('recurrence under a budget', () => {
  const when: EventTime = {
    kind: 'timespan',
    startTime: utc('2025-01-01T09:00:00Z'),
    endTime: utc('2025-01-01T09:30:00Z'),
    startTimezone: 'UTC',
    endTimezone: 'UTC',
  };
  const horizon = utc(`${2025 + SERIES_HORIZON_YEARS}-01-01T09:00:00Z`);
  const expand = (lines: string[], from: number, to: number) => {
    const set = parseRecurrence(lines, when);
    if (!set.ok) throw new Error(set.error);
    const started = performance.now();
    const expansion = expandOccurrences(when, set.value, from, to);
    return { ...expansion, ms: performance.now() - started };
  };

  it.each([
    ['DAILY;COUNT=2000000000', 'RRULE:FREQ=DAILY;COUNT=2000000000'],
    ['DAILY;UNTIL=99991231', 'RRULE:FREQ=DAILY;UNTIL=99991231T000000Z'],
    ['MONTHLY;BYMONTHDAY=1;COUNT=2000000000', 'RRULE:FREQ=MONTHLY;BYMONTHDAY=1;COUNT=2000000000'],
    ['YEARLY;UNTIL=99991231', 'RRULE:FREQ=YEARLY;UNTIL=99991231T000000Z'],
    ['HOURLY;COUNT=2000000000', 'RRULE:FREQ=HOURLY;COUNT=2000000000'],
  ])('accepts %s and expands it no further than the horizon, in bounded time', (_name, line) => {
    // Whole range, to the year 9999: capped (occurrences, steps) and never past the horizon.
    const all = expand([line], 0, 253_402_300_799);
    expect(all.starts.length).toBeLessThanOrEqual(2_000);
    expect(all.starts.every((start) => start < horizon)).toBe(true);
    expect(all.ms).toBeLessThan(2_000);
    // Past the horizon, nothing at all.
    const beyond = expand([line], horizon, utc('9999-01-01T00:00:00Z'));
    expect(beyond.starts).toEqual([]);
    expect(beyond.ms).toBeLessThan(2_000);
  });

  it('still finds the occurrences just before the horizon', () => {
    const late = expand(['RRULE:FREQ=DAILY;COUNT=2000000000'], horizon - 3 * 86_400, horizon + 3 * 86_400);
    expect(late.starts.map(iso)).toEqual(['2124-12-29T09:00:00Z', '2124-12-30T09:00:00Z', '2124-12-31T09:00:00Z']);
  });

  it('shares one allowance among the series of a request', () => {
    const budget = requestExpansionBudget();
    const set = parseRecurrence(['RRULE:FREQ=HOURLY'], when);
    if (!set.ok) throw new Error(set.error);
    const prepared = prepareExpansion(when, set.value);
    let expanded = 0;
    let series = 0;
    // Each series would give 2,000 occurrences; the allowance (50,000) stops the 26th.
    for (; series < 100; series++) {
      const expansion = expandPrepared(
        prepared,
        utc('2025-01-01T00:00:00Z'),
        utc('2026-01-01T00:00:00Z'),
        undefined,
        budget,
      );
      expanded += expansion.starts.length;
      if (expansion.starts.length === 0) break;
    }
    expect(expanded).toBe(50_000);
    expect(series).toBe(25);
    expect(budget.occurrences).toBe(0);
    // seriesStarts passes the allowance on.
    expect(
      seriesStarts(
        when,
        ['RRULE:FREQ=DAILY'],
        { start: utc('2025-01-01T00:00:00Z'), end: utc('2025-02-01T00:00:00Z') },
        new Set(),
        budget,
      ),
    ).toEqual({ starts: [], truncated: true });
  });
});
