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
import { invalid } from '../errors.js';
import { defineOperation } from './define-operation.js';

export const sendMessage = defineOperation({
  name: 'send_message',
  title: 'Send a message',
  description: `Sends an email (reply_to_message_id: a reply in its thread). At most ${MAX_RECIPIENTS} recipients, 40 MB. send_at schedules it; dry_run only checks it.`,
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
  agent: { sends: 'message', omit: ['from', 'reply_to', 'custom_headers', 'use_draft'] },
  run: async (core, input, context) => {
    if (input.follow_up !== undefined && input.send_at !== undefined)
      throw invalid('follow_up', 'cannot go with send_at; ask for it once the message is sent (POST …/follow-up).');
    const result = await core.sending.outbound.send(context.principal, input, context);
    // A follow-up of the message just sent (none for a dry run or a send held for approval).
    const sent = result.data as { id?: unknown };
    if (
      input.follow_up !== undefined &&
      !input.dry_run &&
      result.approval_id === undefined &&
      typeof sent.id === 'string'
    )
      await core.sending.followUps.attach(context.principal, {
        grant_id: input.grant_id,
        message_id: sent.id,
        ...input.follow_up,
      });
    return result;
  },
});

export const listScheduledMessages = defineOperation({
  name: 'list_scheduled_messages',
  title: 'List scheduled sends',
  description: 'Scheduled sends, latest first, with status. Stop one: stop_scheduled_message.',
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
    'Returns a scheduled send: status (pending, success, failed, cancelled), send_at and, once sent, the message id.',
  input: ScheduledMessageRefInputSchema,
  output: ScheduledMessageSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/messages/schedules/:schedule_id' },
  // Not a tool: list_scheduled_messages gives the same, and tools/list stays within its 24,000 characters.
  tool: false,
  run: (core, input, { principal }) => core.sending.drafts.findScheduled(principal, input),
});

export const stopScheduledMessage = defineOperation({
  name: 'stop_scheduled_message',
  title: 'Stop a scheduled send',
  description: 'Cancels a pending scheduled send (a draft it came from is kept).',
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
