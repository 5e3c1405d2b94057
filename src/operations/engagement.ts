/**
 * Engagement of sent messages (tracking and delivery outcome).
 */
import { GetMessageEngagementInputSchema, MessageEngagementSchema } from '../schemas/engagement.js';
import { defineOperation } from './define-operation.js';

export const getMessageEngagement = defineOperation({
  name: 'get_message_engagement',
  title: 'Get the engagement of a sent message',
  description: 'Opens, clicks, replies and delivery per recipient of a sent message (opens, clicks: tracking_options).',
  input: GetMessageEngagementInputSchema,
  output: MessageEngagementSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/messages/:message_id/engagement' },
  tool: true,
  run: (core, input, { principal }) => core.deliverability.tracking.engagement(principal, input),
});
