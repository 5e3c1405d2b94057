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
 */
import { format } from 'date-fns-tz';

// ---------------------------------------------------------------------------------------------------------------
// Public types

/** A busy interval of one participant, in unix seconds, `[start, end)`. */
export interface BusyInterval {
  start: number;
  end: number;
  /** The event that makes it busy, named in explanations. */
  eventId?: string;
}

/** A weekly open-hours rule, as Nylas `OpenHours`. */
export interface OpenHoursRule {
  /** Weekdays, 0 = Sunday … 6 = Saturday. */
  days: number[];
  /** IANA time zone of `start`, `end` and `exdates`. */
  timezone: string;
  /** `H:MM` or `HH:MM`, 24-hour. */
  start: string;
  /** `H:MM` or `HH:MM`, 24-hour; `24:00` is the end of the day. Must be after `start`. */
  end: string;
  /** `YYYY-MM-DD` local dates on which the rule does not apply. */
  exdates?: string[];
}

/** Open time on one specific local date, replacing the weekly rules for that whole date. */
export interface SpecificTimeAvailability {
  /** `YYYY-MM-DD`. */
  date: string;
  start: string;
  end: string;
  /** Defaults to the participant's first rule's time zone, else UTC. */
  timezone?: string;
}

/** One participant as the computation sees them. */
export interface AvailabilityParticipant {
  email: string;
  busy: readonly BusyInterval[];
  openHours?: readonly OpenHoursRule[] | undefined;
  specificTimeAvailability?: readonly SpecificTimeAvailability[];
  onlySpecificTimeAvailability?: boolean;
  /** When this participant was last booked for the round-robin group (unix seconds), or null if never. */
  lastBookedAt?: number | null;
}

/** How the participants combine. */
export type AvailabilityMethod = 'collective' | 'max-fairness' | 'max-availability';

/** Minutes kept free around existing meetings. */
export interface MeetingBuffer {
  before?: number;
  after?: number;
}

/** Everything a slot search needs. */
export interface AvailabilityQuery {
  /** Window, unix seconds: every returned slot lies inside `[startTime, endTime]`. */
  startTime: number;
  endTime: number;
  durationMinutes: number;
  /** Spacing of candidate starts in wall-clock minutes; any positive integer. Default: `durationMinutes`. */
  intervalMinutes?: number;
  /** Grids begin at a wall time whose minute of day is a multiple of this. Default 15. */
  roundTo?: number;
  /** Default `collective`. */
  method?: AvailabilityMethod | undefined;
  buffer?: MeetingBuffer | undefined;
  defaultOpenHours?: readonly OpenHoursRule[] | undefined;
  participants: readonly AvailabilityParticipant[];
  /** Also return why each excluded candidate start was excluded. */
  explain?: boolean;
  /** At most this many explanations (the earliest ones). Default: all. */
  explainLimit?: number;
}

/** A bookable slot. */
export interface TimeSlot {
  /** Who can take it: everyone (collective) or the available participants in round-robin order. */
  emails: string[];
  startTime: number;
  endTime: number;
}

/** Why a participant cannot take a meeting, or why a candidate is not offered. */
export type ExclusionReason =
  | { type: 'busy'; email: string; eventIds: string[] }
  | { type: 'buffer'; email: string; eventIds: string[] }
  | { type: 'outside_open_hours'; email: string }
  | { type: 'past_window' };

/** A candidate start that is not a slot, and why. */
export interface Explanation {
  startTime: number;
  endTime: number;
  reasons: ExclusionReason[];
}

/** The answer of {@link computeAvailability}. */
export interface AvailabilityResult {
  timeSlots: TimeSlot[];
  /** Round-robin order (next in line first); empty for collective. */
  order: string[];
  /** Present when `explain` was asked for. */
  explanations?: Explanation[];
  /** True when `explainLimit` cut the explanations short. */
  explanationsTruncated?: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// Time zones

/** A stretch of time during which a zone's UTC offset is constant. */
interface ZoneSegment {
  start: number;
  end: number;
  /** Seconds to add to an instant to get its wall clock (as seconds since 1970-01-01T00:00 wall time). */
  offset: number;
}

const SECONDS_PER_DAY = 86_400;
/** Offsets are sampled every 3 hours; no zone has changed its offset twice within 3 hours in modern tzdb. */
const SAMPLE_STEP = 3 * 3600;
const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/Universal', 'Etc/Zulu', 'Universal', 'Zulu']);

/** Offset samples and found transitions per zone; memoised because tzdb is immutable within a process. */
const sampleCache = new Map<string, Map<number, number>>();
const transitionCache = new Map<string, Map<number, number>>();
/** Bounds the caches (about 50 zones × 5 years of samples). */
const MAX_CACHED_SAMPLES = 800_000;
let cachedSamples = 0;

/** Zone names already seen to be valid (Intl.DateTimeFormat construction is slow). */
const knownZones = new Set<string>();

/** True when `timeZone` is an IANA name this runtime knows. */
export function isValidTimeZone(timeZone: string): boolean {
  if (typeof timeZone !== 'string' || timeZone.length === 0 || timeZone.length > 64) return false;
  if (knownZones.has(timeZone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    return false;
  }
  if (knownZones.size < 2048) knownZones.add(timeZone);
  return true;
}

/** UTC offset of `timeZone` at instant `t` (seconds), through date-fns-tz (machine-time-zone independent). */
function rawOffset(timeZone: string, t: number): number {
  const text = format(new Date(t * 1000), 'xxx', { timeZone });
  const match = /^([+-])(\d{2}):(\d{2})$/.exec(text);
  if (!match) throw new RangeError(`Unknown time zone: ${timeZone}`);
  const seconds = Number(match[2]) * 3600 + Number(match[3]) * 60;
  return match[1] === '-' ? -seconds : seconds;
}

function sampledOffset(timeZone: string, bucket: number): number {
  let samples = sampleCache.get(timeZone);
  if (!samples) {
    samples = new Map();
    sampleCache.set(timeZone, samples);
  }
  let offset = samples.get(bucket);
  if (offset === undefined) {
    if (cachedSamples > MAX_CACHED_SAMPLES) {
      sampleCache.clear();
      transitionCache.clear();
      cachedSamples = 0;
      samples = new Map();
      sampleCache.set(timeZone, samples);
    }
    offset = rawOffset(timeZone, bucket * SAMPLE_STEP);
    samples.set(bucket, offset);
    cachedSamples++;
  }
  return offset;
}

/** The first instant in `(bucket·step, (bucket+1)·step]` with the later sample's offset. */
function transitionIn(timeZone: string, bucket: number, after: number): number {
  let transitions = transitionCache.get(timeZone);
  if (!transitions) {
    transitions = new Map();
    transitionCache.set(timeZone, transitions);
  }
  const known = transitions.get(bucket);
  if (known !== undefined) return known;
  let low = bucket * SAMPLE_STEP; // offset differs from `after` here
  let high = (bucket + 1) * SAMPLE_STEP; // offset equals `after` here
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (rawOffset(timeZone, middle) === after) high = middle;
    else low = middle;
  }
  transitions.set(bucket, high);
  return high;
}

/** Constant-offset segments of `timeZone` covering `[from, to)`, in order. */
function zoneSegments(timeZone: string, from: number, to: number): ZoneSegment[] {
  if (UTC_ZONES.has(timeZone)) return [{ start: from, end: Math.max(to, from + 1), offset: 0 }];
  const first = Math.floor(from / SAMPLE_STEP);
  const last = Math.floor(to / SAMPLE_STEP) + 1;
  const segments: ZoneSegment[] = [];
  let current = sampledOffset(timeZone, first);
  let start = from;
  for (let bucket = first; bucket < last; bucket++) {
    const next = sampledOffset(timeZone, bucket + 1);
    if (next === current) continue;
    const at = transitionIn(timeZone, bucket, next);
    // A change after the range (the last bucket reaches past `to`) must not leak into its last segment.
    if (at >= to) break;
    if (at > start) {
      segments.push({ start, end: at, offset: current });
      start = at;
    }
    current = next;
  }
  segments.push({ start, end: Math.max(to, start + 1), offset: current });
  return segments;
}

/** Index of the segment containing `t` (segments sorted; `t` inside their union). */
function segmentIndexAt(segments: readonly ZoneSegment[], t: number): number {
  let low = 0;
  let high = segments.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (segments[middle]!.start <= t) low = middle;
    else high = middle - 1;
  }
  return low;
}

/** A zone over a range of time: offsets, wall clock, and the instants of a wall time. */
class Zone {
  readonly segments: ZoneSegment[];
  constructor(
    readonly timeZone: string,
    readonly from: number,
    readonly to: number,
  ) {
    this.segments = zoneSegments(timeZone, from, to);
  }

  offsetAt(t: number): number {
    return this.segments[segmentIndexAt(this.segments, t)]!.offset;
  }

  /** Wall clock at `t`, as seconds since 1970-01-01T00:00 of the zone's calendar. */
  wall(t: number): number {
    return t + this.offsetAt(t);
  }

  /** Instants (within the zone's range) whose wall clock lies in `[wallStart, wallEnd)`. */
  instantsOfWallRange(wallStart: number, wallEnd: number): Interval[] {
    const result: Interval[] = [];
    for (const segment of this.segments) {
      const start = Math.max(segment.start, wallStart - segment.offset);
      const end = Math.min(segment.end, wallEnd - segment.offset);
      if (start < end) result.push({ start, end });
    }
    return mergeIntervals(result);
  }

  /** The first instant (within range) whose wall clock is at or after `wallTime`; `to` if none. */
  firstInstantAtOrAfterWall(wallTime: number): number {
    for (const segment of this.segments) {
      const t = Math.max(segment.start, wallTime - segment.offset);
      if (t < segment.end) return t;
    }
    return this.to;
  }

  /** Instant ranges whose wall time already occurred earlier (the second pass of a repeated hour). */
  repeatedRanges(): Interval[] {
    const ranges: Interval[] = [];
    for (let index = 1; index < this.segments.length; index++) {
      const before = this.segments[index - 1]!;
      const after = this.segments[index]!;
      if (after.offset < before.offset)
        ranges.push({ start: after.start, end: after.start + (before.offset - after.offset) });
    }
    return ranges;
  }
}

const zoneMemo = new Map<string, Zone>();
function zoneFor(timeZone: string, from: number, to: number): Zone {
  const key = `${timeZone}|${from}|${to}`;
  let zone = zoneMemo.get(key);
  if (!zone) {
    if (zoneMemo.size > 256) zoneMemo.clear();
    zone = new Zone(timeZone, from, to);
    zoneMemo.set(key, zone);
  }
  return zone;
}

// ---------------------------------------------------------------------------------------------------------------
// Intervals

/** A half-open interval of unix seconds. */
export interface Interval {
  start: number;
  end: number;
}

/** Sorts and merges overlapping or touching intervals; drops empty ones. */
export function mergeIntervals(intervals: readonly Interval[]): Interval[] {
  const sorted = intervals
    .filter((interval) => interval.end > interval.start)
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: Interval[] = [];
  for (const interval of sorted) {
    const last = merged[merged.length - 1];
    if (last && interval.start <= last.end) last.end = Math.max(last.end, interval.end);
    else merged.push({ start: interval.start, end: interval.end });
  }
  return merged;
}

function intersectIntervals(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  const result: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    const start = Math.max(x.start, y.start);
    const end = Math.min(x.end, y.end);
    if (start < end) result.push({ start, end });
    if (x.end < y.end) i++;
    else j++;
  }
  return mergeIntervals(result);
}

function subtractIntervals(from: readonly Interval[], remove: readonly Interval[]): Interval[] {
  const result: Interval[] = [];
  for (const interval of from) {
    let pieces: Interval[] = [{ ...interval }];
    for (const cut of remove) {
      if (cut.end <= interval.start || cut.start >= interval.end) continue;
      pieces = pieces.flatMap((piece) => {
        if (cut.end <= piece.start || cut.start >= piece.end) return [piece];
        const kept: Interval[] = [];
        if (piece.start < cut.start) kept.push({ start: piece.start, end: cut.start });
        if (cut.end < piece.end) kept.push({ start: cut.end, end: piece.end });
        return kept;
      });
    }
    result.push(...pieces);
  }
  return mergeIntervals(result);
}

/** Index of the last interval with `start <= t`, or -1. */
function lastStartingAtOrBefore(intervals: readonly Interval[], t: number): number {
  let low = 0;
  let high = intervals.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (intervals[middle]!.start <= t) {
      found = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------------
// Open hours

const CLOCK_PATTERN = /^(\d{1,2}):(\d{2})$/;
const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Seconds after midnight of a `H:MM` / `HH:MM` time; `24:00` only when `allowEndOfDay`. */
export function parseClock(text: string, allowEndOfDay = false): number {
  const match = CLOCK_PATTERN.exec(text);
  if (!match) throw new RangeError(`"${text}" is not a time of day such as 9:00 or 17:30`);
  const hours = Number(match[1]);
  const minutes = Number(match[2]);
  if (minutes > 59 || hours > 24 || (hours === 24 && (minutes !== 0 || !allowEndOfDay))) {
    throw new RangeError(`"${text}" is not a time of day between 0:00 and ${allowEndOfDay ? '24:00' : '23:59'}`);
  }
  return hours * 3600 + minutes * 60;
}

/** Wall seconds of local midnight of a `YYYY-MM-DD` date. */
function wallMidnight(date: string): number {
  const match = DATE_PATTERN.exec(date);
  if (!match) throw new RangeError(`"${date}" is not a date such as 2025-03-09`);
  const value = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / 1000;
  if (!Number.isFinite(value) || new Date(value * 1000).toISOString().slice(0, 10) !== date) {
    throw new RangeError(`"${date}" is not a calendar date`);
  }
  return value;
}

function dateOfWall(wall: number): string {
  return new Date(wall * 1000).toISOString().slice(0, 10);
}

/** An open interval tagged with the time zone of the rule that opened it; lower rank wins. */
interface LabeledInterval extends Interval {
  timeZone: string;
  rank: number;
}

/** Widening of a computed range so that wall dates on either side are covered. */
const DAY_MARGIN = 2 * SECONDS_PER_DAY;

function ruleIntervals(rule: OpenHoursRule, rank: number, from: number, to: number): LabeledInterval[] {
  const startOfDay = parseClock(rule.start);
  const endOfDay = parseClock(rule.end, true);
  if (endOfDay <= startOfDay) throw new RangeError(`open hours end ${rule.end} must be after start ${rule.start}`);
  if (!isValidTimeZone(rule.timezone)) throw new RangeError(`unknown time zone ${rule.timezone}`);
  const days = new Set(rule.days);
  const exdates = new Set(rule.exdates ?? []);
  const zone = zoneFor(rule.timezone, from - DAY_MARGIN, to + DAY_MARGIN);
  const result: LabeledInterval[] = [];
  const firstDay = Math.floor((from - DAY_MARGIN / 2) / SECONDS_PER_DAY) * SECONDS_PER_DAY;
  for (let day = firstDay; day < to + DAY_MARGIN / 2; day += SECONDS_PER_DAY) {
    const weekday = new Date(day * 1000).getUTCDay();
    if (!days.has(weekday) || exdates.has(dateOfWall(day))) continue;
    for (const piece of zone.instantsOfWallRange(day + startOfDay, day + endOfDay)) {
      const start = Math.max(piece.start, from);
      const end = Math.min(piece.end, to);
      if (start < end) result.push({ start, end, timeZone: rule.timezone, rank });
    }
  }
  return result;
}

/** Open time of one participant within `[from, to)`: merged intervals plus labels; null when always open. */
interface OpenTime {
  merged: Interval[];
  labeled: LabeledInterval[];
}

function participantOpenTime(
  participant: AvailabilityParticipant,
  defaultOpenHours: readonly OpenHoursRule[] | undefined,
  from: number,
  to: number,
): OpenTime | null {
  const rules =
    participant.openHours && participant.openHours.length > 0 ? participant.openHours : (defaultOpenHours ?? []);
  const specifics = participant.specificTimeAvailability ?? [];
  const onlySpecific = participant.onlySpecificTimeAvailability === true;
  if (rules.length === 0 && specifics.length === 0 && !onlySpecific) return null;

  const specificRankBase = 0;
  const ruleRankBase = specifics.length;
  let base: LabeledInterval[];
  if (onlySpecific) base = [];
  else if (rules.length === 0) base = [{ start: from, end: to, timeZone: 'UTC', rank: Number.MAX_SAFE_INTEGER }];
  else base = rules.flatMap((rule, index) => ruleIntervals(rule, ruleRankBase + index, from, to));

  const fallbackZone = rules[0]?.timezone ?? 'UTC';
  const specificDays: Interval[] = [];
  const specificTimes: LabeledInterval[] = [];
  specifics.forEach((entry, index) => {
    const timeZone = entry.timezone ?? fallbackZone;
    if (!isValidTimeZone(timeZone)) throw new RangeError(`unknown time zone ${timeZone}`);
    const midnight = wallMidnight(entry.date);
    const startOfDay = parseClock(entry.start);
    const endOfDay = parseClock(entry.end, true);
    if (endOfDay <= startOfDay)
      throw new RangeError(`specific time end ${entry.end} must be after start ${entry.start}`);
    const zone = zoneFor(timeZone, from - DAY_MARGIN, to + DAY_MARGIN);
    specificDays.push(...zone.instantsOfWallRange(midnight, midnight + SECONDS_PER_DAY));
    for (const piece of zone.instantsOfWallRange(midnight + startOfDay, midnight + endOfDay)) {
      const start = Math.max(piece.start, from);
      const end = Math.min(piece.end, to);
      if (start < end) specificTimes.push({ start, end, timeZone, rank: specificRankBase + index });
    }
  });

  const removed = mergeIntervals(specificDays);
  const labeled: LabeledInterval[] = [...specificTimes];
  for (const interval of base) {
    for (const kept of subtractIntervals([interval], removed))
      labeled.push({ ...kept, timeZone: interval.timeZone, rank: interval.rank });
  }
  return { merged: mergeIntervals(labeled), labeled };
}

// ---------------------------------------------------------------------------------------------------------------
// Prepared participants and the one booking rule

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

function insideOpenHours(participant: PreparedParticipant, start: number, end: number): boolean {
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

// ---------------------------------------------------------------------------------------------------------------
// Free/busy and event intervals

/** A busy block of a free/busy answer. */
export interface BusyBlock {
  startTime: number;
  endTime: number;
}

/** Busy blocks within `[startTime, endTime)`: the intervals clipped to the window, overlapping ones merged. */
export function freeBusy(window: { startTime: number; endTime: number }, busy: readonly Interval[]): BusyBlock[] {
  const clipped = busy.map((interval) => ({
    start: Math.max(interval.start, window.startTime),
    end: Math.min(interval.end, window.endTime),
  }));
  return mergeIntervals(clipped).map((interval) => ({ startTime: interval.start, endTime: interval.end }));
}

/**
 * The instants covered by all-day dates `startDate` … `endDate` (inclusive) in `timeZone`: from the first
 * instant of the first date to the first instant of the day after the last (a day whose midnight is skipped
 * starts at the end of the gap).
 */
export function allDayInterval(startDate: string, endDate: string, timeZone: string): Interval {
  if (!isValidTimeZone(timeZone)) throw new RangeError(`unknown time zone ${timeZone}`);
  const first = wallMidnight(startDate);
  const afterLast = wallMidnight(endDate) + SECONDS_PER_DAY;
  if (afterLast <= first) throw new RangeError(`end date ${endDate} is before start date ${startDate}`);
  const zone = zoneFor(timeZone, first - DAY_MARGIN, afterLast + DAY_MARGIN);
  return { start: zone.firstInstantAtOrAfterWall(first), end: zone.firstInstantAtOrAfterWall(afterLast) };
}

/** The instant a wall-clock time in `timeZone` names (first occurrence; a skipped time maps to the gap's end). */
export function wallTimeToInstant(date: string, time: string, timeZone: string): number {
  if (!isValidTimeZone(timeZone)) throw new RangeError(`unknown time zone ${timeZone}`);
  const wall = wallMidnight(date) + parseClock(time, true);
  return zoneFor(timeZone, wall - DAY_MARGIN, wall + DAY_MARGIN).firstInstantAtOrAfterWall(wall);
}
