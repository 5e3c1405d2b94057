/**
 * @module schemas/holds
 * Tentative holds on the wire (an extension, issue 40 item 5): `POST /v3/calendars/holds` holds candidate slots for
 * several participants for a time; free/busy and availability count a live hold's slots as busy; confirming one
 * slot makes it an event with invitations; `DELETE` releases it; past its ttl it expires (`event.hold_expired`).
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, UnixSecondsSchema } from './common.js';
import { CalendarIdSchema } from './calendars.js';

/** Most participants of one hold (the organizer is held too, beside them). */
export const MAX_HOLD_PARTICIPANTS = 20;
/** Most candidate slots of one hold. */
export const MAX_HOLD_SLOTS = 10;
/** Shortest and longest time a hold may live, in seconds (10 seconds; 7 days). */
export const MIN_HOLD_TTL_SECONDS = 10;
export const MAX_HOLD_TTL_SECONDS = 7 * 86_400;
/** Ttl when none is given: 15 minutes. */
export const DEFAULT_HOLD_TTL_SECONDS = 900;
/** Longest slot: one day. */
export const MAX_HOLD_SLOT_SECONDS = 86_400;

export const HoldSlotSchema = z.object({
  start_time: UnixSecondsSchema.describe('Slot start, unix seconds'),
  end_time: UnixSecondsSchema.describe('Slot end, unix seconds (after start_time, at most a day later)'),
});

export const CreateHoldInputSchema = z
  .object({
    grant_id: GrantIdSchema.describe(
      'The organizer: the grant that holds, is told of the expiry and whose calendar gets the event',
    ),
    participants: z
      .array(z.object({ email: z.email().max(320).describe('Participant address') }))
      .min(1)
      .max(MAX_HOLD_PARTICIPANTS)
      .describe(`Who is held, at most ${MAX_HOLD_PARTICIPANTS} (the organizer is held too)`),
    slots: z
      .array(HoldSlotSchema)
      .min(1)
      .max(MAX_HOLD_SLOTS)
      .describe(`Candidate slots, at most ${MAX_HOLD_SLOTS}; each is busy for every participant while held`),
    ttl_seconds: z
      .number()
      .int()
      .min(MIN_HOLD_TTL_SECONDS)
      .max(MAX_HOLD_TTL_SECONDS)
      .optional()
      .describe(
        `How long the hold lives, ${MIN_HOLD_TTL_SECONDS}-${MAX_HOLD_TTL_SECONDS} seconds (default ${DEFAULT_HOLD_TTL_SECONDS})`,
      ),
    title: z.string().max(1024).optional().describe('What the meeting is about (the default title on confirmation)'),
  })
  .meta({ id: 'CreateHoldInput' });
export type CreateHoldInput = z.infer<typeof CreateHoldInputSchema>;

export const HoldRefInputSchema = z.object({ hold_id: IdSchema.describe('Hold id') });
export type HoldRefInput = z.infer<typeof HoldRefInputSchema>;

export const ConfirmHoldInputSchema = z
  .object({
    hold_id: IdSchema.describe('Hold id'),
    start_time: UnixSecondsSchema.describe('Start of the chosen slot (one of the hold’s slots)'),
    end_time: UnixSecondsSchema.describe('End of the chosen slot'),
    calendar_id: CalendarIdSchema.optional().describe('Organizer calendar for the event (default primary)'),
    title: z.string().max(1024).optional().describe('Event title (default the hold’s title)'),
    description: z.string().max(65_536).optional().describe('Event description'),
    location: z.string().max(1024).optional().describe('Where'),
  })
  .meta({ id: 'ConfirmHoldInput' });
export type ConfirmHoldInput = z.infer<typeof ConfirmHoldInputSchema>;

export const HoldSchema = z
  .object({
    hold_id: z.string().describe('Hold id'),
    object: z.literal('hold'),
    grant_id: z.string().describe('The organizer grant'),
    status: z
      .enum(['held', 'confirmed', 'released', 'expired'])
      .describe('held: its slots are busy; confirmed: an event was made; released or expired: its slots are free'),
    participants: z.array(z.object({ email: z.string() })).describe('Who is held (the organizer first)'),
    slots: z.array(HoldSlotSchema).describe('The candidate slots'),
    title: z.string().optional(),
    expires_at: UnixSecondsSchema.describe('When the hold lapses if not confirmed or released'),
    event_id: z.string().optional().describe('The event the confirmation made'),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Hold' });
export type Hold = z.infer<typeof HoldSchema>;

export const ConfirmedHoldSchema = z
  .object({
    hold: HoldSchema,
    event_id: z.string().describe('The event made from the chosen slot; its participants were invited'),
  })
  .meta({ id: 'ConfirmedHold' });
export type ConfirmedHold = z.infer<typeof ConfirmedHoldSchema>;
