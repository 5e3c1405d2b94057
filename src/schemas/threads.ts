/**
 * @module schemas/threads
 * Threads on the wire, as in Nylas v3 `models/threads.ts`.
 */
import { z } from 'zod';
import { ThreadClaimSummarySchema } from './thread-claims.js';
import {
  BodyFormatSchema,
  GrantIdSchema,
  MaxTokensSchema,
  IdSchema,
  LimitSchema,
  PageTokenSchema,
  UnixSecondsSchema,
} from './common.js';
import { DraftSchema } from './drafts.js';
import { MessageSchema, ParticipantSchema, selectSchemaOf } from './messages.js';

/**
 * A thread's newest message, or its newest draft when a draft was saved last: one object schema (a Message whose
 * `object` may be "draft", with the draft-only fields) rather than a union, so tool schemas carry no second copy of
 * the message fields.
 */
export const LatestDraftOrMessageSchema = MessageSchema.extend({
  object: z
    .enum(['message', 'draft'])
    .describe('"draft" when a draft was saved last: then id is a draft id (in draft_ids), read it with the drafts API'),
  ...DraftSchema.pick({ reply_to_message_id: true, custom_headers: true, is_plaintext: true, send_at: true }).shape,
}).describe('The newest message or draft of the thread');

export const ThreadSchema = z
  .object({
    id: z.string().describe('Thread id'),
    grant_id: z.string(),
    object: z.literal('thread'),
    subject: z.string().optional().describe('Subject of the first message'),
    snippet: z.string().optional().describe('Snippet of the latest message'),
    participants: z
      .array(ParticipantSchema)
      .optional()
      .describe('Everyone who sent or received a message of the thread'),
    message_ids: z.array(z.string()).optional().describe("Ids of the thread's messages, oldest first"),
    draft_ids: z.array(z.string()).optional().describe('Ids of drafts in the thread'),
    folders: z.array(z.string()).optional().describe("Folders holding at least one of the thread's messages"),
    latest_draft_or_message: LatestDraftOrMessageSchema.optional(),
    earliest_message_date: UnixSecondsSchema.optional(),
    latest_message_received_date: UnixSecondsSchema.optional().describe(
      'When the newest received message arrived (drafts do not count)',
    ),
    latest_message_sent_date: UnixSecondsSchema.optional().describe(
      'When the newest message from this mailbox was sent (drafts do not count)',
    ),
    has_attachments: z.boolean().optional(),
    has_drafts: z.boolean().optional(),
    starred: z.boolean().optional().describe('True when any message is starred'),
    unread: z.boolean().optional().describe('True when any message is unread'),
    claim: ThreadClaimSummarySchema.optional().describe('Extension: claimed by an agent (claim_thread)'),
  })
  .meta({ id: 'Thread' });
export type Thread = z.infer<typeof ThreadSchema>;

/** `select` of threads: a field a thread does not have is an error. */
const ThreadSelectSchema = selectSchemaOf(ThreadSchema, 'thread');

const AddressFilterSchema = z.array(z.string().min(1).max(320)).max(50);

export const ListThreadsInputSchema = z.object({
  grant_id: GrantIdSchema,
  limit: LimitSchema,
  page_token: PageTokenSchema,
  subject: z.string().max(998).optional().describe('A subject contains this'),
  any_email: AddressFilterSchema.optional().describe('A message from or to any of these'),
  from: AddressFilterSchema.optional().describe('A message from one of these'),
  to: AddressFilterSchema.optional().describe('A message to one of these'),
  cc: AddressFilterSchema.optional().describe('A message copying one of these'),
  bcc: AddressFilterSchema.optional().describe('A message blind-copying one of these'),
  in: z.array(IdSchema).max(20).optional().describe('A message in one of these folder ids'),
  unread: z.boolean().optional().describe('With (true) or without (false) unread messages'),
  starred: z.boolean().optional().describe('With (true) or without (false) starred messages'),
  latest_message_before: UnixSecondsSchema.optional().describe('Newest message before (unix seconds)'),
  latest_message_after: UnixSecondsSchema.optional().describe('Newest message after (unix seconds)'),
  has_attachment: z.boolean().optional().describe('With attachments or not'),
  search_query_native: z.string().max(1000).optional().describe('Full-text search, as in list_messages'),
  select: ThreadSelectSchema,
});
export type ListThreadsInput = z.infer<typeof ListThreadsInputSchema>;

export const GetThreadInputSchema = z.object({
  grant_id: GrantIdSchema,
  thread_id: IdSchema.describe('Thread id'),
  select: ThreadSelectSchema,
  body_format: BodyFormatSchema,
  max_tokens: MaxTokensSchema,
});
export type GetThreadInput = z.infer<typeof GetThreadInputSchema>;

export const UpdateThreadInputSchema = z.object({
  grant_id: GrantIdSchema,
  thread_id: IdSchema.describe('Thread id'),
  unread: z.boolean().optional().describe('Mark every message read (false) or unread (true)'),
  starred: z.boolean().optional().describe('Star or unstar every message'),
  folders: z.array(IdSchema).min(1).max(20).optional().describe('Move every message to these folder ids'),
});
export type UpdateThreadInput = z.infer<typeof UpdateThreadInputSchema>;

export const DeleteThreadInputSchema = z.object({ grant_id: GrantIdSchema, thread_id: IdSchema.describe('Thread id') });
export type DeleteThreadInput = z.infer<typeof DeleteThreadInputSchema>;
