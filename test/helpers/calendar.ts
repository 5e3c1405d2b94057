/** Time helpers shared by the calendar tests. */

/** Unix seconds of an ISO instant. */
export const utc = (instant: string): number => Date.parse(instant) / 1000;

/** An ISO instant of unix seconds, without milliseconds (`2025-03-03T14:00:00Z`). */
export const iso = (unix: number): string => new Date(unix * 1000).toISOString().replace('.000', '');

/** A `when` of `hours` hours from `isoStart`, in New York time (as the nylas SDK sends it). */
export const nyHour = (isoStart: string, hours = 1) => ({ startTime: utc(isoStart), endTime: utc(isoStart) + hours * 3600, startTimezone: 'America/New_York', endTimezone: 'America/New_York' });
