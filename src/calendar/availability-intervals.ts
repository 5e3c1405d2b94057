/**
 * @module calendar/availability-intervals
 * Half-open intervals of unix seconds for availability (./availability.ts): merged, intersected, subtracted, and
 * clipped to a window as the busy blocks of a free/busy answer.
 */

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

export function intersectIntervals(a: readonly Interval[], b: readonly Interval[]): Interval[] {
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

export function subtractIntervals(from: readonly Interval[], remove: readonly Interval[]): Interval[] {
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
export function lastStartingAtOrBefore(intervals: readonly Interval[], t: number): number {
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
