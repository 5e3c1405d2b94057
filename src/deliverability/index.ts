/**
 * @module deliverability
 * The front door of src/deliverability/: what other areas, the operations and the faces use of it.
 */
export { classifyBounce, type BounceFacts } from './bounce-classification.js';
export { createMailboxReports, type MailboxReports } from './mailbox-reports.js';
export {
  parseReport,
  type BounceEntry,
  type ParsedBounce,
  type ParsedComplaint,
  type ParsedReport,
} from './report-parser.js';
export type {
  GatedSend,
  HitSource,
  NewReport,
  ReceiveOutcome,
  ReportIntake,
  ReportIntakeOptions,
  ReturnPathCheck,
  SendGate,
  SendGates,
  SendingHealth,
  SigningKeys,
  TokenSigner,
  TrackingService,
} from './contracts.js';
export { createReportIntake } from './reports.js';
export { createSendGates } from './send-gates.js';
export { createSendingHealth } from './sending-health.js';
export { createSigningKeys, createTokenSigner } from './signing.js';
export { createSuppressionGate, createSuppressionService, type SuppressionService } from './suppressions.js';
export { createThreadReplies, type ThreadReplies } from './thread-replies.js';
export { CLICK_PATH, OPEN_PATH, recordTrackedSend, trackedBody, tracksAnything } from './tracked-sends.js';
export {
  createTrackingService,
  EARLY_MS,
  FLUSH_DELAY_MS,
  LOOKUP_TTL_MS,
  REPEAT_OPEN_MS,
  SCANNER_USER_AGENTS,
  scannerUserAgent,
} from './tracking-service.js';
export { createWarmUp } from './warm-up.js';
