/**
 * Follow-ups cancelled by a reply (an extension, issue 40 item 6): asked for with `follow_up` on send_message, or here
 * on a message already sent; listed, read and cancelled. HTTP-only: the MCP and AI SDK tool manifest is at its size
 * budget (send_message's follow_up field is how an agent asks for one).
 */
import {
  CreateFollowUpInputSchema,
  FollowUpListSchema,
  FollowUpRefInputSchema,
  FollowUpSchema,
  ListFollowUpsInputSchema,
} from '../schemas/follow-ups.js';
import { defineOperation } from './define-operation.js';

export const createFollowUp = defineOperation({
  name: 'create_follow_up',
  title: 'Follow up a sent message',
  description:
    'Sends body as a reply in the thread of a message this grant sent after after_seconds, unless someone else answers in the thread first (that cancels it). One per message.',
  input: CreateFollowUpInputSchema,
  output: FollowUpSchema,
  hints: { readOnly: false, openWorld: true },
  http: { method: 'POST', path: '/grants/:grant_id/messages/:message_id/follow-up' },
  tool: false,
  run: (core, input, { principal }) => core.sending.followUps.create(principal, input),
});

export const listFollowUps = defineOperation({
  name: 'list_follow_ups',
  title: 'List follow-ups',
  description: "A grant's follow-ups, newest first, with their status (pending, sent, cancelled, failed).",
  input: ListFollowUpsInputSchema,
  output: FollowUpListSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/follow-ups', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.sending.followUps.list(principal, input),
});

export const getFollowUp = defineOperation({
  name: 'get_follow_up',
  title: 'Get a follow-up',
  description: 'One follow-up: its status, due time and, once closed, the message sent or the reply that cancelled it.',
  input: FollowUpRefInputSchema,
  output: FollowUpSchema,
  hints: { readOnly: true, idempotent: true },
  http: { method: 'GET', path: '/grants/:grant_id/follow-ups/:follow_up_id' },
  tool: false,
  run: (core, input, { principal }) => core.sending.followUps.find(principal, input),
});

export const cancelFollowUp = defineOperation({
  name: 'cancel_follow_up',
  title: 'Cancel a follow-up',
  description: 'Cancels a pending follow-up (message.follow_up_cancelled); one already sent is a 409.',
  input: FollowUpRefInputSchema,
  output: FollowUpSchema,
  hints: { readOnly: false, destructive: true, idempotent: true },
  http: { method: 'DELETE', path: '/grants/:grant_id/follow-ups/:follow_up_id' },
  tool: false,
  run: (core, input, { principal }) => core.sending.followUps.cancel(principal, input),
});
