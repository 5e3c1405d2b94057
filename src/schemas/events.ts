/**
 * @module schemas/events
 * Events on the wire, as in Nylas v3 `models/events.ts`.
 */
import { z } from 'zod';
import { CalendarIdSchema, MetadataPairSchema } from './calendars.js';
import { GrantIdSchema, IdSchema, LimitSchema, MetadataSchema, PageTokenSchema, UnixSecondsSchema } from './common.js';

/**
 * The last instant an event may start or end at, unix seconds: 2199-12-31T23:59:59Z. Event times before 1970 cannot
 * be written as unix seconds here (UnixSecondsSchema); all-day dates go back to 1900. Incoming iCalendar is held to
 * the same years (ical-values.ts, ICAL_LIMITS.firstYear/lastYear).
 */
export const MAX_EVENT_TIME = 7_258_118_399;

/** Widest window of a list with expand_recurring, days: a year, leap day included. */
export const MAX_EXPANDED_WINDOW_DAYS = 366;

const EventTimeSchema = UnixSecondsSchema.max(
  MAX_EVENT_TIME,
  `an event time is at most ${MAX_EVENT_TIME} (2199-12-31T23:59:59Z)`,
);

const DateStringSchema = z
  .string()
  .regex(/^(19|20|21)\d{2}-\d{2}-\d{2}$/, 'a date from 1900-01-01 to 2199-12-31, such as 2025-06-01');

export const ParticipantStatusSchema = z
  .enum(['yes', 'no', 'maybe', 'noreply'])
  .describe('yes, no, maybe, or noreply (not answered yet)');
export const EventStatusSchema = z
  .enum(['confirmed', 'maybe', 'cancelled'])
  .describe('confirmed, maybe (tentative) or cancelled');
export const VisibilitySchema = z.enum(['default', 'public', 'private']).describe('default, public or private');

/**
 * A request's `when`: exactly one of four shapes, told apart by their fields (`object` is optional).
 * Not a union, so that a wrong field is reported by name.
 */
export const WhenInputSchema = z
  .object({
    object: z
      .enum(['time', 'timespan', 'date', 'datespan'])
      .optional()
      .describe('Shape, inferred from the fields when omitted'),
    time: EventTimeSchema.optional().describe(
      'time: the moment (unix seconds, 1970 to the end of 2199), for a point-in-time event',
    ),
    timezone: z.string().max(64).optional().describe("time: IANA time zone (default: the calendar's)"),
    start_time: EventTimeSchema.optional().describe('timespan: start (unix seconds, 1970 to the end of 2199)'),
    end_time: EventTimeSchema.optional().describe(
      'timespan: end (unix seconds), at or after start_time, at most 7258118399 (end of 2199)',
    ),
    start_timezone: z
      .string()
      .max(64)
      .optional()
      .describe("timespan: IANA time zone of the start (give with end_timezone; default: the calendar's)"),
    end_timezone: z.string().max(64).optional().describe('timespan: IANA time zone of the end'),
    date: DateStringSchema.optional().describe('date: an all-day event on this date (YYYY-MM-DD, 1900 to 2199)'),
    start_date: DateStringSchema.optional().describe('datespan: first day of a multi-day all-day event'),
    end_date: DateStringSchema.optional().describe('datespan: last day (inclusive)'),
  })
  .describe(
    '{start_time, end_time} (unix s; optional IANA start_timezone, end_timezone), {time, timezone}, {date} or {start_date, end_date}',
  );
export type WhenInputWire = z.infer<typeof WhenInputSchema>;

export const WhenSchema = z
  .discriminatedUnion('object', [
    z.object({ object: z.literal('time'), time: UnixSecondsSchema, timezone: z.string() }),
    z.object({
      object: z.literal('timespan'),
      start_time: UnixSecondsSchema,
      end_time: UnixSecondsSchema,
      start_timezone: z.string(),
      end_timezone: z.string(),
    }),
    z.object({ object: z.literal('date'), date: z.string() }),
    z.object({ object: z.literal('datespan'), start_date: z.string(), end_date: z.string().describe('Inclusive') }),
  ])
  .describe('When the event happens; `object` says which shape');

export const ParticipantInputSchema = z.object({
  email: z.email().max(320).describe('Participant address (invitations are sent here)'),
  name: z.string().max(256).optional().describe('Display name'),
  status: ParticipantStatusSchema.optional().describe(
    'Their answer; leave out for new participants (noreply) and existing ones (kept)',
  ),
  comment: z.string().max(1024).optional().describe('Their comment'),
  phone_number: z.string().max(64).optional(),
});

export const ParticipantSchema = z.object({
  email: z.string(),
  name: z.string().optional(),
  status: ParticipantStatusSchema,
  comment: z.string().optional(),
  phone_number: z.string().optional(),
});

export const EmailNameSchema = z.object({
  email: z.string().describe('Address'),
  name: z.string().optional().describe('Display name'),
});

export const ConferencingDetailsSchema = z.object({
  url: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional()
    .describe('Meeting link'),
  meeting_code: z.string().max(256).optional(),
  password: z.string().max(256).optional(),
  pin: z.string().max(256).optional(),
  phone: z.array(z.string().max(64)).max(20).optional(),
});

export const ConferencingInputSchema = z
  .object({
    provider: z.string().min(1).max(64).describe('Google Meet, Zoom Meeting, Microsoft Teams, WebEx, GoToMeeting, …'),
    details: ConferencingDetailsSchema.optional().describe("The meeting's link and codes"),
    autocreate: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('Not supported here: create the meeting yourself and pass details'),
  })
  .describe('Video-conference details');

export const ConferencingSchema = z.object({
  provider: z.string().describe('Conferencing provider (unknown when not recognised)'),
  details: z.object({
    url: z.string().optional().describe('Meeting link'),
    meeting_code: z.string().optional(),
    password: z.string().optional(),
    pin: z.string().optional(),
    phone: z.array(z.string()).optional(),
  }),
});

export const RemindersSchema = z
  .object({
    use_default: z.boolean().describe("Use the calendar's default reminders"),
    overrides: z
      .array(
        z.object({
          reminder_minutes: z.number().int().min(0).max(40_320).describe('Minutes before the start'),
          reminder_method: z.enum(['email', 'popup', 'sound', 'display']).describe('How to remind'),
        }),
      )
      .max(5)
      .optional()
      .describe('Reminders used when use_default is false'),
  })
  .describe('Reminders');

export const EventSchema = z
  .object({
    id: z.string().describe('Event id; an instance of a recurring event has the id <master id>_<YYYYMMDDTHHMMSSZ>'),
    grant_id: z.string(),
    calendar_id: z.string().describe('The calendar\'s real id (also when you asked with "primary")'),
    object: z.literal('event'),
    title: z.string().nullable(),
    description: z.string().nullable(),
    location: z.string().nullable(),
    when: WhenSchema,
    participants: z.array(ParticipantSchema).describe('Invitees and their answers'),
    resources: z.array(EmailNameSchema).optional().describe('Rooms and equipment'),
    organizer: EmailNameSchema.nullable().describe('Who organizes the event (the grant for events it made)'),
    creator: EmailNameSchema.nullable(),
    status: EventStatusSchema,
    busy: z.boolean().describe('Whether the time counts as busy in free/busy'),
    read_only: z.boolean().describe('True for invitations from someone else: answer them with send_rsvp'),
    visibility: VisibilitySchema,
    recurrence: z.array(z.string()).optional().describe('RRULE / EXDATE lines (series masters only)'),
    master_event_id: z.string().optional().describe('For an instance of a recurring event: the series'),
    original_start_time: UnixSecondsSchema.optional().describe(
      'For an instance: its start in the series before any change',
    ),
    ical_uid: z.string().describe("iCalendar UID, shared with the invitees' copies"),
    hide_participants: z.boolean(),
    capacity: z.number().int().optional(),
    conferencing: ConferencingSchema.optional(),
    reminders: z.object({
      use_default: z.boolean(),
      overrides: z.array(z.object({ reminder_minutes: z.number().int(), reminder_method: z.string() })),
    }),
    metadata: z.record(z.string(), z.string()).optional(),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Event' });
export type Event = z.infer<typeof EventSchema>;

export const ListEventsInputSchema = z.object({
  grant_id: GrantIdSchema,
  calendar_id: CalendarIdSchema,
  limit: LimitSchema,
  page_token: PageTokenSchema,
  start: UnixSecondsSchema.optional().describe('Window start, unix seconds (default now)'),
  end: UnixSecondsSchema.optional().describe('Window end (default start + 30 days)'),
  expand_recurring: z
    .boolean()
    .optional()
    .describe(`Each occurrence as an event (window then at most ${MAX_EXPANDED_WINDOW_DAYS} days)`),
  show_cancelled: z.boolean().optional().describe('Include cancelled events'),
  title: z.string().max(1024).optional().describe('Title contains this'),
  description: z.string().max(1024).optional().describe('Description contains this'),
  location: z.string().max(1024).optional().describe('Location contains this'),
  ical_uid: z.string().max(1024).optional().describe('Exactly this iCalendar UID'),
  master_event_id: IdSchema.optional().describe('Only instances and changed instances of this recurring event'),
  busy: z.boolean().optional().describe('Busy (true) or free (false) only'),
  attendees: z.array(z.string().max(320)).max(50).optional().describe('With one of these participants'),
  metadata_pair: MetadataPairSchema.optional().describe(
    'Only events whose metadata has key:value; the time window is not applied',
  ),
  updated_after: UnixSecondsSchema.optional().describe('Only events changed after this time'),
  updated_before: UnixSecondsSchema.optional().describe('Only events changed before this time'),
});
export type ListEventsInput = z.infer<typeof ListEventsInputSchema>;

export const ListImportEventsInputSchema = ListEventsInputSchema.pick({
  grant_id: true,
  calendar_id: true,
  limit: true,
  page_token: true,
  start: true,
  end: true,
});
export type ListImportEventsInput = z.infer<typeof ListImportEventsInputSchema>;

/** An event, or one occurrence of a series by its instance id. */
const EventIdSchema = IdSchema.describe('Event id (occurrence: <series id>_<start>)');

export const EventRefInputSchema = z.object({
  grant_id: GrantIdSchema,
  event_id: EventIdSchema,
  calendar_id: CalendarIdSchema,
});
export type EventRefInput = z.infer<typeof EventRefInputSchema>;

const notifyParticipants = z.boolean().optional().describe('Email participants (default true)');

const eventFields = {
  title: z.string().max(1024).optional().describe('Title'),
  description: z.string().max(65_536).optional().describe('Plain text or HTML'),
  location: z.string().max(1024).optional().describe('Where'),
  busy: z.boolean().optional().describe('Busy in free/busy (default true)'),
  participants: z
    .array(ParticipantInputSchema)
    .max(500)
    .optional()
    .describe('Invitees [{email, name?}]; replaces the list'),
  resources: z
    .array(z.object({ email: z.email().max(320), name: z.string().max(256).optional() }))
    .max(50)
    .optional()
    .describe('Rooms and equipment'),
  conferencing: ConferencingInputSchema.optional().describe('Video call: {provider, details: {url}}'),
  reminders: RemindersSchema.optional().describe('{use_default} or overrides: [{reminder_minutes, reminder_method}]'),
  recurrence: z
    .array(z.string().max(4096))
    .max(50)
    .optional()
    .describe('RRULE/EXDATE lines, e.g. ["RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10"]'),
  metadata: MetadataSchema.optional().describe(
    'Your key-value strings; list_events filters on metadata_pair=key:value',
  ),
  visibility: VisibilitySchema.optional().describe('Who may see the details'),
  status: EventStatusSchema.optional().describe('Default confirmed'),
  read_only: z.boolean().optional().describe('Participants may not change it'),
  capacity: z.number().int().min(1).max(100_000).optional().describe('Maximum participants'),
  hide_participants: z.boolean().optional().describe('Hide the guest list from participants'),
};

export const CreateEventInputSchema = z
  .object({
    grant_id: GrantIdSchema,
    calendar_id: CalendarIdSchema,
    notify_participants: notifyParticipants,
    when: WhenInputSchema,
    ...eventFields,
  })
  .meta({ id: 'CreateEventInput' });
export type CreateEventInput = z.infer<typeof CreateEventInputSchema>;

export const UpdateEventInputSchema = z
  .object({
    grant_id: GrantIdSchema,
    event_id: EventIdSchema,
    calendar_id: CalendarIdSchema,
    notify_participants: notifyParticipants,
    when: WhenInputSchema.optional(),
    ...eventFields,
  })
  .meta({ id: 'UpdateEventInput' });
export type UpdateEventInput = z.infer<typeof UpdateEventInputSchema>;

export const DeleteEventInputSchema = z.object({
  grant_id: GrantIdSchema,
  event_id: EventIdSchema,
  calendar_id: CalendarIdSchema,
  notify_participants: notifyParticipants,
});
export type DeleteEventInput = z.infer<typeof DeleteEventInputSchema>;

export const SendRsvpInputSchema = z.object({
  grant_id: GrantIdSchema,
  event_id: EventIdSchema,
  calendar_id: CalendarIdSchema,
  status: z.enum(['yes', 'no', 'maybe']).describe('Your answer'),
  comment: z.string().max(1024).optional().describe('Note to the organizer'),
});
export type SendRsvpInput = z.infer<typeof SendRsvpInputSchema>;

export const SendRsvpResultSchema = z
  .object({
    send_ics_error: z
      .object({ type: z.string(), message: z.string() })
      .optional()
      .describe('Set when your answer was saved but the reply email could not be sent'),
  })
  .meta({ id: 'SendRsvpResult' });
export type SendRsvpResult = z.infer<typeof SendRsvpResultSchema>;
