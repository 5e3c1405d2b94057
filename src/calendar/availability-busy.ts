/**
 * @module calendar/availability-busy
 * A participant's busy time against a meeting (./availability.ts): its busy intervals widened by the buffers and
 * indexed for fast checks beside its open hours, and THE booking rule that the slot list and the booking check share.
 */
import type {
  AvailabilityParticipant,
  BusyInterval,
  ExclusionReason,
  MeetingBuffer,
  OpenHoursRule,
} from './availability-types.js';
import { lastStartingAtOrBefore, type Interval } from './availability-intervals.js';
import { participantOpenTime, type LabeledInterval } from './availability-open-hours.js';

/** A participant ready for fast checks: open time and buffered busy intervals over a range. */
export interface PreparedParticipant {
  email: string;
  /** Merged open intervals; null = always open. */
  open: Interval[] | null;
  labeled: LabeledInterval[];
  /** Busy intervals sorted by widened start. */
  busyStart: Float64Array;
  busyEnd: Float64Array;
  widenedStart: Float64Array;
  widenedEnd: Float64Array;
  /** `max(widenedEnd[0..i])`, to find overlaps with a binary search. */
  widenedEndPrefixMax: Float64Array;
  eventIds: (string | undefined)[];
  lastBookedAt: number | null;
}

/** Prepares a participant for {@link isBookable} over `[from, to)` (open hours are only known there). */
export function prepareParticipant(
  participant: AvailabilityParticipant,
  options: {
    defaultOpenHours?: readonly OpenHoursRule[] | undefined;
    buffer?: MeetingBuffer | undefined;
    from: number;
    to: number;
  },
): PreparedParticipant {
  const before = (options.buffer?.before ?? 0) * 60;
  const after = (options.buffer?.after ?? 0) * 60;
  const open = participantOpenTime(participant, options.defaultOpenHours, options.from, options.to);
  // Typed arrays and an index sort: tens of thousands of intervals per request must not allocate per item.
  const source = participant.busy;
  const keep: number[] = [];
  let sorted = true;
  for (let index = 0; index < source.length; index++) {
    const interval = source[index]!;
    if (
      !Number.isFinite(interval.start) ||
      !Number.isFinite(interval.end) ||
      interval.end + after <= interval.start - before
    )
      continue;
    const previous = keep.length > 0 ? source[keep[keep.length - 1]!]! : undefined;
    if (previous && previous.start > interval.start) sorted = false;
    keep.push(index);
  }
  // Widening by constants keeps the order of starts, so sorting raw intervals is enough.
  if (!sorted) sortByStart(source, keep);
  const count = keep.length;
  const prepared: PreparedParticipant = {
    email: participant.email,
    open: open ? open.merged : null,
    labeled: open ? open.labeled : [],
    busyStart: new Float64Array(count),
    busyEnd: new Float64Array(count),
    widenedStart: new Float64Array(count),
    widenedEnd: new Float64Array(count),
    widenedEndPrefixMax: new Float64Array(count),
    eventIds: new Array<string | undefined>(count).fill(undefined),
    lastBookedAt: participant.lastBookedAt ?? null,
  };
  let runningMax = -Infinity;
  for (let position = 0; position < count; position++) {
    const interval = source[keep[position]!]!;
    prepared.busyStart[position] = interval.start;
    prepared.busyEnd[position] = interval.end;
    prepared.widenedStart[position] = interval.start - before;
    prepared.widenedEnd[position] = interval.end + after;
    runningMax = Math.max(runningMax, interval.end + after);
    prepared.widenedEndPrefixMax[position] = runningMax;
    prepared.eventIds[position] = interval.eventId;
  }
  return prepared;
}

/** Positions in a key: enough for a million intervals per participant. */
const INDEX_BITS = 2 ** 20;

/**
 * Sorts `keep` (indexes into `source`) by start, ties in input order. Whole-second starts within a span that
 * fits are packed with their index into one float key and sorted natively (tens of thousands per request).
 */
function sortByStart(source: readonly BusyInterval[], keep: number[]): void {
  let min = Infinity;
  let max = -Infinity;
  let integral = true;
  for (const index of keep) {
    const start = source[index]!.start;
    if (!Number.isInteger(start)) integral = false;
    if (start < min) min = start;
    if (start > max) max = start;
  }
  if (!integral || source.length >= INDEX_BITS || (max - min + 1) * INDEX_BITS > Number.MAX_SAFE_INTEGER) {
    keep.sort((a, b) => source[a]!.start - source[b]!.start || a - b);
    return;
  }
  const keys = new Float64Array(keep.length);
  keep.forEach((index, position) => {
    keys[position] = (source[index]!.start - min) * INDEX_BITS + index;
  });
  keys.sort();
  for (let position = 0; position < keys.length; position++) keep[position] = keys[position]! % INDEX_BITS;
}

/** Index of the last busy interval whose widened start is before `end`, or -1. */
function lastBusyStartingBefore(participant: PreparedParticipant, end: number): number {
  let low = 0;
  let high = participant.widenedStart.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (participant.widenedStart[middle]! < end) {
      found = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

export function insideOpenHours(participant: PreparedParticipant, start: number, end: number): boolean {
  if (participant.open === null) return true;
  const index = lastStartingAtOrBefore(participant.open, start);
  return index >= 0 && participant.open[index]!.end >= end;
}

/**
 * THE booking rule: can this participant take `[start, end)`? True when the interval lies inside one of
 * their open intervals and overlaps none of their busy intervals widened by the buffers. The slot list and
 * the booking check both call this, so they cannot disagree.
 */
export function isBookable(participant: PreparedParticipant, start: number, end: number): boolean {
  if (!insideOpenHours(participant, start, end)) return false;
  const last = lastBusyStartingBefore(participant, end);
  return last < 0 || participant.widenedEndPrefixMax[last]! <= start;
}

/**
 * Why this participant cannot take `[start, end)` (empty exactly when {@link isBookable} is true):
 * outside open hours, busy (an event overlaps the meeting itself), buffer (only the buffer overlaps).
 */
export function bookingConflicts(participant: PreparedParticipant, start: number, end: number): ExclusionReason[] {
  const reasons: ExclusionReason[] = [];
  if (!insideOpenHours(participant, start, end)) reasons.push({ type: 'outside_open_hours', email: participant.email });
  const busyIds: string[] = [];
  const bufferIds: string[] = [];
  let busyHit = false;
  let bufferHit = false;
  for (
    let index = lastBusyStartingBefore(participant, end);
    index >= 0 && participant.widenedEndPrefixMax[index]! > start;
    index--
  ) {
    if (participant.widenedEnd[index]! <= start) continue;
    const eventId = participant.eventIds[index];
    const raw =
      participant.busyStart[index]! < participant.busyEnd[index]! &&
      participant.busyStart[index]! < end &&
      participant.busyEnd[index]! > start;
    if (raw) {
      busyHit = true;
      if (eventId !== undefined && !busyIds.includes(eventId)) busyIds.push(eventId);
    } else {
      bufferHit = true;
      if (eventId !== undefined && !bufferIds.includes(eventId)) bufferIds.push(eventId);
    }
  }
  if (busyHit) reasons.push({ type: 'busy', email: participant.email, eventIds: busyIds.reverse() });
  if (bufferHit) reasons.push({ type: 'buffer', email: participant.email, eventIds: bufferIds.reverse() });
  return reasons;
}

/** The booking check: can these participants take `[start, end)` under the same rules as the slot list? */
export function checkBooking(
  input: {
    participants: readonly AvailabilityParticipant[];
    defaultOpenHours?: readonly OpenHoursRule[] | undefined;
    buffer?: MeetingBuffer | undefined;
  },
  start: number,
  end: number,
): { bookable: boolean; participants: { email: string; bookable: boolean; reasons: ExclusionReason[] }[] } {
  if (!(end > start)) throw new RangeError('the booking must end after it starts');
  const results = input.participants.map((participant) => {
    const prepared = prepareParticipant(participant, {
      defaultOpenHours: input.defaultOpenHours,
      buffer: input.buffer,
      from: start,
      to: end,
    });
    const bookable = isBookable(prepared, start, end);
    return { email: participant.email, bookable, reasons: bookable ? [] : bookingConflicts(prepared, start, end) };
  });
  return { bookable: results.every((result) => result.bookable), participants: results };
}
