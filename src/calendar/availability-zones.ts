/**
 * @module calendar/availability-zones
 * Time zones for availability (./availability.ts): a zone's UTC offsets over a range of time as constant-offset
 * segments (sampled through `date-fns-tz` and memoised, tzdb being immutable within a process), wall clock to
 * instants and back, dates and times of day as written in open hours.
 */
import { format } from 'date-fns-tz';
import { mergeIntervals, type Interval } from './availability-intervals.js';

/** A stretch of time during which a zone's UTC offset is constant. */
interface ZoneSegment {
  start: number;
  end: number;
  /** Seconds to add to an instant to get its wall clock (as seconds since 1970-01-01T00:00 wall time). */
  offset: number;
}

export const SECONDS_PER_DAY = 86_400;
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
export function segmentIndexAt(segments: readonly ZoneSegment[], t: number): number {
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
export class Zone {
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
export function zoneFor(timeZone: string, from: number, to: number): Zone {
  const key = `${timeZone}|${from}|${to}`;
  let zone = zoneMemo.get(key);
  if (!zone) {
    if (zoneMemo.size > 256) zoneMemo.clear();
    zone = new Zone(timeZone, from, to);
    zoneMemo.set(key, zone);
  }
  return zone;
}

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
export function wallMidnight(date: string): number {
  const match = DATE_PATTERN.exec(date);
  if (!match) throw new RangeError(`"${date}" is not a date such as 2025-03-09`);
  const value = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) / 1000;
  if (!Number.isFinite(value) || new Date(value * 1000).toISOString().slice(0, 10) !== date) {
    throw new RangeError(`"${date}" is not a calendar date`);
  }
  return value;
}

export function dateOfWall(wall: number): string {
  return new Date(wall * 1000).toISOString().slice(0, 10);
}

/** Widening of a computed range so that wall dates on either side are covered. */
export const DAY_MARGIN = 2 * SECONDS_PER_DAY;

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
