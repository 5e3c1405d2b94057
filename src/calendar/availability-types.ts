/**
 * @module calendar/availability-types
 * The types of free/busy and availability (./availability.ts): participants with their busy time and open hours in,
 * slots and the reasons a candidate is not one out.
 */

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
