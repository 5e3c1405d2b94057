/**
 * @module oversight
 * The front door of src/oversight/: oversight enforced by the server (issue 37, docs/oversight.md).
 */
export type {
  ApprovalRequest,
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
