/**
 * @module time
 * Time helpers shared by every area.
 */

/** Seconds since the epoch, the unit of every timestamp on the wire. */
export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** Unix day (UTC) of unix milliseconds. */
export const unixDayOfMs = (ms: number): number => Math.floor(ms / 86_400_000);

/** The first UTC day (unix days) of a rolling window of `windowDays` days that ends on the day of `nowMs`. */
export function windowStartDay(nowMs: number, windowDays: number): number {
  return Math.floor(nowMs / 86_400_000) - windowDays + 1;
}
