/**
 * @module schemas/availability
 * `POST /v3/calendars/availability` on the wire, as the Nylas SDK's `calendars.getAvailability` sends and reads it
 * (`models/availability.ts`), plus our `explain` extension.
 */
import { z } from 'zod';
import { IanaTimeZoneSchema } from './calendars.js';
import { UnixSecondsSchema } from './common.js';

/** Longest search window: about three months, as the largest providers allow. */
export const MAX_AVAILABILITY_WINDOW_DAYS = 93;
/** Most participants in one request. */
export const MAX_PARTICIPANTS = 50;
/** Most explanations returned; the earliest ones are kept and `explanations_truncated` says so. */
export const MAX_EXPLANATIONS = 2000;

const CLOCK = /^(?:[01]?\d|2[0-3]):[0-5]\d$/;
const CLOCK_OR_END_OF_DAY = /^(?:(?:[01]?\d|2[0-3]):[0-5]\d|24:00)$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function minutesOf(clock: string): number {
  const [hours, minutes] = clock.split(':').map(Number);
  return hours! * 60 + minutes!;
}

/** An IANA time zone name the server knows. */
export const OpenHoursTimeZoneSchema = IanaTimeZoneSchema.describe(
  'IANA time zone of the hours and dates, e.g. America/New_York',
);

export const LocalDateSchema = z.string().regex(DATE, 'a date such as 2025-03-09').describe('Local date, YYYY-MM-DD');

export const OpenHoursSchema = z
  .object({
    days: z
      .array(z.number().int().min(0).max(6))
      .max(7)
      .describe('Weekdays the hours apply to: 0 = Sunday … 6 = Saturday'),
    timezone: OpenHoursTimeZoneSchema,
    start: z
      .string()
      .regex(CLOCK, 'a 24-hour time such as 9:00')
      .describe('Opening time, 24-hour "H:MM" (e.g. "9:00")'),
    end: z
      .string()
      .regex(CLOCK_OR_END_OF_DAY, 'a 24-hour time such as 17:00, or 24:00')
      .describe('Closing time, 24-hour "H:MM" (e.g. "17:00"; "24:00" = midnight)'),
    exdates: z.array(LocalDateSchema).max(366).optional().describe('Local dates on which these hours do not apply'),
  })
  .refine(
    (hours) =>
      !CLOCK.test(hours.start) || !CLOCK_OR_END_OF_DAY.test(hours.end) || minutesOf(hours.end) > minutesOf(hours.start),
    {
      message: 'end must be after start (open hours cannot run past midnight; use 24:00 and a second rule)',
      path: ['end'],
    },
  )
  .describe('Weekly open hours: the wall clock of `timezone` decides, so they follow daylight-saving changes')
  .meta({ id: 'OpenHours' });
export type OpenHours = z.infer<typeof OpenHoursSchema>;

export const SpecificTimeAvailabilitySchema = z
  .object({
    date: LocalDateSchema,
    start: z.string().regex(CLOCK, 'a 24-hour time such as 9:00').describe('Opening time on that date, "H:MM"'),
    end: z
      .string()
      .regex(CLOCK_OR_END_OF_DAY, 'a 24-hour time such as 17:00, or 24:00')
      .describe('Closing time on that date, "H:MM"'),
    timezone: OpenHoursTimeZoneSchema.optional().describe(
      "Time zone of the date and times (default: the participant's first open hours' zone, else UTC)",
    ),
  })
  .refine(
    (entry) =>
      !CLOCK.test(entry.start) || !CLOCK_OR_END_OF_DAY.test(entry.end) || minutesOf(entry.end) > minutesOf(entry.start),
    {
      message: 'end must be after start',
      path: ['end'],
    },
  )
  .describe('Open time on one date, replacing the weekly open hours for that whole date');

export const AvailabilityParticipantSchema = z.object({
  email: z.email().max(320).describe('Participant address; must be a grant (Agent Account) of this application'),
  grant_id: z.string().max(256).optional().describe('Ignored: the participant is found by email'),
  calendar_ids: z
    .array(z.string().min(1).max(256))
    .max(20)
    .optional()
    .describe('Calendars whose busy events count (default: the primary calendar; "primary" is accepted)'),
  open_hours: z
    .array(OpenHoursSchema)
    .max(50)
    .optional()
    .describe('Open hours of this participant; replace default_open_hours'),
  specific_time_availability: z
    .array(SpecificTimeAvailabilitySchema)
    .max(100)
    .optional()
    .describe('Dates with their own open times'),
  only_specific_time_availability: z
    .boolean()
    .optional()
    .describe('When true, the participant is open only at specific_time_availability times'),
});

export const AvailabilityRulesSchema = z.object({
  availability_method: z
    .enum(['collective', 'max-fairness', 'max-availability'])
    .optional()
    .describe(
      'collective (default): everyone must be free. max-availability: round-robin, any one participant free. max-fairness: round-robin among the half booked least recently',
    ),
  buffer: z
    .object({
      before: z
        .number()
        .int()
        .min(0)
        .max(1440)
        .optional()
        .describe('Minutes kept free before existing meetings (default 0)'),
      after: z
        .number()
        .int()
        .min(0)
        .max(1440)
        .optional()
        .describe('Minutes kept free after existing meetings (default 0)'),
    })
    .optional()
    .describe('Free time kept around existing meetings; it does not shrink open hours'),
  default_open_hours: z
    .array(OpenHoursSchema)
    .max(50)
    .optional()
    .describe('Open hours of participants that have none of their own (default: always open)'),
  round_robin_group_id: z
    .string()
    .max(256)
    .optional()
    .describe('Round-robin group: events whose metadata key5 equals it count as bookings for the order'),
  round_robin_event_id: z
    .string()
    .max(256)
    .optional()
    .describe('Same as round_robin_group_id (the name the Node SDK sends)'),
  tentative_as_busy: z.boolean().optional().describe('Whether tentative (maybe) events count as busy (default true)'),
});

export const GetAvailabilityInputSchema = z
  .object({
    start_time: UnixSecondsSchema.describe('Window start, unix seconds'),
    end_time: UnixSecondsSchema.describe(`Window end (at most ${MAX_AVAILABILITY_WINDOW_DAYS} days after start_time)`),
    duration_minutes: z.number().int().min(1).max(1440).describe('Meeting length in minutes'),
    interval_minutes: z
      .number()
      .int()
      .min(1)
      .max(1440)
      .optional()
      .describe('Minutes between starts (default duration_minutes)'),
    round_to: z
      .number()
      .int()
      .min(5)
      .max(60)
      .multipleOf(5)
      .optional()
      .describe('Candidates start at local multiples of these minutes (5-60, default 15)'),
    round_to_30_minutes: z.boolean().optional().describe('Deprecated: round_to 30'),
    participants: z
      .array(AvailabilityParticipantSchema)
      .min(1)
      .max(MAX_PARTICIPANTS)
      .describe('[{email, open_hours?: [{days: [1..5], timezone, start: "9:00", end: "17:00"}]}]'),
    availability_rules: AvailabilityRulesSchema.optional().describe(
      '{availability_method: collective|max-fairness|max-availability, buffer: {before, after} minutes, default_open_hours}',
    ),
    explain: z.boolean().optional().describe('Also say why other starts were left out'),
  })
  .meta({ id: 'GetAvailabilityInput' });
export type GetAvailabilityInput = z.infer<typeof GetAvailabilityInputSchema>;

export const AvailabilityTimeSlotSchema = z.object({
  emails: z.array(z.string()).describe('Participants who can take the slot (round-robin: next in line first)'),
  start_time: UnixSecondsSchema,
  end_time: UnixSecondsSchema,
});

export const ExclusionReasonSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('busy'),
      email: z.string(),
      event_ids: z.array(z.string()).describe('Events overlapping the meeting'),
      hold_ids: z
        .array(z.string())
        .optional()
        .describe('Tentative holds (POST /v3/calendars/holds) whose slots overlap the meeting'),
    }),
    z.object({
      type: z.literal('buffer'),
      email: z.string(),
      event_ids: z.array(z.string()).describe('Events whose buffer (not the event itself) overlaps'),
      hold_ids: z.array(z.string()).optional().describe('Holds whose buffer (not the slot itself) overlaps'),
    }),
    z.object({ type: z.literal('outside_open_hours'), email: z.string() }),
    z.object({ type: z.literal('past_window') }),
  ])
  .describe(
    'busy: an event or a tentative hold of that participant overlaps; buffer: only the buffer around one does; outside_open_hours: the meeting does not fit in their open hours; past_window: it would end after end_time',
  );

export const ExplanationSchema = z.object({
  start_time: UnixSecondsSchema,
  end_time: UnixSecondsSchema,
  reasons: z.array(ExclusionReasonSchema).describe('Every reason the candidate is not offered'),
});

export const AvailabilitySchema = z
  .object({
    order: z.array(z.string()).describe('Round-robin order, next in line first (empty for collective)'),
    time_slots: z.array(AvailabilityTimeSlotSchema).describe('Bookable slots, earliest first'),
    explanations: z
      .array(ExplanationSchema)
      .optional()
      .describe('With explain: the candidate starts that were not offered, and why'),
    explanations_truncated: z
      .boolean()
      .optional()
      .describe(`True when there were more than ${MAX_EXPLANATIONS} explanations; narrow the window to see the rest`),
  })
  .meta({ id: 'Availability' });
export type Availability = z.infer<typeof AvailabilitySchema>;
