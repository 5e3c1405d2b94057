import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { readWhen, shiftTo, toWireWhen, utcRange } from '../../../src/calendar/event-time.js';
import {
  ianaFromTzid,
  normalizeTimeZone,
  offsetAt,
  transitionsBetween,
  zonedWallTimeToEpoch,
} from '../../../src/time-zones.js';
import { utc } from '../../helpers/calendar.js';

const wall = (year: number, month: number, day: number, hour: number, minute = 0) => ({
  year,
  month,
  day,
  hour,
  minute,
  second: 0,
});

function errorOf(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected an AppError');
}

describe('time zones', () => {
  it.each([
    ['America/New_York', 'America/New_York'],
    ['america/new_york', 'America/New_York'],
    ['UTC', 'UTC'],
    ['Europe/Berlin', 'Europe/Berlin'],
    ['Mars/Olympus_Mons', undefined],
    ['EST', undefined],
    ['+05:00', undefined],
    ['', undefined],
  ])('normalizes %s', (input, expected) => {
    expect(normalizeTimeZone(input)).toBe(expected);
  });

  it.each([
    ['America/New_York', 'America/New_York'],
    ['Pacific Standard Time', 'America/Los_Angeles'],
    ['W. Europe Standard Time', 'Europe/Berlin'],
    ['(UTC-05:00) Eastern Standard Time', 'America/New_York'],
    ['/mozilla.org/20050126_1/America/New_York', 'America/New_York'],
    ['/softwarestudio.org/Olson_20011030_5/Europe/Paris', 'Europe/Paris'],
    ['Tokyo Standard Time', 'Asia/Tokyo'],
    ['Customized Time Zone', undefined],
  ])('maps the TZID %s to %s', (tzid, expected) => {
    expect(ianaFromTzid(tzid)).toBe(expected);
  });

  // cal.com-style table: wall-clock times around DST changes and what instant they denote.
  it.each([
    ['ordinary winter time', 'America/New_York', wall(2025, 1, 15, 9), '2025-01-15T14:00:00Z'],
    ['ordinary summer time', 'America/New_York', wall(2025, 7, 15, 9), '2025-07-15T13:00:00Z'],
    [
      'in the spring-forward gap: read with the offset before it',
      'America/New_York',
      wall(2025, 3, 9, 2, 30),
      '2025-03-09T07:30:00Z',
    ],
    [
      'the repeated hour at fall-back: the first one',
      'America/New_York',
      wall(2025, 11, 2, 1, 30),
      '2025-11-02T05:30:00Z',
    ],
    ['southern hemisphere summer', 'Australia/Sydney', wall(2025, 1, 10, 9), '2025-01-09T22:00:00Z'],
    ['half-hour zone', 'Asia/Kolkata', wall(2025, 6, 1, 12), '2025-06-01T06:30:00Z'],
    ['Europe gap', 'Europe/Berlin', wall(2025, 3, 30, 2, 15), '2025-03-30T01:15:00Z'],
  ])('%s', (_name, zone, local, expected) => {
    expect(new Date(zonedWallTimeToEpoch(zone, local)).toISOString()).toBe(expected.replace('Z', '.000Z'));
  });

  it('finds the DST transitions of a year to the second', () => {
    const transitions = transitionsBetween('America/New_York', 2025, 2025);
    expect(transitions.map((transition) => new Date(transition.epochMs).toISOString())).toEqual([
      '2025-03-09T07:00:00.000Z',
      '2025-11-02T06:00:00.000Z',
    ]);
    expect(
      transitions.map((transition) => [transition.offsetFrom / 3_600_000, transition.offsetTo / 3_600_000]),
    ).toEqual([
      [-5, -4],
      [-4, -5],
    ]);
    expect(transitionsBetween('Asia/Tokyo', 2025, 2026)).toEqual([]);
    expect(offsetAt('Asia/Kolkata', Date.UTC(2025, 0, 1))).toBe(5.5 * 3_600_000);
  });
});

describe('event times (the four `when` shapes)', () => {
  it("reads a timespan, defaulting the zones to the calendar's", () => {
    expect(readWhen({ start_time: 100, end_time: 200 }, 'Europe/Paris')).toEqual({
      kind: 'timespan',
      startTime: 100,
      endTime: 200,
      startTimezone: 'Europe/Paris',
      endTimezone: 'Europe/Paris',
    });
    expect(
      readWhen(
        { start_time: 100, end_time: 200, start_timezone: 'america/new_york', end_timezone: 'Europe/London' },
        'UTC',
      ),
    ).toEqual({
      kind: 'timespan',
      startTime: 100,
      endTime: 200,
      startTimezone: 'America/New_York',
      endTimezone: 'Europe/London',
    });
  });

  it('reads time, date and datespan, and writes each back with its object', () => {
    expect(toWireWhen(readWhen({ time: 1_700_000_000, timezone: 'Asia/Tokyo' }, 'UTC'))).toEqual({
      object: 'time',
      time: 1_700_000_000,
      timezone: 'Asia/Tokyo',
    });
    expect(toWireWhen(readWhen({ date: '2025-07-04' }, 'UTC'))).toEqual({ object: 'date', date: '2025-07-04' });
    expect(toWireWhen(readWhen({ start_date: '2025-08-01', end_date: '2025-08-03' }, 'UTC'))).toEqual({
      object: 'datespan',
      start_date: '2025-08-01',
      end_date: '2025-08-03',
    });
    expect(toWireWhen(readWhen({ object: 'timespan', start_time: 5, end_time: 5 }, 'UTC'))).toMatchObject({
      object: 'timespan',
      start_time: 5,
      end_time: 5,
    });
  });

  it("gives all-day events whole UTC days (a datespan's end date is inclusive)", () => {
    expect(utcRange({ kind: 'date', date: '2025-07-04' })).toEqual({
      start: utc('2025-07-04T00:00:00Z'),
      end: utc('2025-07-05T00:00:00Z'),
    });
    expect(utcRange({ kind: 'datespan', startDate: '2025-08-01', endDate: '2025-08-03' })).toEqual({
      start: utc('2025-08-01T00:00:00Z'),
      end: utc('2025-08-04T00:00:00Z'),
    });
    expect(
      shiftTo({ kind: 'datespan', startDate: '2025-08-01', endDate: '2025-08-03' }, utc('2026-08-01T00:00:00Z')),
    ).toEqual({ kind: 'datespan', startDate: '2026-08-01', endDate: '2026-08-03' });
  });

  it.each([
    [{ start_time: 200, end_time: 100 }, 'when.end_time', 'before it starts'],
    [{ start_date: '2025-08-03', end_date: '2025-08-01' }, 'when.end_date', 'before it starts'],
    [
      { start_time: 100, end_time: 200, start_timezone: 'Mars/Olympus_Mons', end_timezone: 'UTC' },
      'when.start_timezone',
      'not an IANA time zone',
    ],
    [{ time: 100, timezone: 'EST5' }, 'when.timezone', 'not an IANA time zone'],
    [{ start_time: 100, end_time: 200, start_timezone: 'UTC' }, 'when.end_timezone', 'together'],
    [{ date: '2025-02-30' }, 'when.date', 'not a date'],
    [{ start_time: 100 }, 'when.end_time', 'required'],
    [{}, 'when', 'give one of'],
    [{ object: 'moment', time: 1 }, 'when', 'unknown object'],
  ])('rejects %j naming %s', (input, field, words) => {
    const error = errorOf(() => readWhen(input, 'UTC'));
    expect(error.code).toBe('invalid_request');
    expect(error.message.startsWith(`${field}:`)).toBe(true);
    expect(error.message).toContain(words);
  });
});
