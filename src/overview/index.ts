/**
 * @module overview
 * The front door of the overview (issue 39, `GET /v3/overview`): mail in and out today, queue depths, webhook
 * health, paused domains and pending approvals, each a COUNT over what the calling key reaches.
 */
export { createOverviewService } from './overview-service.js';
export type { OverviewService } from './contracts.js';
