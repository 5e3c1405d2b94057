/**
 * Engagement of sent messages (tracking and delivery outcome).
 */
import { GetMessageEngagementInputSchema, MessageEngagementSchema } from '../schemas/engagement.js';
import { defineOperation } from './define-operation.js';

export const getMessageEngagement = defineOperation({
  name: 'get_message_engagement',
  title: 'Get the engagement of a sent message',
  description:
    'Returns what became of a message this mailbox sent: opens and clicks counted as people (plus hits recorded but flagged: scanners, privacy proxies, HEAD requests, hits within 10 s of the send, opens repeated within a minute), ' +
    "clicks per rewritten link (link_index as in message.link_clicked), replies on its thread, and each recipient's delivery state. Tracking needs tracking_options on the send; without them only delivery_status is filled.",
  input: GetMessageEngagementInputSchema,
  output: MessageEngagementSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/messages/:message_id/engagement' },
  tool: true,
  run: (core, input, { principal }) => core.deliverability.tracking.engagement(principal, input),
});
