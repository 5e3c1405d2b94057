/**
 * @module ports
 * The front door of the ports: the interfaces through which the core reaches the outside world (time, ids, DNS,
 * mail transport, HTTP, text generation, secrets, logs, metrics), and {@link CoreDeps}, all of them together. Ports
 * import no area; their real implementations are in src/system/.
 */
export type { Clock, IdGenerator, RandomBytes } from './clock.js';
export type { CoreDeps } from './core-deps.js';
export type { DnsResolver } from './dns.js';
export type { HttpRequester, OutboundHttpRequest, OutboundHttpResponse } from './http.js';
export type {
  AuthenticationVerdict,
  Authenticator,
  InboundStages,
  SmtpClientInfo,
  SpamChecker,
  SpamVerdict,
  StageMail,
} from './inbound-stages.js';
export type { Logger } from './logger.js';
export {
  SmtpSendError,
  type SmtpClient,
  type SmtpRejection,
  type SmtpResult,
  type SmtpSubmission,
  type SmtpTarget,
} from './mail-transport.js';
export type { Metrics, SmartComposeOutcome, SmtpStage } from './metrics.js';
export type { Notifier, SystemEmail } from './notifier.js';
export type { SecretBox } from './secret-box.js';
export {
  TextGenerationError,
  type TextGenerationRequest,
  type TextGenerator,
  type TextMessage,
  type TextStreamPart,
  type TextUsage,
} from './text-generator.js';
export type { CollectionGrant, CollectionHome, RemoteCollections } from './remote-collections.js';
