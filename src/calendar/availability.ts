/**
 * @module calendar/availability
 * Free/busy and multi-participant availability as pure functions: busy intervals and open hours in, slots
 * out. No clock, no database, no environment: the time window is an argument. Time zones come from the IANA
 * database through `date-fns-tz`.
 *
 * All instants are unix seconds; intervals are half-open `[start, end)`.
 *
 * ## The rules (one place, used by the slot list AND the booking check)
 * - **Open hours** of a participant: their own `openHours` if given (non-empty), otherwise `defaultOpenHours`,
 *   otherwise always open. A rule `{days, timezone, start, end, exdates}` makes an instant open when the wall
 *   clock of `timezone` at that instant shows a weekday in `days` (0 = Sunday … 6 = Saturday), a date not in
 *   `exdates`, and a time of day in `[start, end)` (`end` may be `24:00`). Because membership is decided by
 *   the wall clock, a skipped local hour is never open and a repeated local hour is open for both of its real
 *   hours. `specificTimeAvailability` entries replace the open hours of their whole local date;
 *   `onlySpecificTimeAvailability` keeps nothing else.
 * - **Buffers** widen every busy interval to `[start - before, end + after)`: a meeting may not end within
 *   `before` minutes of an existing meeting's start nor start within `after` minutes of its end. They do not
 *   shrink open hours.
 * - A participant **can take** `[start, end)` when it lies inside one open interval and overlaps no widened
 *   busy interval ({@link isBookable}). The booking check ({@link checkBooking}) applies exactly this.
 *
 * ## The candidate grid
 * The group's open time inside the window (collective: everyone's open hours intersected; round-robin: united)
 * falls into periods. Each period has a grid in the time zone of the open-hours rule it begins in (first
 * participant, in request order, whose rules cover the period's first instant; UTC when nobody has rules):
 * the first wall time at or after the period start whose minute of day is a multiple of `roundTo`, then
 * every `intervalMinutes` of wall-clock time. A grid wall time that does not exist (a skipped hour) gives no
 * candidate; one that occurs twice (a repeated hour) gives one, its first occurrence. Busy time never moves
 * the grid. A candidate is a slot when the whole meeting fits in the window and the participants can take it
 * (collective: all of them; max-availability: at least one; max-fairness: at least one of the half of the
 * round-robin order that was booked least recently, falling back to everyone when that half has no slot).
 * With `explain`, every candidate that is not a slot comes back with the reasons.
 *
 * The rules live in sibling modules: the types (./availability-types.ts), intervals (./availability-intervals.ts),
 * time zones (./availability-zones.ts), open hours (./availability-open-hours.ts), busy time and the booking rule
 * (./availability-busy.ts); this module makes the candidate grid and the slots.
 */
import type {
  AvailabilityQuery,
  AvailabilityResult,
  ExclusionReason,
  Explanation,
  TimeSlot,
} from './availability-types.js';
import { intersectIntervals, mergeIntervals, type Interval } from './availability-intervals.js';
import { SECONDS_PER_DAY, segmentIndexAt, zoneFor, type Zone } from './availability-zones.js';
import type { LabeledInterval } from './availability-open-hours.js';
import {
  bookingConflicts,
  insideOpenHours,
  isBookable,
  prepareParticipant,
  type PreparedParticipant,
} from './availability-busy.js';

export type {
  AvailabilityMethod,
  AvailabilityParticipant,
  AvailabilityQuery,
  AvailabilityResult,
  BusyInterval,
  ExclusionReason,
  Explanation,
  MeetingBuffer,
  OpenHoursRule,
  SpecificTimeAvailability,
  TimeSlot,
} from './availability-types.js';
export { freeBusy, mergeIntervals, type BusyBlock, type Interval } from './availability-intervals.js';
export { allDayInterval, isValidTimeZone, parseClock, wallTimeToInstant } from './availability-zones.js';
export {
  bookingConflicts,
  checkBooking,
  isBookable,
  prepareParticipant,
  type PreparedParticipant,
} from './availability-busy.js';

// ---------------------------------------------------------------------------------------------------------------
// Round-robin order

/**
 * Round-robin order, next in line first: participants never booked for the group (alphabetically), then by
 * the time they were last booked, longest ago first (ties alphabetically).
 */
export function roundRobinOrder(participants: readonly { email: string; lastBookedAt?: number | null }[]): string[] {
  return [...participants]
    .sort((a, b) => {
      const aNever = a.lastBookedAt === null || a.lastBookedAt === undefined;
      const bNever = b.lastBookedAt === null || b.lastBookedAt === undefined;
      if (aNever !== bNever) return aNever ? -1 : 1;
      if (!aNever && !bNever && a.lastBookedAt !== b.lastBookedAt) return a.lastBookedAt! - b.lastBookedAt!;
      return a.email < b.email ? -1 : a.email > b.email ? 1 : 0;
    })
    .map((participant) => participant.email);
}

// ---------------------------------------------------------------------------------------------------------------
// The candidate grid

/** The time zone a period's grid runs in: of the first rule covering its first instant (see module doc). */
function gridTimeZone(participants: readonly PreparedParticipant[], at: number): string {
  for (const participant of participants) {
    if (participant.open === null || !insideOpenHours(participant, at, at + 1)) continue;
    let best: LabeledInterval | undefined;
    for (const interval of participant.labeled) {
      if (interval.start <= at && at < interval.end && (!best || interval.rank < best.rank)) best = interval;
    }
    if (best) return best.timeZone;
  }
  return 'UTC';
}

/** Minute of day of a wall time. */
function minuteOfDay(wall: number): number {
  return Math.floor((((wall % SECONDS_PER_DAY) + SECONDS_PER_DAY) % SECONDS_PER_DAY) / 60);
}

/** The first whole-minute instant at or after `t` whose wall minute of day is a multiple of `roundTo`. */
function roundUp(zone: Zone, t: number, roundTo: number): number {
  const first = Math.ceil(t / 60) * 60;
  for (let index = segmentIndexAt(zone.segments, first); index < zone.segments.length; index++) {
    const segment = zone.segments[index]!;
    const from = Math.max(first, segment.start);
    if (from >= segment.end) continue;
    const wall = from + segment.offset;
    const day = Math.floor(wall / SECONDS_PER_DAY) * SECONDS_PER_DAY;
    const minute = minuteOfDay(wall);
    const exact = wall % 60 === 0 && minute % roundTo === 0;
    const nextMinute = exact ? minute : Math.ceil((minute + (wall % 60 === 0 ? 0 : 1)) / roundTo) * roundTo;
    const targetWall = nextMinute >= 1440 ? day + SECONDS_PER_DAY : day + nextMinute * 60;
    const candidate = Math.max(targetWall - segment.offset, from);
    if (candidate < segment.end) return candidate;
  }
  return zone.to;
}

/** Candidate starts in `[anchor, periodEnd)`: wall times `wall(anchor) + k·interval`, first occurrences only. */
function gridStarts(zone: Zone, anchor: number, periodEnd: number, intervalSeconds: number): number[] {
  const anchorWall = zone.wall(anchor);
  const repeated = zone.repeatedRanges();
  const starts: number[] = [];
  for (let index = segmentIndexAt(zone.segments, anchor); index < zone.segments.length; index++) {
    const segment = zone.segments[index]!;
    const from = Math.max(segment.start, anchor);
    const to = Math.min(segment.end, periodEnd);
    if (from >= to) {
      if (segment.start >= periodEnd) break;
      continue;
    }
    let k = Math.ceil((from + segment.offset - anchorWall) / intervalSeconds);
    for (
      let t = anchorWall + k * intervalSeconds - segment.offset;
      t < to;
      k++, t = anchorWall + k * intervalSeconds - segment.offset
    ) {
      if (!repeated.some((range) => range.start <= t && t < range.end)) starts.push(t);
    }
  }
  return starts;
}

// ---------------------------------------------------------------------------------------------------------------
// Availability

interface RunResult {
  timeSlots: TimeSlot[];
  explanations: Explanation[];
  truncated: boolean;
}

function runSearch(
  query: AvailabilityQuery,
  considered: readonly PreparedParticipant[],
  mode: 'all' | 'any',
  emailOrder: (emails: string[]) => string[],
): RunResult {
  const windowStart = query.startTime;
  const windowEnd = query.endTime;
  const duration = query.durationMinutes * 60;
  const intervalSeconds = (query.intervalMinutes ?? query.durationMinutes) * 60;
  const roundTo = query.roundTo ?? 15;
  const explainLimit = query.explain ? (query.explainLimit ?? Number.POSITIVE_INFINITY) : 0;
  const window: Interval[] = [{ start: windowStart, end: windowEnd }];

  const openSets = considered.map((participant) =>
    participant.open === null ? window : intersectIntervals(participant.open, window),
  );
  let group: Interval[];
  if (mode === 'all') group = openSets.reduce((accumulated, set) => intersectIntervals(accumulated, set), window);
  else group = mergeIntervals(openSets.flat());

  const timeSlots: TimeSlot[] = [];
  const explanations: Explanation[] = [];
  let truncated = false;
  for (const period of group) {
    const zone = zoneFor(
      gridTimeZone(considered, period.start),
      period.start - SECONDS_PER_DAY,
      period.end + SECONDS_PER_DAY,
    );
    const anchor = roundUp(zone, period.start, roundTo);
    if (anchor >= period.end) continue;
    for (const start of gridStarts(zone, anchor, period.end, intervalSeconds)) {
      const end = start + duration;
      const inWindow = end <= windowEnd;
      const available: string[] = [];
      if (inWindow) {
        for (const participant of considered) {
          if (isBookable(participant, start, end)) available.push(participant.email);
          else if (mode === 'all') break;
        }
      }
      const offered = inWindow && (mode === 'all' ? available.length === considered.length : available.length > 0);
      if (offered) {
        timeSlots.push({ emails: emailOrder(available), startTime: start, endTime: end });
      } else if (explainLimit > 0) {
        if (explanations.length >= explainLimit) {
          truncated = true;
          continue;
        }
        const reasons: ExclusionReason[] = inWindow ? [] : [{ type: 'past_window' }];
        for (const participant of considered) reasons.push(...bookingConflicts(participant, start, end));
        explanations.push({ startTime: start, endTime: end, reasons });
      }
    }
  }
  return { timeSlots, explanations, truncated };
}

/** Checks the numbers of a query; throws RangeError naming the field. */
function validateQuery(query: AvailabilityQuery): void {
  const integer = (value: number | undefined, name: string, min: number, max: number) => {
    if (value === undefined) return;
    if (!Number.isInteger(value) || value < min || value > max)
      throw new RangeError(`${name} must be an integer from ${min} to ${max}`);
  };
  integer(query.startTime, 'startTime', 0, Number.MAX_SAFE_INTEGER);
  integer(query.endTime, 'endTime', 0, Number.MAX_SAFE_INTEGER);
  if (query.endTime <= query.startTime) throw new RangeError('endTime must be after startTime');
  integer(query.durationMinutes, 'durationMinutes', 1, 10_080);
  integer(query.intervalMinutes, 'intervalMinutes', 1, 10_080);
  integer(query.roundTo, 'roundTo', 1, 1440);
  integer(query.buffer?.before, 'buffer.before', 0, 10_080);
  integer(query.buffer?.after, 'buffer.after', 0, 10_080);
  if (query.participants.length === 0) throw new RangeError('participants must not be empty');
  const emails = new Set(query.participants.map((participant) => participant.email));
  if (emails.size !== query.participants.length) throw new RangeError('participants must have distinct emails');
}

/**
 * Finds the slots in the window where the participants can meet, per the rules in the module documentation.
 * Busy intervals may lie outside the window (a buffer can reach in from outside); pass every interval that
 * overlaps `[startTime - buffer.after, endTime + buffer.before)`.
 */
export function computeAvailability(query: AvailabilityQuery): AvailabilityResult {
  validateQuery(query);
  const method = query.method ?? 'collective';
  const from = query.startTime;
  const to = query.endTime + query.durationMinutes * 60;
  const prepared = query.participants.map((participant) =>
    prepareParticipant(participant, { defaultOpenHours: query.defaultOpenHours, buffer: query.buffer, from, to }),
  );

  if (method === 'collective') {
    const result = runSearch(query, prepared, 'all', (emails) => emails);
    return finish(result, [], query.explain === true);
  }

  const order = roundRobinOrder(query.participants);
  const rank = new Map(order.map((email, index) => [email, index]));
  const byOrder = (emails: string[]) => [...emails].sort((a, b) => rank.get(a)! - rank.get(b)!);
  if (method === 'max-fairness') {
    const keep = new Set(order.slice(0, Math.ceil(order.length / 2)));
    const fairest = runSearch(
      query,
      prepared.filter((participant) => keep.has(participant.email)),
      'any',
      byOrder,
    );
    if (fairest.timeSlots.length > 0 || keep.size === prepared.length)
      return finish(fairest, order, query.explain === true);
  }
  return finish(runSearch(query, prepared, 'any', byOrder), order, query.explain === true);
}

function finish(result: RunResult, order: string[], explain: boolean): AvailabilityResult {
  return {
    timeSlots: result.timeSlots,
    order,
    ...(explain ? { explanations: result.explanations } : {}),
    ...(result.truncated ? { explanationsTruncated: true } : {}),
  };
}
