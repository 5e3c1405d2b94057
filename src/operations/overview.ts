/**
 * The overview (extension, not in Nylas; issue 39): the dashboard's first page in one read. Every key may call it;
 * each figure is counted over what the key reaches, and a figure outside its permissions or scope is null.
 * Administration, so HTTP only (no agent tool).
 */
import { GetOverviewInputSchema, OverviewSchema } from '../schemas/overview.js';
import { defineOperation } from './define-operation.js';

export const getOverview = defineOperation({
  name: 'get_overview',
  title: 'Get the overview',
  description:
    "Counts what this key reaches: grants (suspended), mail received and sent today in time_zone (default UTC), the outbound queue, scheduled sends, webhook deliveries owed, background jobs by state, webhooks by health, domains with sending paused, pending approvals. A scoped key's counts are of its grants; a figure its permissions or scope do not cover is null.",
  input: GetOverviewInputSchema,
  output: OverviewSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/overview' },
  tool: false,
  run: (core, input, { principal }) => core.overview.read(principal, input),
});
