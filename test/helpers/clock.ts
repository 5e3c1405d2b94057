/** Clocks and id generators tests control. */
import type { Clock, IdGenerator } from '../../src/index.js';

/** A clock standing at `iso` until moved with `advance` or `set`. */
export function fixedClock(
  iso = '2026-03-30T00:30:00Z',
): Clock & { advance(ms: number): void; set(iso: string): void } {
  let now = new Date(iso).getTime();
  return {
    now: () => new Date(now),
    advance: (ms) => {
      now += ms;
    },
    set: (value) => {
      now = new Date(value).getTime();
    },
  };
}

/** `prefix_0001`, `prefix_0002`, …: readable, ordered ids. */
export function sequentialIds(prefix = 'id'): IdGenerator {
  let next = 0;
  return () => `${prefix}_${String(++next).padStart(4, '0')}`;
}
