/**
 * @module mail
 * The front door of src/mail/: what other areas, the operations and the faces use of it.
 */
export { createAfterDelivery, invitationJobsOf } from './after-delivery.js';
export type {
  AfterDelivery,
  DeliveredMail,
  EvaluationLog,
  FetchedMessage,
  ImapLinkRow,
  InboundDelivery,
  InboundMessage,
  InboundPipeline,
  InboundResult,
  InboundService,
  RecipientCheck,
  Refusal,
  StoredCopy,
  UsageMeter,
} from './contracts.js';
export { DEFAULT_HEADER_LIMITS, headerSectionTooLarge } from './header-section.js';
export { startInboundSmtp, type InboundSmtpOptions, type InboundSmtpServer } from './inbound-smtp.js';
export { smtpError, toSmtpError } from './inbound-smtp-state.js';
export { createInboundService, MAX_MESSAGE_BYTES } from './inbound.js';
export { createAuthenticator, type AuthenticatorOptions } from './stages/authentication.js';
export { ANOMALY_SCORES, headerAnomalies, type HeaderAnomaly } from './stages/header-anomalies.js';
export {
  BASE_THRESHOLD,
  createSpamChecker,
  DNSBL_SCORE,
  dnsblName,
  spamThreshold,
  type SpamCheckerOptions,
} from './stages/spam.js';
