/**
 * Draft operations: write a message over several steps, then send it.
 */
import { DeletedSchema, pageOf } from '../schemas/common.js';
import {
  CreateDraftInputSchema,
  DraftRefInputSchema,
  DraftSchema,
  ListDraftsInputSchema,
  UpdateDraftInputSchema,
} from '../schemas/drafts.js';
import { MAX_RECIPIENTS, SendResultSchema, sendResultStatus as sendStatus } from '../schemas/send.js';
import { fieldText } from './agent.js';
import { defineOperation } from './define-operation.js';

export const createDraft = defineOperation({
  name: 'create_draft',
  title: 'Create a draft',
  description:
    'Saves a message without sending it, in the drafts folder; it takes the fields of send_message (to, cc, bcc, subject, body, attachments, …). ' +
    'With reply_to_message_id the draft is a reply and sits in that thread. Change it with update_draft, send it with send_draft, or discard it with delete_draft.',
  input: CreateDraftInputSchema,
  output: DraftSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/grants/:grant_id/drafts', multipart: 'message' },
  tool: true,
  agent: {
    headline: (draft) =>
      `Created draft ${fieldText(draft.id ?? '')}${draft.thread_id ? ` in thread ${fieldText(draft.thread_id)}` : ''}`,
  },
  run: (core, input, { principal }) => core.sending.drafts.create(principal, input),
});

export const listDrafts = defineOperation({
  name: 'list_drafts',
  title: 'List drafts',
  description:
    'Lists the drafts of the mailbox, newest first, up to 200 per page (default 50); pass next_cursor as page_token for the next page. ' +
    'Filter by subject, to/cc/bcc/any_email, thread_id, starred, has_attachment. Then edit one with update_draft or send it with send_draft.',
  input: ListDraftsInputSchema,
  output: pageOf(DraftSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/drafts', envelope: 'list' },
  tool: true,
  agent: { compact: 'messages' },
  run: (core, input, { principal }) => core.sending.drafts.list(principal, input),
});

export const getDraft = defineOperation({
  name: 'get_draft',
  title: 'Get a draft',
  description:
    'Returns one draft with its body, recipients, attachments and the reply it answers (reply_to_message_id).',
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
  description:
    'Changes the fields given and keeps the others (attachments, when given, replace the list; keep one by passing its id). The draft keeps its id and thread. ' +
    'Then send it with send_draft.',
  input: UpdateDraftInputSchema,
  output: DraftSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/grants/:grant_id/drafts/:draft_id', multipart: 'message' },
  tool: true,
  agent: {
    headline: (draft) =>
      `Updated draft ${fieldText(draft.id ?? '')}${draft.thread_id ? ` in thread ${fieldText(draft.thread_id)}` : ''}`,
  },
  run: (core, input, { principal }) => core.sending.drafts.update(principal, input),
});

export const deleteDraft = defineOperation({
  name: 'delete_draft',
  title: 'Delete a draft',
  description: 'Discards a draft for good (a scheduled send of it is stopped). Sent messages are not affected.',
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
  description:
    `Sends a draft as send_message would (at most ${MAX_RECIPIENTS} recipients, 40 MB) and removes it from drafts; returns the sent message, now in the sent folder. ` +
    'A draft with a future send_at is scheduled instead (the answer has a schedule_id). Check delivery with get_message (delivery_status).',
  input: DraftRefInputSchema,
  output: SendResultSchema,
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
  run: (core, input, { principal, idempotencyKey, onIdempotentReplay }) =>
    core.sending.drafts.send(principal, input, { idempotencyKey, onIdempotentReplay }),
});
