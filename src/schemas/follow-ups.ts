/**
 * @module schemas/follow-ups
 * Follow-ups on the wire (an extension, issue 40 item 6): a reply sent into the thread of a sent message when nobody
 * else has answered in it by then. Asked for with `follow_up` on a send, or afterwards on a sent message
 * (`POST /v3/grants/{id}/messages/{message_id}/follow-up`); listed, read and cancelled under
 * `/v3/grants/{id}/follow-ups`. A reply in the thread cancels it (`message.follow_up_cancelled`); sent, it is
 * `message.follow_up_sent`.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, UnixSecondsSchema } from './common.js';

/** Shortest and longest wait of a follow-up: a minute; 30 days (as far as a send may be scheduled). */
export const MIN_FOLLOW_UP_SECONDS = 60;
export const MAX_FOLLOW_UP_SECONDS = 30 * 86_400;
/** Longest follow-up text. */
export const MAX_FOLLOW_UP_BODY = 100_000;

const AfterSecondsSchema = z
  .number()
  .int()
  .min(MIN_FOLLOW_UP_SECONDS)
  .max(MAX_FOLLOW_UP_SECONDS)
  .describe('Seconds to wait (≥ 60)');
const FollowUpBodySchema = z.string().min(1).max(MAX_FOLLOW_UP_BODY).describe('Follow-up text');

/** The `follow_up` field of a send: the follow-up to send if no reply comes. */
export const FollowUpFieldSchema = z
  .object({ after_seconds: AfterSecondsSchema, body: FollowUpBodySchema })
  .optional()
  .describe('Reply in thread with body if no answer in after_seconds');
export type FollowUpField = z.infer<typeof FollowUpFieldSchema>;

export const CreateFollowUpInputSchema = z
  .object({
    grant_id: GrantIdSchema,
    message_id: IdSchema.describe('A message this grant sent'),
    after_seconds: AfterSecondsSchema,
    body: FollowUpBodySchema,
  })
  .meta({ id: 'CreateFollowUpInput' });
export type CreateFollowUpInput = z.infer<typeof CreateFollowUpInputSchema>;

export const FollowUpRefInputSchema = z
  .object({ grant_id: GrantIdSchema, follow_up_id: IdSchema.describe('Follow-up id') })
  .meta({ id: 'FollowUpRefInput' });
export type FollowUpRefInput = z.infer<typeof FollowUpRefInputSchema>;

export const FollowUpStatusSchema = z
  .enum(['pending', 'sent', 'cancelled', 'failed'])
  .describe('pending: waiting; sent; cancelled: a reply came or it was cancelled; failed: the send was refused');

export const ListFollowUpsInputSchema = z
  .object({
    grant_id: GrantIdSchema,
    status: FollowUpStatusSchema.optional().describe('Only follow-ups in this state'),
    limit: z.number().int().min(1).max(200).optional().describe('Most to return (default 50)'),
  })
  .meta({ id: 'ListFollowUpsInput' });
export type ListFollowUpsInput = z.infer<typeof ListFollowUpsInputSchema>;

export const FollowUpSchema = z
  .object({
    id: z.string().describe('Follow-up id'),
    object: z.literal('follow_up'),
    grant_id: z.string().describe('The grant that sent the message'),
    message_id: z.string().describe('The message followed up'),
    thread_id: z.string().describe('Its thread, where the follow-up goes as a reply'),
    status: FollowUpStatusSchema,
    body: z.string().describe('Text of the follow-up'),
    due_at: UnixSecondsSchema.describe('When it is sent unless a reply comes first'),
    sent_message_id: z.string().optional().describe('The follow-up as sent'),
    reply_message_id: z.string().optional().describe('The reply that cancelled it'),
    reason: z.string().optional().describe('Why it was cancelled or failed'),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'FollowUp' });
export type FollowUp = z.infer<typeof FollowUpSchema>;

export const FollowUpListSchema = z.object({
  data: z.array(FollowUpSchema).describe('Follow-ups, newest first'),
});
