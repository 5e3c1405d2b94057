/**
 * @module src
 * The core's names for the layers above it: `createCore(deps)` (src/core.ts) wires every service; the transports
 * (server/ for HTTP, tools/ for MCP and the AI SDK) only translate, and reach the core through this module, as do the
 * benchmarks and tests. It is internal, not the package's API: the package root (server/embed.ts) lists its public
 * names one by one (docs/embedding.md, "Public API").
 */
export { createCore, type Core } from './core.js';

export { createTokenSigner, type TokenSigner, type SigningKeys } from './deliverability/index.js';
export {
  createDmarcReportIntake,
  ruaDomain,
  type DmarcReportIntake,
  type RuaCheck,
  type DmarcReceiveOutcome,
} from './domains/index.js';
export {
  readAggregateReport,
  readAggregateXml,
  reportXml,
  findReportFile,
  DmarcReportRejected,
  MAX_COMPRESSED_BYTES,
  MAX_XML_BYTES,
  MAX_RATIO,
  MAX_RECORDS,
  MAX_EMAIL_BYTES,
  type AggregateReport,
} from './domains/index.js';
export {
  createReportIntake,
  type ReportIntake,
  type ReportIntakeOptions,
  type NewReport,
  type ReturnPathCheck,
  type ReceiveOutcome,
} from './deliverability/index.js';
export {
  parseReport,
  type ParsedReport,
  type ParsedBounce,
  type ParsedComplaint,
  type BounceEntry,
} from './deliverability/index.js';
export { classifyBounce, type BounceFacts } from './deliverability/index.js';
export type { ReportListener, RecordedReport } from './deliverability/contracts.js';
export {
  type TrackingService,
  type HitSource,
  scannerUserAgent,
  SCANNER_USER_AGENTS,
  EARLY_MS,
  REPEAT_OPEN_MS,
  LOOKUP_TTL_MS,
  FLUSH_DELAY_MS,
} from './deliverability/index.js';
export { OPEN_PATH, CLICK_PATH } from './deliverability/index.js';
export {
  loadConfig,
  ConfigError,
  type AiConfig,
  type AiProvider,
  unknownSettings,
  unknownSettingMessage,
  startedByNpm,
  parseRoles,
  ROLES,
  SETTING_NAMES,
  type Config,
  type Role,
  type SettingName,
  type UnknownSetting,
} from './config.js';
export { AppError, type AppErrorOptions, type ErrorCode } from './errors.js';
export type { Health, ThreadHealth, Readiness } from './health.js';
export {
  TextGenerationError,
  type Metrics,
  type SmtpStage,
  type SmartComposeOutcome,
  type TextGenerator,
  type TextGenerationRequest,
  type TextMessage,
  type TextStreamPart,
  type TextUsage,
  type Clock,
  type CoreDeps,
  type DnsResolver,
  type IdGenerator,
  type Logger,
  type RandomBytes,
} from './ports/index.js';
export { systemClock } from './system/clock.js';
export { systemDns } from './system/dns.js';
export { randomId, timeOrderedIds } from './system/ids.js';
export { createLogger } from './system/logger.js';
export { noMetrics } from './system/metrics.js';
export { unixSeconds } from './time.js';
export { PERMISSIONS } from './access.js';
export { startSubmission, type Submission, type SubmissionOptions } from './submission/index.js';
export type {
  ClientInfo,
  AccessFace,
  KeyScope,
  OperationContext,
  Permission,
  Principal,
  PrincipalKey,
  RateLimitDetails,
  RefusedKey,
} from './access.js';
export type { DashboardSession, Plan } from './applications/index.js';
export {
  operations,
  runOperation,
  runOperationJson,
  runOperationStream,
  defineOperation,
  deprecationHeaders,
  hasJsonBody,
  assertGrantReached,
  mayCall,
  permissionError,
  permissionsFor,
  OPERATION_NEEDS,
  type AnyOperation,
  type Deprecation,
  type JsonPage,
  type Operation,
  type OperationHints,
} from './operations/index.js';
export {
  HTTP_ERRORS,
  errorBody,
  errorCodeOfStatus,
  faceOf,
  describeZodError,
  httpErrorOf,
  type Face,
  type HttpError,
  type HttpErrorStatus,
} from './operations/http-errors.js';
export { canonicalJson, signingString } from './applications/index.js';
export {
  addressKey,
  createFailedAuthentications,
  TokenBuckets,
  type FailedAuthentications,
  type RateBudget,
  type RateDecision,
} from './rate-limits.js';
export { MAX_JSON_DEPTH, assertJsonDepth } from './json-depth.js';
export { htmlToText } from './mime/index.js';
export { createSecretBox, openStored, SecretKeyError, MIN_SECRET_LENGTH } from './secrets/index.js';
export type { SecretBox } from './ports/index.js';
export {
  openSecretBox,
  resolveSecretKey,
  checkSecretKey,
  secretKeyFileOf,
  type ResolvedSecretKey,
  type SecretKeyOrigin,
} from './secrets/index.js';
export { sealStoredSecrets } from './secrets/index.js';
export { loggingNotifier } from './system/notifier.js';
export type { Notifier, SystemEmail, HttpRequester, OutboundHttpRequest, OutboundHttpResponse } from './ports/index.js';
export { createJobQueue, enqueueJob, type Job, type JobInput, type JobQueue, type ClaimOptions } from './jobs/index.js';
export {
  createWorker,
  defaultBackoffMs,
  type JobHandler,
  type JobOutcome,
  type JobContext,
  type Worker,
  type WorkerOptions,
} from './jobs/index.js';
export {
  advanceTestClock,
  runDueTimers,
  DUE_RUNNERS,
  startBackgroundWork,
  type AdvanceResult,
  type BackgroundWork,
  type BackgroundOptions,
  type DueRunner,
  type DueRunOptions,
} from './background/index.js';
export type { FollowUpSender } from './outbound/index.js';
export {
  verifyWebhookSignature,
  nylasSignature,
  standardSignature,
  WEBHOOK_SECRET_PREFIX,
  type VerifyWebhookOptions,
  type WebhookVerification,
} from './webhooks/index.js';
export { isPublicAddress, nonPublicReason } from './webhooks/index.js';
export { nodeHttpRequester } from './system/http-requester.js';
export {
  MAX_MESSAGE_BYTES,
  type InboundMessage,
  type InboundResult,
  type InboundService,
  type RecipientCheck,
} from './mail/index.js';
export { createAuthenticator, type AuthenticatorOptions } from './mail/index.js';
export {
  createSpamChecker,
  spamThreshold,
  dnsblName,
  BASE_THRESHOLD,
  DNSBL_SCORE,
  type SpamCheckerOptions,
} from './mail/index.js';
export { headerAnomalies, ANOMALY_SCORES, type HeaderAnomaly } from './mail/index.js';
export type {
  Authenticator,
  AuthenticationVerdict,
  SpamChecker,
  SpamVerdict,
  StageMail,
  SmtpClientInfo,
} from './ports/index.js';
export { startInboundSmtp, type InboundSmtpOptions, type InboundSmtpServer } from './mail/index.js';
export { createSmtpClient, relayTarget } from './system/smtp-client.js';
export {
  SmtpSendError,
  type SmtpClient,
  type SmtpSubmission,
  type SmtpResult,
  type SmtpTarget,
  type SmtpRejection,
} from './ports/index.js';
export type { OutboundService } from './outbound/index.js';
export type { AttachmentDownload } from './messages/index.js';
export type { InvitationSender, OutgoingInvitation } from './calendar/index.js';
export type { InboundInvitation, InvitationOutcome } from './calendar/index.js';
