/**
 * @module schemas/free-busy
 * `POST /v3/grants/{grant_id}/calendars/free-busy` on the wire, as the Nylas SDK's `calendars.getFreeBusy` sends
 * and reads it (`models/freeBusy.ts`): one entry per email, errors inline.
 */
import { z } from 'zod';
import { GrantIdSchema, UnixSecondsSchema } from './common.js';

/** Most addresses in one request (Google's limit; Microsoft allows 20). */
export const MAX_FREE_BUSY_EMAILS = 50;
/** Longest window: about three months. */
export const MAX_FREE_BUSY_WINDOW_DAYS = 93;

export const GetFreeBusyInputSchema = z
  .object({
    grant_id: GrantIdSchema,
    start_time: UnixSecondsSchema.describe('Window start, unix seconds'),
    end_time: UnixSecondsSchema.describe(`Window end (at most ${MAX_FREE_BUSY_WINDOW_DAYS} days after start_time)`),
    emails: z
      .array(z.string().min(1).max(320))
      .min(1)
      .max(MAX_FREE_BUSY_EMAILS)
      .describe('Agent Account addresses of this application'),
    tentative_as_busy: z.boolean().optional().describe('Tentative events count as busy (default true)'),
  })
  .meta({ id: 'GetFreeBusyInput' });
export type GetFreeBusyInput = z.infer<typeof GetFreeBusyInputSchema>;

export const FreeBusyTimeSlotSchema = z.object({
  start_time: UnixSecondsSchema,
  end_time: UnixSecondsSchema,
  status: z.literal('busy').describe('Always busy: free time is the gaps between slots'),
  object: z.literal('time_slot'),
});

export const FreeBusyEntrySchema = z
  .discriminatedUnion('object', [
    z.object({
      email: z.string(),
      object: z.literal('free_busy'),
      time_slots: z
        .array(FreeBusyTimeSlotSchema)
        .describe('Busy blocks in the window (overlapping events merged), earliest first'),
    }),
    z.object({
      email: z.string(),
      object: z.literal('error'),
      error: z.string().describe('Why no free/busy data could be given for this address'),
    }),
  ])
  .meta({ id: 'FreeBusy' });
export type FreeBusyEntry = z.infer<typeof FreeBusyEntrySchema>;

export const FreeBusyListSchema = z.object({
  data: z.array(FreeBusyEntrySchema).describe('One entry per requested email, in request order'),
});
export type FreeBusyList = z.infer<typeof FreeBusyListSchema>;
