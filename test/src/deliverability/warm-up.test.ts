/** The warm-up ramp as a table: the cap of each day of the four weeks, none after, and the day of a ramp in UTC days. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_WARMUP_SCHEDULE } from '../../../src/config.js';
import { warmUpCap, warmUpDay, warmUpScheduleOf } from '../../../src/deliverability/warm-up.js';

describe('warm-up ramp', () => {
  it.each([
    [0, 50],
    [2, 50],
    [3, 100],
    [6, 100],
    [7, 200],
    [10, 400],
    [14, 800],
    [17, 1_600],
    [21, 3_200],
    [24, 6_400],
    [27, 6_400],
    [28, undefined],
    [400, undefined],
  ])('day %i (0-based): cap %s', (day, cap) => {
    expect(warmUpCap(DEFAULT_WARMUP_SCHEDULE, day)).toBe(cap);
  });

  it('never lowers the cap from one day to the next, and ends after four weeks', () => {
    for (let day = 1; day < DEFAULT_WARMUP_SCHEDULE.length; day++)
      expect(warmUpCap(DEFAULT_WARMUP_SCHEDULE, day)!).toBeGreaterThanOrEqual(
        warmUpCap(DEFAULT_WARMUP_SCHEDULE, day - 1)!,
      );
    expect(DEFAULT_WARMUP_SCHEDULE.length).toBe(28);
  });

  it('follows a configured schedule day by day, and the default ramp when the setting is off', () => {
    expect([0, 1, 2, 3].map((day) => warmUpCap([5, 10, 20], day))).toEqual([5, 10, 20, undefined]);
    expect(warmUpScheduleOf('off')).toBe(DEFAULT_WARMUP_SCHEDULE);
    expect(warmUpScheduleOf([7])).toEqual([7]);
  });

  it('counts UTC days: a ramp started at 23:59 is on day 1 a minute later', () => {
    const started = Date.parse('2026-03-30T23:59:00Z') / 1000;
    expect(warmUpDay(started, Date.parse('2026-03-30T23:59:30Z'))).toBe(0);
    expect(warmUpDay(started, Date.parse('2026-03-31T00:00:30Z'))).toBe(1);
    expect(warmUpDay(started, Date.parse('2026-04-27T00:00:00Z'))).toBe(28);
    // A clock behind the start (another process) is day 0, not negative.
    expect(warmUpDay(started, Date.parse('2026-03-29T12:00:00Z'))).toBe(0);
  });
});
