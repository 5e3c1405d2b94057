/**
 * @module schemas/drafts
 * Drafts on the wire, as in Nylas v3 `models/drafts.ts`: a draft is a message being written, with the fields
 * only sending uses (reply_to_message_id, tracking_options, custom_headers, send_at).
 */
import { z } from 'zod';
import { ClaimTokenFieldSchema } from './thread-claims.js';
import { GrantIdSchema, IdSchema, LimitSchema, PageTokenSchema, UnixSecondsSchema } from './common.js';
import { MessageSchema, selectSchemaOf } from './messages.js';
import { AllowAutomatedReplySchema, composeFields, CustomHeaderSchema, TrackingOptionsSchema } from './send.js';

export const DraftSchema = MessageSchema.omit({ object: true, raw_mime: true, headers: true })
  .extend({
    object: z.literal('draft'),
    reply_to_message_id: z.string().optional().describe('The message this draft answers'),
    tracking_options: TrackingOptionsSchema.optional(),
    custom_headers: z.array(CustomHeaderSchema).optional(),
    is_plaintext: z.boolean().optional(),
    send_at: UnixSecondsSchema.optional().describe('Set while a scheduled send of this draft is pending'),
  })
  .meta({ id: 'Draft' });
export type Draft = z.infer<typeof DraftSchema>;

export const CreateDraftInputSchema = z
  .object({
    ...composeFields,
    to: composeFields.to.optional(),
    cc: composeFields.cc.optional(),
    bcc: composeFields.bcc.optional(),
    starred: z.boolean().optional().describe('Star the draft'),
    send_at: UnixSecondsSchema.optional().describe('When send_draft sends it (unix seconds)'),
    claim_token: ClaimTokenFieldSchema,
  })
  .meta({ id: 'CreateDraftInput' });
export type CreateDraftInput = z.infer<typeof CreateDraftInputSchema>;

export const UpdateDraftInputSchema = z
  .object({
    ...composeFields,
    draft_id: IdSchema.describe('Draft id'),
    to: composeFields.to.optional(),
    cc: composeFields.cc.optional(),
    bcc: composeFields.bcc.optional(),
    starred: z.boolean().optional().describe('Star (true) or unstar (false)'),
    unread: z.boolean().optional().describe('Mark unread (true) or read (false)'),
    send_at: UnixSecondsSchema.optional().describe('When send_draft sends it (unix seconds)'),
    claim_token: ClaimTokenFieldSchema,
  })
  .meta({ id: 'UpdateDraftInput' });
export type UpdateDraftInput = z.infer<typeof UpdateDraftInputSchema>;

const AddressFilterSchema = z.array(z.string().min(1).max(320)).max(50);

export const ListDraftsInputSchema = z.object({
  grant_id: GrantIdSchema,
  limit: LimitSchema,
  page_token: PageTokenSchema,
  subject: z.string().max(998).optional().describe('Subject contains this'),
  any_email: AddressFilterSchema.optional().describe('To or from any of these addresses'),
  to: AddressFilterSchema.optional().describe('To one of these addresses'),
  cc: AddressFilterSchema.optional().describe('Copying one of these addresses'),
  bcc: AddressFilterSchema.optional().describe('Blind-copying one of these addresses'),
  unread: z.boolean().optional().describe('Unread or read only'),
  starred: z.boolean().optional().describe('Starred or not only'),
  thread_id: IdSchema.optional().describe('In this thread'),
  has_attachment: z.boolean().optional().describe('With attachments or not'),
  select: selectSchemaOf(DraftSchema, 'draft'),
});
export type ListDraftsInput = z.infer<typeof ListDraftsInputSchema>;

export const DraftRefInputSchema = z.object({ grant_id: GrantIdSchema, draft_id: IdSchema.describe('Draft id') });
export type DraftRefInput = z.infer<typeof DraftRefInputSchema>;

export const SendDraftInputSchema = DraftRefInputSchema.extend({
  allow_automated_reply: AllowAutomatedReplySchema,
  claim_token: ClaimTokenFieldSchema,
});
export type SendDraftInput = z.infer<typeof SendDraftInputSchema>;
