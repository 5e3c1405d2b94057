/**
 * @module schemas/calendars
 * Calendars on the wire, as in Nylas v3 `models/calendars.ts`.
 */
import { z } from 'zod';
import { isIanaTimeZone } from '../time-zones.js';
import { GrantIdSchema, LimitSchema, MetadataSchema, PageTokenSchema } from './common.js';

/** An IANA time-zone name; checked against the runtime's tz database. */
export const IanaTimeZoneSchema = z
  .string()
  .max(64)
  .refine(isIanaTimeZone, 'not an IANA time zone; use a name such as America/New_York or UTC')
  .describe('IANA time zone, such as America/New_York or UTC');

/** `#RRGGBB`. */
export const HexColorSchema = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'a colour such as #0099EE');

/** `metadata_pair` of list filters: `key:value`, comma-separated for several (all must match). */
export const MetadataPairSchema = z
  .string()
  .max(2048)
  .regex(/^[^:,]+:[^,]*(,[^:,]+:[^,]*)*$/, 'use key:value (comma-separated for several)')
  .describe('Only objects whose metadata has this key:value (comma-separate several pairs; all must match)');

/** The id of a calendar in a path or query: a calendar id, or `primary`. */
export const CalendarIdSchema = z.string().min(1).max(256).describe('Id or "primary"');

/** Longest lead of `event.starting`: a day (the timers look this far ahead at most). */
export const MAX_NOTIFY_BEFORE_START_MINUTES = 1440;

/** A calendar's lead for `event.starting` (extension; issue 40, item 7). */
export const NotifyBeforeStartSchema = z
  .number()
  .int()
  .min(0)
  .max(MAX_NOTIFY_BEFORE_START_MINUTES)
  .nullable()
  .describe(
    'Extension: minutes before an event starts that its event.starting notification fires (0: at the start; null: the default, 10)',
  );

/** Whether a calendar's events fire timers (extension; issue 40, item 7). */
export const EventTimersSchema = z
  .boolean()
  .describe('Extension: false turns off event.starting and event.ending for this calendar (default true)');

export const CalendarSchema = z
  .object({
    id: z.string().describe('Calendar id'),
    grant_id: z.string(),
    object: z.literal('calendar'),
    name: z.string(),
    description: z.string().nullable().describe('Free-form description'),
    location: z.string().nullable().describe('Geographic location, free-form'),
    timezone: z.string().describe('IANA time zone of the calendar; events created without a time zone use it'),
    read_only: z.boolean().describe('Always false: the grant owns its calendars'),
    is_owned_by_user: z.boolean().describe('Always true for Agent Account calendars'),
    is_primary: z.boolean().describe('True for the calendar every grant is created with (invitations land there)'),
    hex_color: z.string().optional().describe('Display colour, #RRGGBB'),
    metadata: z.record(z.string(), z.string()).optional(),
    notify_before_start_minutes: z
      .number()
      .int()
      .optional()
      .describe(
        'Extension: minutes before an event starts that event.starting fires (absent: the default, 10 minutes)',
      ),
    event_timers: z
      .boolean()
      .optional()
      .describe('Extension: false when the calendar fires no event.starting and event.ending (absent: true)'),
  })
  .meta({ id: 'Calendar' });
export type Calendar = z.infer<typeof CalendarSchema>;

export const ListCalendarsInputSchema = z.object({
  grant_id: GrantIdSchema,
  limit: LimitSchema,
  page_token: PageTokenSchema,
  metadata_pair: MetadataPairSchema.optional(),
});
export type ListCalendarsInput = z.infer<typeof ListCalendarsInputSchema>;

export const CalendarRefInputSchema = z.object({ grant_id: GrantIdSchema, calendar_id: CalendarIdSchema });
export type CalendarRefInput = z.infer<typeof CalendarRefInputSchema>;

export const CreateCalendarInputSchema = z.object({
  grant_id: GrantIdSchema,
  name: z.string().trim().min(1).max(1024).describe('Calendar name'),
  description: z.string().max(8192).optional().describe('Free-form description'),
  location: z.string().max(1024).optional().describe('Geographic location, free-form'),
  timezone: IanaTimeZoneSchema.optional().describe('IANA time zone (default UTC)'),
  metadata: MetadataSchema.optional().describe(
    'Your key-value metadata (at most 50 keys of up to 40 characters, string values of up to 500); filter lists with metadata_pair=key:value',
  ),
  notify_before_start_minutes: NotifyBeforeStartSchema.optional(),
  event_timers: EventTimersSchema.optional(),
});
export type CreateCalendarInput = z.infer<typeof CreateCalendarInputSchema>;

export const UpdateCalendarInputSchema = z.object({
  grant_id: GrantIdSchema,
  calendar_id: CalendarIdSchema,
  name: z.string().trim().min(1).max(1024).optional().describe('New name'),
  description: z.string().max(8192).optional().describe('New description'),
  location: z.string().max(1024).optional().describe('New location'),
  timezone: IanaTimeZoneSchema.optional(),
  hex_color: HexColorSchema.optional().describe('Display colour, #RRGGBB'),
  metadata: MetadataSchema.optional().describe(
    'Replaces the whole metadata object (at most 50 keys of up to 40 characters, string values of up to 500)',
  ),
  notify_before_start_minutes: NotifyBeforeStartSchema.optional(),
  event_timers: EventTimersSchema.optional(),
});
export type UpdateCalendarInput = z.infer<typeof UpdateCalendarInputSchema>;
