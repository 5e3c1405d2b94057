/**
 * @module calendar/event-time
 * The time of an event, in the four shapes of a Nylas `when`, as the core handles it: validation of a
 * request's `when`, its wire form, and the UTC range it covers. Pure functions.
 */
import { AppError } from '../errors.js';
import { addDays, dateToUnix, normalizeTimeZone, parseDate } from '../time-zones.js';

/** When an event happens. Instants are unix seconds; dates are `YYYY-MM-DD` (a datespan's end is inclusive). */
export type EventTime =
  | { kind: 'time'; time: number; timezone: string }
  | { kind: 'timespan'; startTime: number; endTime: number; startTimezone: string; endTimezone: string }
  | { kind: 'date'; date: string }
  | { kind: 'datespan'; startDate: string; endDate: string };

/** The `when` of a create or update request: one of the four shapes, `object` optional. */
export interface WhenInput {
  object?: string | undefined;
  time?: number | undefined;
  timezone?: string | undefined;
  start_time?: number | undefined;
  end_time?: number | undefined;
  start_timezone?: string | undefined;
  end_timezone?: string | undefined;
  date?: string | undefined;
  start_date?: string | undefined;
  end_date?: string | undefined;
}

/** The `when` of a response. */
export type WireWhen =
  | { object: 'time'; time: number; timezone: string }
  | { object: 'timespan'; start_time: number; end_time: number; start_timezone: string; end_timezone: string }
  | { object: 'date'; date: string }
  | { object: 'datespan'; start_date: string; end_date: string };

function bad(field: string, message: string): AppError {
  return new AppError('invalid_request', `${field}: ${message}`, { field });
}

function zone(field: string, value: string | undefined, fallback: string): string {
  if (value === undefined || value === '') return fallback;
  const normalized = normalizeTimeZone(value);
  if (!normalized)
    throw bad(field, `${JSON.stringify(value)} is not an IANA time zone; use a name such as America/New_York or UTC.`);
  return normalized;
}

function date(field: string, value: string): string {
  if (!parseDate(value)) throw bad(field, `${JSON.stringify(value)} is not a date; use YYYY-MM-DD.`);
  return value;
}

/**
 * Reads a request's `when`. The shape is chosen by its fields (or by `object` when given): `time`;
 * `start_time` + `end_time`; `date`; `start_date` + `end_date`. Time zones default to `defaultTimeZone`.
 * @throws AppError `invalid_request` naming the field: unknown shape, end before start, unknown zone, bad date.
 */
export function readWhen(input: WhenInput, defaultTimeZone: string): EventTime {
  const kind =
    input.object ??
    (input.start_time !== undefined || input.end_time !== undefined
      ? 'timespan'
      : input.time !== undefined
        ? 'time'
        : input.start_date !== undefined || input.end_date !== undefined
          ? 'datespan'
          : input.date !== undefined
            ? 'date'
            : undefined);
  switch (kind) {
    case 'time': {
      if (input.time === undefined) throw bad('when.time', 'required for a time event (unix seconds).');
      return { kind: 'time', time: input.time, timezone: zone('when.timezone', input.timezone, defaultTimeZone) };
    }
    case 'timespan': {
      if (input.start_time === undefined) throw bad('when.start_time', 'required with when.end_time (unix seconds).');
      if (input.end_time === undefined) throw bad('when.end_time', 'required with when.start_time (unix seconds).');
      if (input.end_time < input.start_time) {
        throw bad(
          'when.end_time',
          `the event ends (${input.end_time}) before it starts (${input.start_time}); end_time must be at or after start_time.`,
        );
      }
      if ((input.start_timezone === undefined) !== (input.end_timezone === undefined)) {
        throw bad(
          input.start_timezone === undefined ? 'when.start_timezone' : 'when.end_timezone',
          'give start_timezone and end_timezone together.',
        );
      }
      const startTimezone = zone('when.start_timezone', input.start_timezone, defaultTimeZone);
      return {
        kind: 'timespan',
        startTime: input.start_time,
        endTime: input.end_time,
        startTimezone,
        endTimezone: zone('when.end_timezone', input.end_timezone, startTimezone),
      };
    }
    case 'date': {
      if (input.date === undefined) throw bad('when.date', 'required for an all-day event (YYYY-MM-DD).');
      return { kind: 'date', date: date('when.date', input.date) };
    }
    case 'datespan': {
      if (input.start_date === undefined) throw bad('when.start_date', 'required with when.end_date (YYYY-MM-DD).');
      if (input.end_date === undefined) throw bad('when.end_date', 'required with when.start_date (YYYY-MM-DD).');
      const startDate = date('when.start_date', input.start_date);
      const endDate = date('when.end_date', input.end_date);
      if (endDate < startDate)
        throw bad(
          'when.end_date',
          `the event ends (${endDate}) before it starts (${startDate}); end_date is inclusive and must be on or after start_date.`,
        );
      return { kind: 'datespan', startDate, endDate };
    }
    default:
      throw bad(
        'when',
        kind === undefined
          ? 'give one of: {time, timezone}, {start_time, end_time, start_timezone, end_timezone}, {date} or {start_date, end_date}.'
          : `unknown object ${JSON.stringify(kind)}; use time, timespan, date or datespan.`,
      );
  }
}

/** The wire form of an event time. */
export function toWireWhen(time: EventTime): WireWhen {
  switch (time.kind) {
    case 'time':
      return { object: 'time', time: time.time, timezone: time.timezone };
    case 'timespan':
      return {
        object: 'timespan',
        start_time: time.startTime,
        end_time: time.endTime,
        start_timezone: time.startTimezone,
        end_timezone: time.endTimezone,
      };
    case 'date':
      return { object: 'date', date: time.date };
    case 'datespan':
      return { object: 'datespan', start_date: time.startDate, end_date: time.endDate };
  }
}

/**
 * The UTC interval `[start, end)` an event time covers, unix seconds. All-day dates are whole UTC days
 * (a datespan's end date is inclusive, so its interval ends at 00:00 UTC of the next day).
 */
export function utcRange(time: EventTime): { start: number; end: number } {
  switch (time.kind) {
    case 'time':
      return { start: time.time, end: time.time };
    case 'timespan':
      return { start: time.startTime, end: time.endTime };
    case 'date':
      return { start: dateToUnix(time.date), end: dateToUnix(addDays(time.date, 1)) };
    case 'datespan':
      return { start: dateToUnix(time.startDate), end: dateToUnix(addDays(time.endDate, 1)) };
  }
}

/** True for all-day events (`date`, `datespan`). */
export function isAllDay(time: EventTime): time is Extract<EventTime, { kind: 'date' | 'datespan' }> {
  return time.kind === 'date' || time.kind === 'datespan';
}

/** The time zone an event's start is written in (UTC for all-day events, which have none). */
export function startTimeZone(time: EventTime): string {
  return time.kind === 'time' ? time.timezone : time.kind === 'timespan' ? time.startTimezone : 'UTC';
}

/** The same event time moved so that it starts at `start` (unix seconds; for all-day events, 00:00 UTC of the day). */
export function shiftTo(time: EventTime, start: number): EventTime {
  const range = utcRange(time);
  const delta = start - range.start;
  switch (time.kind) {
    case 'time':
      return { ...time, time: start };
    case 'timespan':
      return { ...time, startTime: start, endTime: time.endTime + delta };
    case 'date':
      return { kind: 'date', date: addDays(time.date, Math.round(delta / 86_400)) };
    case 'datespan': {
      const days = Math.round(delta / 86_400);
      return { kind: 'datespan', startDate: addDays(time.startDate, days), endDate: addDays(time.endDate, days) };
    }
  }
}
