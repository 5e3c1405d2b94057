/**
 * @module oversight
 * The front door of src/oversight/: oversight enforced by the server (issue 37, docs/oversight.md).
 */
export type {
  ApprovalRequest,
  ApprovalRow,
  ApprovalService,
  GuardVerdict,
  Oversight,
  OversightMode,
  ResolvedOversight,
  SendAttempt,
  SendGuard,
  SendReviewService,
  SendVerdict,
} from './contracts.js';
export { budgetGuards } from './budget-guards.js';
export { allowlisted, readOnlyError, readersOf, suspendedError } from './guards.js';
export { automatedReplyError, runawayGuards } from './runaway-guards.js';
export { episodeStart, findLoop, type Loop, type LoopBound, type TrafficMessage } from './loop.js';
export {
  createOversight,
  flaggedMessages,
  OVERSIGHT_DEFAULTS,
  type OversightParts,
  type ReadNotes,
} from './oversight.js';
export { createApprovals, heldBlobs, toApproval, type ApprovalParts, type ReleaseHeld } from './approvals.js';
export type { SendReviewRow } from './approval-store.js';
export { EXCEPTED_HEADERS, heldSha256, restamp, withoutExcepted } from './held-mime.js';
export { repliedMessage, threadOfMessage } from './oversight-store.js';
export { createSendReviews, toSendReview } from './send-reviews.js';
export {
  claimGuard,
  claimedError,
  createThreadClaims,
  type ThreadClaimParts,
  type ThreadClaims,
} from './thread-claims.js';
