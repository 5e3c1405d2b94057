/**
 * Sending mail and scheduled sends.
 */
import { z } from 'zod';
import {
  ListScheduledMessagesInputSchema,
  MAX_RECIPIENTS,
  ScheduledMessageRefInputSchema,
  ScheduledMessageSchema,
  SendMessageInputSchema,
  SendMessageResultSchema,
  TransactionalSendInputSchema,
  TransactionalSendResultSchema,
  sendResultStatus as sendStatus,
} from '../schemas/send.js';
import { defineOperation } from './define-operation.js';

export const sendMessage = defineOperation({
  name: 'send_message',
  title: 'Send a message',
  description:
    'Sends an email from the mailbox (HTML body, or is_plaintext: true) to to/cc/bcc, and returns the sent message (it is also stored in the sent folder). ' +
    'To answer a message, pass its id as reply_to_message_id: the reply gets In-Reply-To and References and joins that thread (the subject defaults to "Re: …"). ' +
    'Attachments: Base64 content (or the id of an attachment already in the mailbox); a content_id makes one inline for <img src="cid:…">. ' +
    `Limits: at most ${MAX_RECIPIENTS} recipients and 40 MB in total. send_at (unix seconds, up to 30 days ahead) schedules it instead and returns a schedule_id. ` +
    'Delivery happens in the background with retries: check delivery_status with get_message; to save without sending use create_draft. ' +
    'dry_run: true only checks it against the rules, daily quota and size limit and returns the verdict (blocked, refused recipients); nothing is sent.',
  input: SendMessageInputSchema,
  output: SendMessageResultSchema,
  hints: { readOnly: false, openWorld: true },
  http: {
    method: 'POST',
    path: '/grants/:grant_id/messages/send',
    envelope: 'list',
    statusOf: sendStatus,
    statuses: [200, 202],
    multipart: 'message',
  },
  tool: true,
  agent: { sends: 'message' },
  run: (core, input, { principal, idempotencyKey, onIdempotentReplay }) =>
    core.sending.outbound.send(principal, input, { idempotencyKey, onIdempotentReplay }),
});

export const listScheduledMessages = defineOperation({
  name: 'list_scheduled_messages',
  title: 'List scheduled sends',
  description:
    'Lists the scheduled sends of the mailbox (latest send time first) with their status: pending, success, failed or cancelled. Stop a pending one with stop_scheduled_message.',
  input: ListScheduledMessagesInputSchema,
  output: z.object({ data: z.array(ScheduledMessageSchema).describe('Scheduled sends') }),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/messages/schedules', envelope: 'list' },
  tool: true,
  run: async (core, input, { principal }) => ({ data: await core.sending.drafts.listScheduled(principal, input) }),
});

export const getScheduledMessage = defineOperation({
  name: 'get_scheduled_message',
  title: 'Get a scheduled send',
  description:
    'Returns one scheduled send: its status (pending until send_at, then success or failed; cancelled when stopped), send_at and, once sent, the message id.',
  input: ScheduledMessageRefInputSchema,
  output: ScheduledMessageSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/messages/schedules/:schedule_id' },
  tool: true,
  run: (core, input, { principal }) => core.sending.drafts.findScheduled(principal, input),
});

export const stopScheduledMessage = defineOperation({
  name: 'stop_scheduled_message',
  title: 'Stop a scheduled send',
  description:
    'Cancels a pending scheduled send: nothing is sent. The held message is discarded (kept as a draft when it came from a draft or use_draft was set). A send that already went out cannot be stopped (400).',
  input: ScheduledMessageRefInputSchema,
  output: z.object({ message: z.string().describe('Confirmation') }),
  hints: { readOnly: false, destructive: true, idempotent: true },
  http: { method: 'DELETE', path: '/grants/:grant_id/messages/schedules/:schedule_id', status: 202 },
  tool: true,
  agent: { headline: (_result, input) => `Stopped scheduled send ${String(input.schedule_id)}` },
  run: (core, input, { principal }) => core.sending.drafts.stopScheduled(principal, input),
});

export const sendFromDomain = defineOperation({
  name: 'send_transactional_message',
  title: 'Send from a domain',
  description:
    'Sends a transactional email from a verified domain of this application, without a mailbox: from is required and must be on that domain. ' +
    `Same limits as a mailbox send (${MAX_RECIPIENTS} recipients, 40 MB); attachments as Base64 content only; no scheduling, threading or tracking. ` +
    'No copy is kept in any mailbox; the answer is the queued message id.',
  input: TransactionalSendInputSchema,
  output: TransactionalSendResultSchema,
  hints: { readOnly: false, openWorld: true },
  http: { method: 'POST', path: '/domains/:domain_name/messages/send', multipart: 'message' },
  tool: false,
  run: (core, input, { principal }) => core.sending.outbound.sendFromDomain(principal, input),
});
