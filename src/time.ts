/**
 * @module time
 * Time helpers shared by every area.
 */

/** Seconds since the epoch, the unit of every timestamp on the wire. */
export function unixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
