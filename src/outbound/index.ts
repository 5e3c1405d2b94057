/**
 * @module outbound
 * The front door of src/outbound/: what other areas, the operations and the faces use of it.
 */
export { UPLOAD_PATH } from './attachment-uploads.js';
export { createOutboundService } from './outbound-service.js';
export { createFollowUps } from './follow-ups.js';
export type {
  AttachmentUploads,
  Composer,
  DeliveryAttempts,
  DraftService,
  DraftVersions,
  DueRun,
  FollowUps,
  FollowUpSender,
  IdempotencyStore,
  OutboundQueue,
  OutboundService,
  OutboundStage,
  Router,
  ScheduledSends,
  Submission,
} from './contracts.js';
