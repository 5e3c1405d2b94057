import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allDayInterval,
  checkBooking,
  computeAvailability,
  freeBusy,
  isBookable,
  prepareParticipant,
  roundRobinOrder,
  wallTimeToInstant,
  type AvailabilityParticipant,
  type AvailabilityQuery,
  type OpenHoursRule,
} from '../../../src/calendar/availability.js';
import { normaliseReasons, oracleAvailability } from './availability-oracle.js';

/** Unix seconds of an ISO instant. */
const at = (iso: string) => Date.parse(iso) / 1000;
/** ISO instants of slot starts, for readable expectations. */
const starts = (query: AvailabilityQuery) =>
  computeAvailability(query).timeSlots.map((slot) => new Date(slot.startTime * 1000).toISOString().slice(0, 16) + 'Z');
const EVERY_DAY = [0, 1, 2, 3, 4, 5, 6];
const WEEKDAYS = [1, 2, 3, 4, 5];
const rule = (timezone: string, start: string, end: string, days = EVERY_DAY, exdates?: string[]): OpenHoursRule => ({
  days,
  timezone,
  start,
  end,
  ...(exdates ? { exdates } : {}),
});
const person = (email: string, extra: Partial<AvailabilityParticipant> = {}): AvailabilityParticipant => ({
  email,
  busy: [],
  ...extra,
});

describe('availability across daylight-saving changes', () => {
  it('America/New_York spring forward: no slot starts in the skipped 2:00 hour', () => {
    // Sunday 2025-03-09: 2:00 EST becomes 3:00 EDT at 07:00Z. Open 0:00-5:00 local is 4 real hours.
    const query: AvailabilityQuery = {
      startTime: at('2025-03-08T00:00:00Z'),
      endTime: at('2025-03-11T00:00:00Z'),
      durationMinutes: 60,
      intervalMinutes: 60,
      participants: [person('a@x.test', { openHours: [rule('America/New_York', '0:00', '5:00', [0])] })],
    };
    // 0:00 EST, 1:00 EST, (2:00 does not exist), 3:00 EDT, 4:00 EDT.
    expect(starts(query)).toEqual(['2025-03-09T05:00Z', '2025-03-09T06:00Z', '2025-03-09T07:00Z', '2025-03-09T08:00Z']);
    // Half-hour grid: 1:30 EST is followed directly by 3:00 EDT.
    expect(starts({ ...query, durationMinutes: 30, intervalMinutes: 30 }).slice(2, 6)).toEqual([
      '2025-03-09T06:00Z',
      '2025-03-09T06:30Z',
      '2025-03-09T07:00Z',
      '2025-03-09T07:30Z',
    ]);
  });

  it('America/New_York fall back: the repeated 1:00 hour gives each grid time once, and is open twice', () => {
    // Sunday 2025-11-02: 2:00 EDT becomes 1:00 EST at 06:00Z; 1:00-2:00 local happens twice.
    const query: AvailabilityQuery = {
      startTime: at('2025-11-01T00:00:00Z'),
      endTime: at('2025-11-04T00:00:00Z'),
      durationMinutes: 60,
      intervalMinutes: 60,
      participants: [person('a@x.test', { openHours: [rule('America/New_York', '0:00', '3:00', [0])] })],
    };
    // 0:00 EDT, 1:00 EDT, (1:00 EST again: skipped), 2:00 EST (ends 3:00 EST).
    expect(starts(query)).toEqual(['2025-11-02T04:00Z', '2025-11-02T05:00Z', '2025-11-02T07:00Z']);
    // The open time is four real hours: a two-hour meeting fits from 1:00 EDT to 2:00 EST.
    expect(starts({ ...query, durationMinutes: 120, intervalMinutes: 60 })).toEqual([
      '2025-11-02T04:00Z',
      '2025-11-02T05:00Z',
    ]);
    // A 30-minute grid: 0:00, 0:30, 1:00, 1:30 EDT, then 2:00 and 2:30 EST; 1:00 and 1:30 EST are not repeated.
    expect(starts({ ...query, durationMinutes: 30, intervalMinutes: 30 })).toEqual([
      '2025-11-02T04:00Z',
      '2025-11-02T04:30Z',
      '2025-11-02T05:00Z',
      '2025-11-02T05:30Z',
      '2025-11-02T07:00Z',
      '2025-11-02T07:30Z',
    ]);
  });

  it('Europe/London both changes, and 9:00 local moving from 09:00Z to 08:00Z over a weekend', () => {
    // Sunday 2025-03-30: 1:00 GMT becomes 2:00 BST at 01:00Z.
    const spring: AvailabilityQuery = {
      startTime: at('2025-03-29T22:00:00Z'),
      endTime: at('2025-03-30T06:00:00Z'),
      durationMinutes: 30,
      intervalMinutes: 30,
      participants: [person('a@x.test', { openHours: [rule('Europe/London', '0:00', '3:00', [0])] })],
    };
    expect(starts(spring)).toEqual([
      '2025-03-30T00:00Z',
      '2025-03-30T00:30Z',
      '2025-03-30T01:00Z',
      '2025-03-30T01:30Z',
    ]);
    // Sunday 2025-10-26: 2:00 BST becomes 1:00 GMT at 01:00Z.
    const autumn: AvailabilityQuery = {
      ...spring,
      startTime: at('2025-10-25T20:00:00Z'),
      endTime: at('2025-10-26T06:00:00Z'),
    };
    expect(starts(autumn)).toEqual([
      '2025-10-25T23:00Z',
      '2025-10-25T23:30Z',
      '2025-10-26T00:00Z',
      '2025-10-26T00:30Z',
      '2025-10-26T02:00Z',
      '2025-10-26T02:30Z',
    ]);
    // Working hours across the spring change: Friday 9:00 GMT = 09:00Z, Monday 9:00 BST = 08:00Z.
    const week: AvailabilityQuery = {
      startTime: at('2025-03-28T00:00:00Z'),
      endTime: at('2025-04-01T00:00:00Z'),
      durationMinutes: 60,
      intervalMinutes: 240,
      participants: [person('a@x.test', { openHours: [rule('Europe/London', '9:00', '17:00', WEEKDAYS)] })],
    };
    expect(starts(week)).toEqual(['2025-03-28T09:00Z', '2025-03-28T13:00Z', '2025-03-31T08:00Z', '2025-03-31T12:00Z']);
  });

  it('Australia/Lord_Howe: the half-hour shifts in April and October keep the grid on local time', () => {
    // Sunday 2025-04-06: 2:00 (+11) becomes 1:30 (+10:30) at 15:00Z on the 5th; 1:30-2:00 local repeats.
    const april: AvailabilityQuery = {
      startTime: at('2025-04-05T00:00:00Z'),
      endTime: at('2025-04-06T12:00:00Z'),
      durationMinutes: 30,
      intervalMinutes: 30,
      participants: [person('a@x.test', { openHours: [rule('Australia/Lord_Howe', '0:00', '4:00', [0])] })],
    };
    expect(starts(april)).toEqual([
      '2025-04-05T13:00Z', // 0:00 (+11)
      '2025-04-05T13:30Z',
      '2025-04-05T14:00Z',
      '2025-04-05T14:30Z', // 1:30 (+11), first time
      '2025-04-05T15:30Z', // 2:00 (+10:30); 1:30 (+10:30) at 15:00Z is the repeat
      '2025-04-05T16:00Z',
      '2025-04-05T16:30Z',
      '2025-04-05T17:00Z', // 3:30, ends 4:00 (+10:30) = 17:30Z
    ]);
    // Hourly grid over the whole day: local hours stay on the hour, 90 real minutes apart at the change.
    const hourly: AvailabilityQuery = {
      startTime: at('2025-04-05T12:00:00Z'),
      endTime: at('2025-04-05T20:00:00Z'),
      durationMinutes: 60,
      intervalMinutes: 60,
      participants: [person('a@x.test', { openHours: [rule('Australia/Lord_Howe', '0:00', '24:00')] })],
    };
    expect(starts(hourly)).toEqual([
      '2025-04-05T12:00Z',
      '2025-04-05T13:00Z',
      '2025-04-05T14:00Z',
      '2025-04-05T15:30Z',
      '2025-04-05T16:30Z',
      '2025-04-05T17:30Z',
      '2025-04-05T18:30Z',
    ]);
    // Sunday 2025-10-05: 2:00 (+10:30) becomes 2:30 (+11) at 15:30Z on the 4th; 2:00-2:30 local is skipped.
    const october: AvailabilityQuery = {
      ...april,
      startTime: at('2025-10-04T00:00:00Z'),
      endTime: at('2025-10-05T12:00:00Z'),
    };
    october.participants = [person('a@x.test', { openHours: [rule('Australia/Lord_Howe', '0:00', '4:00', [0])] })];
    expect(starts(october)).toEqual([
      '2025-10-04T13:30Z',
      '2025-10-04T14:00Z',
      '2025-10-04T14:30Z',
      '2025-10-04T15:00Z',
      '2025-10-04T15:30Z',
      '2025-10-04T16:00Z',
      '2025-10-04T16:30Z',
    ]);
    expect(starts({ ...october, durationMinutes: 60, intervalMinutes: 60 })).toEqual([
      '2025-10-04T13:30Z',
      '2025-10-04T14:30Z',
      '2025-10-04T16:00Z',
    ]);
  });

  it('maps wall times to instants: a skipped time to the end of the gap, a repeated one to its first occurrence', () => {
    expect(wallTimeToInstant('2025-03-09', '2:30', 'America/New_York')).toBe(at('2025-03-09T07:00:00Z'));
    expect(wallTimeToInstant('2025-11-02', '1:30', 'America/New_York')).toBe(at('2025-11-02T05:30:00Z'));
    expect(wallTimeToInstant('2025-04-06', '1:45', 'Australia/Lord_Howe')).toBe(at('2025-04-05T14:45:00Z'));
  });

  it('a change just past the computed range does not shift the times before it (London springs forward 2025-03-30T01:00Z)', () => {
    // Each of these looks at offsets up to two days past its date; the change lies a few hours beyond that.
    expect(allDayInterval('2025-03-27', '2025-03-27', 'Europe/London')).toEqual({
      start: at('2025-03-27T00:00:00Z'),
      end: at('2025-03-28T00:00:00Z'),
    });
    expect(wallTimeToInstant('2025-03-27', '9:00', 'Europe/London')).toBe(at('2025-03-27T09:00:00Z'));
    const query: AvailabilityQuery = {
      startTime: at('2025-03-26T00:00:00Z'),
      endTime: at('2025-03-27T23:00:00Z'),
      durationMinutes: 60,
      intervalMinutes: 60,
      participants: [person('a@x.test', { openHours: [rule('Europe/London', '9:00', '11:00')] })],
    };
    expect(starts(query)).toEqual(['2025-03-26T09:00Z', '2025-03-26T10:00Z', '2025-03-27T09:00Z', '2025-03-27T10:00Z']);
    expect(oracleAvailability(query).timeSlots).toEqual(computeAvailability(query).timeSlots);
  });
});

describe('participants in three time zones', () => {
  // Wednesday 2025-01-15 (no DST anywhere): New York 8:00-12:00 EST = 13-17Z, London 9:00-17:00 GMT = 9-17Z,
  // Kolkata 18:00-23:30 IST = 12:30-18Z. Together: 13:00-17:00Z.
  const newYork = () => person('ny@x.test', { openHours: [rule('America/New_York', '8:00', '12:00', WEEKDAYS)] });
  const london = () =>
    person('ldn@x.test', {
      openHours: [rule('Europe/London', '9:00', '17:00', WEEKDAYS)],
      busy: [{ start: at('2025-01-15T14:15:00Z'), end: at('2025-01-15T14:45:00Z'), eventId: 'ldn-1' }],
    });
  const kolkata = () =>
    person('kol@x.test', {
      openHours: [rule('Asia/Kolkata', '18:00', '23:30', WEEKDAYS)],
      busy: [{ start: at('2025-01-15T15:30:00Z'), end: at('2025-01-15T16:00:00Z'), eventId: 'kol-1' }],
    });
  const base = {
    startTime: at('2025-01-15T00:00:00Z'),
    endTime: at('2025-01-16T00:00:00Z'),
    durationMinutes: 60,
    intervalMinutes: 60,
  };

  it('collective: only hours where all three are open and free', () => {
    const result = computeAvailability({ ...base, participants: [newYork(), london(), kolkata()], explain: true });
    expect(result.timeSlots).toEqual([
      {
        emails: ['ny@x.test', 'ldn@x.test', 'kol@x.test'],
        startTime: at('2025-01-15T13:00:00Z'),
        endTime: at('2025-01-15T14:00:00Z'),
      },
      {
        emails: ['ny@x.test', 'ldn@x.test', 'kol@x.test'],
        startTime: at('2025-01-15T16:00:00Z'),
        endTime: at('2025-01-15T17:00:00Z'),
      },
    ]);
    expect(result.order).toEqual([]);
    expect(result.explanations).toEqual([
      {
        startTime: at('2025-01-15T14:00:00Z'),
        endTime: at('2025-01-15T15:00:00Z'),
        reasons: [{ type: 'busy', email: 'ldn@x.test', eventIds: ['ldn-1'] }],
      },
      {
        startTime: at('2025-01-15T15:00:00Z'),
        endTime: at('2025-01-15T16:00:00Z'),
        reasons: [{ type: 'busy', email: 'kol@x.test', eventIds: ['kol-1'] }],
      },
    ]);
  });

  it('the grid runs in the time zone of the first participant: round_to 60 in Kolkata lands on IST hours', () => {
    // The shared period starts 13:00Z = 18:30 IST; the next whole IST hour is 19:00 = 13:30Z, then every hour.
    const result = computeAvailability({
      ...base,
      durationMinutes: 30,
      roundTo: 60,
      participants: [kolkata(), newYork(), london()],
      explain: true,
    });
    expect(result.timeSlots.map((slot) => slot.startTime)).toEqual([
      at('2025-01-15T13:30:00Z'),
      at('2025-01-15T16:30:00Z'),
    ]);
    expect(result.explanations).toEqual([
      {
        startTime: at('2025-01-15T14:30:00Z'),
        endTime: at('2025-01-15T15:00:00Z'),
        reasons: [{ type: 'busy', email: 'ldn@x.test', eventIds: ['ldn-1'] }],
      },
      {
        startTime: at('2025-01-15T15:30:00Z'),
        endTime: at('2025-01-15T16:00:00Z'),
        reasons: [{ type: 'busy', email: 'kol@x.test', eventIds: ['kol-1'] }],
      },
    ]);
    // With the New Yorker first the grid is on New York hours (13:00Z, 14:00Z, …).
    const newYorkFirst = computeAvailability({
      ...base,
      durationMinutes: 30,
      roundTo: 60,
      participants: [newYork(), kolkata(), london()],
    });
    expect(newYorkFirst.timeSlots.map((slot) => slot.startTime)).toEqual([
      at('2025-01-15T13:00:00Z'),
      at('2025-01-15T15:00:00Z'),
      at('2025-01-15T16:00:00Z'),
    ]);
  });
});

describe('all-day events, buffers, round_to and intervals', () => {
  it('an all-day event blocks the local day of its calendar time zone', () => {
    const day = allDayInterval('2025-01-15', '2025-01-15', 'Asia/Tokyo');
    expect(day).toEqual({ start: at('2025-01-14T15:00:00Z'), end: at('2025-01-15T15:00:00Z') });
    // A datespan over the New York spring change is 47 hours long.
    expect(allDayInterval('2025-03-08', '2025-03-09', 'America/New_York')).toEqual({
      start: at('2025-03-08T05:00:00Z'),
      end: at('2025-03-10T04:00:00Z'),
    });
    const query: AvailabilityQuery = {
      startTime: at('2025-01-14T12:00:00Z'),
      endTime: at('2025-01-14T18:00:00Z'),
      durationMinutes: 60,
      participants: [person('a@x.test', { busy: [{ ...day, eventId: 'holiday' }] })],
      explain: true,
    };
    const result = computeAvailability(query);
    expect(starts(query)).toEqual(['2025-01-14T12:00Z', '2025-01-14T13:00Z', '2025-01-14T14:00Z']);
    expect(result.explanations!.map((explanation) => explanation.reasons)).toEqual([
      [{ type: 'busy', email: 'a@x.test', eventIds: ['holiday'] }],
      [{ type: 'busy', email: 'a@x.test', eventIds: ['holiday'] }],
      [{ type: 'busy', email: 'a@x.test', eventIds: ['holiday'] }],
    ]);
  });

  it('buffers reach into the window from events outside it, and the booking check agrees', () => {
    // Event before the window ends 09:55 (+15 after = 10:10); event after the window starts 12:05 (-10 before = 11:55).
    const participant = person('a@x.test', {
      busy: [
        { start: at('2025-01-15T09:00:00Z'), end: at('2025-01-15T09:55:00Z'), eventId: 'early' },
        { start: at('2025-01-15T12:05:00Z'), end: at('2025-01-15T13:00:00Z'), eventId: 'late' },
      ],
    });
    const query: AvailabilityQuery = {
      startTime: at('2025-01-15T10:00:00Z'),
      endTime: at('2025-01-15T12:00:00Z'),
      durationMinutes: 30,
      intervalMinutes: 15,
      buffer: { before: 10, after: 15 },
      participants: [participant],
      explain: true,
    };
    const result = computeAvailability(query);
    expect(starts(query)).toEqual([
      '2025-01-15T10:15Z',
      '2025-01-15T10:30Z',
      '2025-01-15T10:45Z',
      '2025-01-15T11:00Z',
      '2025-01-15T11:15Z',
    ]);
    expect(result.explanations).toEqual([
      {
        startTime: at('2025-01-15T10:00:00Z'),
        endTime: at('2025-01-15T10:30:00Z'),
        reasons: [{ type: 'buffer', email: 'a@x.test', eventIds: ['early'] }],
      },
      {
        startTime: at('2025-01-15T11:30:00Z'),
        endTime: at('2025-01-15T12:00:00Z'),
        reasons: [{ type: 'buffer', email: 'a@x.test', eventIds: ['late'] }],
      },
      {
        startTime: at('2025-01-15T11:45:00Z'),
        endTime: at('2025-01-15T12:15:00Z'),
        reasons: [{ type: 'past_window' }, { type: 'busy', email: 'a@x.test', eventIds: ['late'] }],
      },
    ]);
    const booking = checkBooking(
      { participants: [participant], buffer: query.buffer },
      at('2025-01-15T10:00:00Z'),
      at('2025-01-15T10:30:00Z'),
    );
    expect(booking).toEqual({
      bookable: false,
      participants: [
        { email: 'a@x.test', bookable: false, reasons: [{ type: 'buffer', email: 'a@x.test', eventIds: ['early'] }] },
      ],
    });
    expect(
      checkBooking(
        { participants: [participant], buffer: query.buffer },
        at('2025-01-15T10:10:00Z'),
        at('2025-01-15T11:55:00Z'),
      ).bookable,
    ).toBe(true);
  });

  it('buffers do not shrink open hours', () => {
    const query: AvailabilityQuery = {
      startTime: at('2025-01-15T00:00:00Z'),
      endTime: at('2025-01-16T00:00:00Z'),
      durationMinutes: 60,
      intervalMinutes: 60,
      buffer: { before: 30, after: 30 },
      participants: [person('a@x.test', { openHours: [rule('UTC', '9:00', '12:00')] })],
    };
    expect(starts(query)).toEqual(['2025-01-15T09:00Z', '2025-01-15T10:00Z', '2025-01-15T11:00Z']);
  });

  it('round_to moves the start of the grid to the next multiple of the local minute of day', () => {
    const query: AvailabilityQuery = {
      startTime: at('2025-01-15T10:07:00Z'),
      endTime: at('2025-01-15T12:00:00Z'),
      durationMinutes: 30,
      intervalMinutes: 30,
      participants: [person('a@x.test')],
    };
    expect(starts(query)[0]).toBe('2025-01-15T10:15Z'); // default 15
    expect(starts({ ...query, roundTo: 60 })).toEqual(['2025-01-15T11:00Z', '2025-01-15T11:30Z']);
    expect(starts({ ...query, roundTo: 25 })[0]).toBe('2025-01-15T10:25Z'); // minute 625 = 25 × 25
    // In Kathmandu (+5:45) a whole local hour is at :15 UTC.
    const kathmandu = {
      ...query,
      roundTo: 60,
      participants: [person('a@x.test', { openHours: [rule('Asia/Kathmandu', '0:00', '24:00')] })],
    };
    expect(starts(kathmandu)).toEqual(['2025-01-15T10:15Z', '2025-01-15T10:45Z', '2025-01-15T11:15Z']);
  });

  it('intervals that do not divide the hour step from the start of open hours, and busy time does not move the grid', () => {
    const open = [rule('UTC', '9:00', '12:00')];
    const query: AvailabilityQuery = {
      startTime: at('2025-01-15T00:00:00Z'),
      endTime: at('2025-01-16T00:00:00Z'),
      durationMinutes: 25,
      intervalMinutes: 25,
      participants: [person('a@x.test', { openHours: open })],
    };
    expect(starts(query)).toEqual([
      '2025-01-15T09:00Z',
      '2025-01-15T09:25Z',
      '2025-01-15T09:50Z',
      '2025-01-15T10:15Z',
      '2025-01-15T10:40Z',
      '2025-01-15T11:05Z',
      '2025-01-15T11:30Z',
    ]);
    expect(
      starts({
        ...query,
        durationMinutes: 30,
        intervalMinutes: 7,
        participants: [person('a@x.test', { openHours: [rule('UTC', '9:00', '10:00')] })],
      }),
    ).toEqual([
      '2025-01-15T09:00Z',
      '2025-01-15T09:07Z',
      '2025-01-15T09:14Z',
      '2025-01-15T09:21Z',
      '2025-01-15T09:28Z',
    ]);
    // 45-minute grid from 9:00: 9:00, 9:45, 10:30, 11:15. A meeting until 9:50 removes 9:00 and 9:45 only.
    const busy = [{ start: at('2025-01-15T09:10:00Z'), end: at('2025-01-15T09:50:00Z'), eventId: 'standup' }];
    expect(
      starts({
        ...query,
        durationMinutes: 45,
        intervalMinutes: 45,
        participants: [person('a@x.test', { openHours: open, busy })],
      }),
    ).toEqual(['2025-01-15T10:30Z', '2025-01-15T11:15Z']);
  });

  it('exdates close a date, specific times replace a date, and default open hours apply to participants without their own', () => {
    const query: AvailabilityQuery = {
      startTime: at('2025-01-13T00:00:00Z'), // Monday
      endTime: at('2025-01-16T00:00:00Z'),
      durationMinutes: 60,
      intervalMinutes: 60,
      defaultOpenHours: [rule('UTC', '9:00', '11:00', WEEKDAYS, ['2025-01-14'])],
      participants: [
        person('a@x.test'),
        person('b@x.test', {
          specificTimeAvailability: [{ date: '2025-01-15', start: '10:00', end: '12:00', timezone: 'UTC' }],
        }),
      ],
    };
    // Monday 9, 10; Tuesday excluded; Wednesday: a is open 9-11, b only 10-12, so 10:00.
    expect(starts(query)).toEqual(['2025-01-13T09:00Z', '2025-01-13T10:00Z', '2025-01-15T10:00Z']);
    const only = {
      ...query,
      participants: [
        person('b@x.test', {
          onlySpecificTimeAvailability: true,
          specificTimeAvailability: [{ date: '2025-01-15', start: '10:00', end: '12:00' }],
        }),
      ],
    };
    expect(starts(only)).toEqual(['2025-01-15T10:00Z', '2025-01-15T11:00Z']);
  });
});

describe('round-robin', () => {
  const window = {
    startTime: at('2025-01-15T09:00:00Z'),
    endTime: at('2025-01-15T12:00:00Z'),
    durationMinutes: 60,
    intervalMinutes: 60,
  };
  const busyAllMorning = [{ start: at('2025-01-15T09:00:00Z'), end: at('2025-01-15T12:00:00Z'), eventId: 'x' }];

  it('orders never-booked participants first (alphabetically), then the longest ago booked', () => {
    expect(
      roundRobinOrder([
        { email: 'a@x', lastBookedAt: 100 },
        { email: 'd@x' },
        { email: 'c@x', lastBookedAt: 50 },
        { email: 'b@x', lastBookedAt: null },
      ]),
    ).toEqual(['b@x', 'd@x', 'c@x', 'a@x']);
  });

  it('max-availability offers every slot someone can take, emails in round-robin order', () => {
    const result = computeAvailability({
      ...window,
      method: 'max-availability',
      participants: [
        person('a@x', { lastBookedAt: 100 }),
        person('b@x', { busy: [{ start: at('2025-01-15T10:00:00Z'), end: at('2025-01-15T11:00:00Z') }] }),
      ],
    });
    expect(result.order).toEqual(['b@x', 'a@x']);
    expect(result.timeSlots.map((slot) => slot.emails)).toEqual([['b@x', 'a@x'], ['a@x'], ['b@x', 'a@x']]);
  });

  it('max-fairness keeps the half booked least recently, and falls back to everyone when that half has no slot', () => {
    const participants = [
      person('a@x', { lastBookedAt: 300 }),
      person('b@x', { lastBookedAt: 200 }),
      person('c@x', { lastBookedAt: 100 }),
      person('d@x'),
    ];
    const fair = computeAvailability({ ...window, method: 'max-fairness', participants });
    expect(fair.order).toEqual(['d@x', 'c@x', 'b@x', 'a@x']);
    expect(fair.timeSlots.map((slot) => slot.emails)).toEqual([
      ['d@x', 'c@x'],
      ['d@x', 'c@x'],
      ['d@x', 'c@x'],
    ]);
    const busyTop = participants.map((participant) =>
      participant.email === 'd@x' || participant.email === 'c@x'
        ? { ...participant, busy: busyAllMorning }
        : participant,
    );
    const fallback = computeAvailability({ ...window, method: 'max-fairness', participants: busyTop });
    expect(fallback.timeSlots.map((slot) => slot.emails)).toEqual([
      ['b@x', 'a@x'],
      ['b@x', 'a@x'],
      ['b@x', 'a@x'],
    ]);
  });
});

describe('input order', () => {
  it('unsorted busy intervals, whole-second or not, give the same slots as sorted ones', () => {
    const base = at('2025-01-15T00:00:00Z');
    const busy = Array.from({ length: 60 }, (_, index) => ({
      start: base + ((index * 7919) % 1440) * 60,
      end: base + (((index * 7919) % 1440) + 20) * 60,
      eventId: `e${index}`,
    }));
    const query = (intervals: typeof busy): AvailabilityQuery => ({
      startTime: base,
      endTime: base + 86_400,
      durationMinutes: 30,
      intervalMinutes: 10,
      participants: [person('a@x.test', { busy: intervals })],
      explain: true,
    });
    const sorted = computeAvailability(query([...busy].sort((a, b) => a.start - b.start)));
    expect(sorted.timeSlots.length).toBeGreaterThan(0);
    expect(computeAvailability(query(busy)).timeSlots).toEqual(sorted.timeSlots);
    const fractional = busy.map((interval) => ({ ...interval, start: interval.start + 0.5 }));
    const fractionalSorted = computeAvailability(query([...fractional].sort((a, b) => a.start - b.start)));
    expect(computeAvailability(query(fractional)).timeSlots).toEqual(fractionalSorted.timeSlots);
  });
});

describe('free/busy', () => {
  it('merges overlapping and touching busy blocks and clips them to the window', () => {
    const blocks = freeBusy({ startTime: 1000, endTime: 5000 }, [
      { start: 500, end: 1500 },
      { start: 1500, end: 2000 },
      { start: 3000, end: 3500 },
      { start: 3200, end: 3300 },
      { start: 4800, end: 6000 },
      { start: 7000, end: 8000 },
    ]);
    expect(blocks).toEqual([
      { startTime: 1000, endTime: 2000 },
      { startTime: 3000, endTime: 3500 },
      { startTime: 4800, endTime: 5000 },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Property tests against the brute-force oracle

/** Instants near daylight-saving changes (and one quiet day) to start random windows from. */
const BASES = [
  '2025-03-09T07:00:00Z', // New York spring forward
  '2025-11-02T06:00:00Z', // New York fall back
  '2025-03-30T01:00:00Z', // London spring forward
  '2025-10-26T01:00:00Z', // London fall back
  '2025-04-05T15:00:00Z', // Lord Howe back half an hour
  '2025-10-04T15:30:00Z', // Lord Howe forward half an hour
  '2025-09-27T14:00:00Z', // Chatham forward
  '2025-06-18T12:00:00Z', // nothing happens
].map(at);
const ZONES = [
  'America/New_York',
  'Europe/London',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Pacific/Chatham',
  'America/St_Johns',
  'UTC',
];

const clock = (minutes: number) => `${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, '0')}`;
const dateOf = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

const ruleArbitrary = (windowStart: number) =>
  fc
    .record({
      days: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 7 }),
      timezone: fc.constantFrom(...ZONES),
      start: fc.integer({ min: 0, max: 1439 }),
      length: fc.integer({ min: 1, max: 1440 }),
      exdate: fc.option(fc.integer({ min: -1, max: 2 }), { nil: undefined }),
    })
    .map(({ days, timezone, start, length, exdate }): OpenHoursRule => ({
      days,
      timezone,
      start: clock(start),
      end: clock(Math.min(1440, start + length)),
      ...(exdate !== undefined ? { exdates: [dateOf(windowStart + exdate * 86_400)] } : {}),
    }));

const queryArbitrary = fc
  .record({
    base: fc.constantFrom(...BASES),
    offsetMinutes: fc.integer({ min: -30 * 60, max: 6 * 60 }),
    lengthMinutes: fc.integer({ min: 60, max: 36 * 60 }),
    durationMinutes: fc.integer({ min: 1, max: 180 }),
    intervalMinutes: fc.option(fc.integer({ min: 1, max: 120 }), { nil: undefined }),
    roundTo: fc.option(fc.constantFrom(1, 5, 10, 15, 20, 25, 30, 45, 60), { nil: undefined }),
    before: fc.integer({ min: 0, max: 60 }),
    after: fc.integer({ min: 0, max: 60 }),
    method: fc.constantFrom('collective', 'max-fairness', 'max-availability'),
    participantCount: fc.integer({ min: 1, max: 4 }),
    seed: fc.integer(),
  })
  .chain((shape) => {
    const startTime = shape.base + shape.offsetMinutes * 60;
    const endTime = startTime + shape.lengthMinutes * 60;
    const busy = fc.array(
      fc.record({
        from: fc.integer({ min: -240, max: shape.lengthMinutes + 240 }),
        length: fc.integer({ min: 0, max: 300 }),
      }),
      { maxLength: 10 },
    );
    const participant = (index: number) =>
      fc
        .record({
          busy,
          openHours: fc.option(fc.array(ruleArbitrary(startTime), { minLength: 1, maxLength: 2 }), { nil: undefined }),
          specific: fc.option(
            fc.record({
              day: fc.integer({ min: 0, max: 1 }),
              start: fc.integer({ min: 0, max: 1380 }),
              length: fc.integer({ min: 1, max: 600 }),
              timezone: fc.constantFrom(...ZONES),
            }),
            { nil: undefined },
          ),
          only: fc.boolean(),
          lastBookedAt: fc.option(fc.integer({ min: 0, max: 5 }), { nil: null }),
        })
        .map(({ busy, openHours, specific, only, lastBookedAt }): AvailabilityParticipant => ({
          email: `p${index}@x.test`,
          busy: busy.map((interval, eventIndex) => ({
            start: startTime + interval.from * 60,
            end: startTime + (interval.from + interval.length) * 60,
            eventId: `e${index}-${eventIndex}`,
          })),
          ...(openHours ? { openHours } : {}),
          ...(specific
            ? {
                specificTimeAvailability: [
                  {
                    date: dateOf(startTime + specific.day * 86_400),
                    start: clock(specific.start),
                    end: clock(Math.min(1440, specific.start + specific.length)),
                    timezone: specific.timezone,
                  },
                ],
                onlySpecificTimeAvailability: only,
              }
            : {}),
          lastBookedAt,
        }));
    return fc
      .record({
        participants: fc.tuple(...Array.from({ length: shape.participantCount }, (_, index) => participant(index))),
        defaultOpenHours: fc.option(fc.array(ruleArbitrary(startTime), { minLength: 1, maxLength: 2 }), {
          nil: undefined,
        }),
      })
      .map(({ participants, defaultOpenHours }): AvailabilityQuery => ({
        startTime,
        endTime,
        durationMinutes: shape.durationMinutes,
        ...(shape.intervalMinutes !== undefined ? { intervalMinutes: shape.intervalMinutes } : {}),
        ...(shape.roundTo !== undefined ? { roundTo: shape.roundTo } : {}),
        buffer: { before: shape.before, after: shape.after },
        method: shape.method,
        ...(defaultOpenHours ? { defaultOpenHours } : {}),
        participants,
        explain: true,
      }));
  });

describe('property: the slot engine equals a minute-by-minute oracle', () => {
  it('slots, order and explanations match the oracle on random calendars around DST changes', () => {
    fc.assert(
      fc.property(queryArbitrary, (query) => {
        const expected = oracleAvailability(query);
        const actual = computeAvailability(query);
        expect(actual.timeSlots).toEqual(expected.timeSlots);
        expect(actual.order).toEqual(expected.order);
        expect(
          actual.explanations!.map((explanation) => ({
            ...explanation,
            reasons: normaliseReasons(explanation.reasons),
          })),
        ).toEqual(expected.explanations);
      }),
      { numRuns: 150 },
    );
  });

  it('every returned slot is bookable: no overlap with any busy block widened by the buffers, inside the window', () => {
    fc.assert(
      fc.property(queryArbitrary, (query) => {
        const result = computeAvailability({ ...query, explain: false });
        const before = (query.buffer?.before ?? 0) * 60;
        const after = (query.buffer?.after ?? 0) * 60;
        for (const slot of result.timeSlots) {
          expect(slot.startTime).toBeGreaterThanOrEqual(query.startTime);
          expect(slot.endTime).toBeLessThanOrEqual(query.endTime);
          expect(slot.endTime - slot.startTime).toBe(query.durationMinutes * 60);
          for (const email of slot.emails) {
            const participant = query.participants.find((candidate) => candidate.email === email)!;
            for (const busy of participant.busy) {
              const widenedStart = busy.start - before;
              const widenedEnd = busy.end + after;
              const overlaps = widenedEnd > widenedStart && widenedStart < slot.endTime && widenedEnd > slot.startTime;
              expect(overlaps).toBe(false);
            }
            const prepared = prepareParticipant(participant, {
              defaultOpenHours: query.defaultOpenHours,
              buffer: query.buffer,
              from: slot.startTime,
              to: slot.endTime,
            });
            expect(isBookable(prepared, slot.startTime, slot.endTime)).toBe(true);
          }
          const booking = checkBooking(
            {
              participants: query.participants.filter((participant) => slot.emails.includes(participant.email)),
              defaultOpenHours: query.defaultOpenHours,
              buffer: query.buffer,
            },
            slot.startTime,
            slot.endTime,
          );
          expect(booking.bookable).toBe(true);
        }
      }),
      { numRuns: 150 },
    );
  });
});
