/**
 * Draft operations: write a message over several steps, then send it.
 */
import { DeletedSchema, pageOf } from '../schemas/common.js';
import {
  CreateDraftInputSchema,
  DraftRefInputSchema,
  DraftSchema,
  ListDraftsInputSchema,
  SendDraftInputSchema,
  UpdateDraftInputSchema,
} from '../schemas/drafts.js';
import { SendMessageResultSchema, sendResultStatus as sendStatus } from '../schemas/send.js';
import { fieldText } from './agent.js';
import { defineOperation } from './define-operation.js';

export const createDraft = defineOperation({
  name: 'create_draft',
  title: 'Create a draft',
  description: "Saves an unsent message (send_message's fields). Then send_draft or update_draft.",
  input: CreateDraftInputSchema,
  output: DraftSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/grants/:grant_id/drafts', multipart: 'message' },
  tool: true,
  agent: {
    // claim_token: a draft by the claim's own key needs none (tools/list stays within its 24,000 characters).
    omit: ['from', 'reply_to', 'custom_headers', 'claim_token'],
    headline: (draft) =>
      `Created draft ${fieldText(draft.id ?? '')}${draft.thread_id ? ` in thread ${fieldText(draft.thread_id)}` : ''}`,
  },
  run: (core, input, { principal }) => core.sending.drafts.create(principal, input),
});

export const listDrafts = defineOperation({
  name: 'list_drafts',
  title: 'List drafts',
  description: 'Lists drafts, newest first.',
  input: ListDraftsInputSchema,
  output: pageOf(DraftSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/drafts', envelope: 'list' },
  tool: true,
  agent: { compact: 'messages', omit: ['cc', 'bcc', 'any_email', 'to', 'subject', 'has_attachment'] },
  run: (core, input, { principal }) => core.sending.drafts.list(principal, input),
});

export const getDraft = defineOperation({
  name: 'get_draft',
  title: 'Get a draft',
  description: 'One draft: body, recipients, attachments, the message it answers.',
  input: DraftRefInputSchema,
  output: DraftSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/drafts/:draft_id' },
  tool: true,
  agent: { body: 'message' },
  run: (core, input, { principal }) => core.sending.drafts.find(principal, input),
});

export const updateDraft = defineOperation({
  name: 'update_draft',
  title: 'Update a draft',
  description: 'Changes the given fields of a draft, keeping the others (attachments given replace all).',
  input: UpdateDraftInputSchema,
  output: DraftSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/grants/:grant_id/drafts/:draft_id', multipart: 'message' },
  tool: true,
  agent: {
    omit: ['from', 'reply_to', 'custom_headers', 'metadata', 'tracking_options', 'claim_token'],
    headline: (draft) =>
      `Updated draft ${fieldText(draft.id ?? '')}${draft.thread_id ? ` in thread ${fieldText(draft.thread_id)}` : ''}`,
  },
  run: (core, input, { principal }) => core.sending.drafts.update(principal, input),
});

export const deleteDraft = defineOperation({
  name: 'delete_draft',
  title: 'Delete a draft',
  description: 'Discards a draft for good (and stops its scheduled send).',
  input: DraftRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/grants/:grant_id/drafts/:draft_id', envelope: 'empty' },
  tool: true,
  agent: { headline: (_result, input) => `Deleted draft ${String(input.draft_id)}` },
  run: async (core, input, { principal }) => {
    await core.sending.drafts.destroy(principal, input);
    return {};
  },
});

export const sendDraft = defineOperation({
  name: 'send_draft',
  title: 'Send a draft',
  description: 'Sends a draft as send_message would; a draft with a future send_at is scheduled.',
  input: SendDraftInputSchema,
  output: SendMessageResultSchema,
  hints: { readOnly: false, openWorld: true },
  http: {
    method: 'POST',
    path: '/grants/:grant_id/drafts/:draft_id',
    envelope: 'list',
    statusOf: sendStatus,
    statuses: [200, 202],
  },
  tool: true,
  agent: { sends: 'draft' },
  run: (core, input, context) => core.sending.drafts.send(context.principal, input, context),
});
