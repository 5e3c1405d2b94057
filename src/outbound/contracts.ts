/**
 * @module outbound/contracts
 * The outbound area's declared interface: its services as the rest of the core sees them (the outbound service and
 * its drafts, and the steps it is put together from: composition, submission, the durable queue, the outbound stage,
 * scheduled sends), and the types they share: a queued message's row and the outcome of one delivery attempt, as the
 * queue, its attempts and the providers' submitters (src/providers/contracts.ts) exchange them.
 */
import type { Executor, GrantRow, Orm, StoredPolicyLimits, tables, Tx } from '../../storage/index.js';
import type { StoredHeader, StoredProvenance, StoredTrackingOptions } from '../../storage/schema/outbound.js';
import type { OperationContext, Principal } from '../access.js';
import type { CompiledRule, EvaluationInput, ListSet, RuleOutcome } from '../admin/contracts.js';
import type { InvitationSender } from '../calendar/index.js';
import type { Job, JobContext, JobHandler } from '../jobs/index.js';
import type { MessageRow } from '../messages/contracts.js';
import type { Notifier, SmtpTarget } from '../ports/index.js';
import type {
  AttachmentUploadComplete,
  AttachmentUploadSession,
  CompleteAttachmentUploadInput,
  CreateAttachmentUploadInput,
} from '../schemas/attachment-uploads.js';
import type {
  CreateDraftInput,
  Draft,
  DraftRefInput,
  ListDraftsInput,
  SendDraftInput,
  UpdateDraftInput,
} from '../schemas/drafts.js';
import type { ApprovalRow } from '../oversight/contracts.js';
import type { DeliveryStatus } from '../schemas/messages.js';
import type {
  AttachmentInput,
  ScheduledMessage,
  ScheduledMessageRefInput,
  SendDryRun,
  SendMessageInput,
  SendMessageResult,
  SendResult,
  TransactionalSendInput,
  TransactionalSendResult,
} from '../schemas/send.js';
import type { ComposeInput, OutgoingAttachment } from './compose.js';

/** A queued outbound message (`outbound_messages`). */
export type OutboundRow = typeof tables.outboundMessages.$inferSelect;

/** One recipient of a message in the queue (`outbound_recipients`). */
export type RecipientRow = typeof tables.outboundRecipients.$inferSelect;

/** What one attempt did for one recipient. */
export interface AttemptResult {
  email: string;
  outcome: 'delivered' | 'deferred' | 'failed';
  code: number;
  response: string;
  /**
   * Set when the failure is the queue giving up after retries (a `timeout` bounce), the queue's own loss of the
   * message (no bounce), or the sending account's server refusing the login (`account`: no bounce either).
   */
  cause?: 'timeout' | 'lost' | 'account' | undefined;
}

/** The fields a message to send is made of, as on the wire (send and draft requests share them). */
export type ComposeRequest = Omit<SendMessageInput, 'grant_id' | 'send_at' | 'use_draft'>;

/** A message to send, validated and resolved: addresses, attachment bytes, threading headers. */
export interface Composition extends Pick<
  ComposeInput,
  | 'from'
  | 'to'
  | 'cc'
  | 'bcc'
  | 'replyTo'
  | 'subject'
  | 'body'
  | 'isPlaintext'
  | 'attachments'
  | 'inReplyTo'
  | 'references'
> {
  grant: GrantRow;
  /** The message answered (its id in this mailbox). */
  replyToMessageId: string | undefined;
  customHeaders: StoredHeader[];
  trackingOptions: StoredTrackingOptions | undefined;
  metadata: Record<string, unknown>;
}

/** A composed message: the MIME and what the store keeps of it. */
export interface Built {
  input: ComposeInput;
  raw: Buffer;
  rawHash: string;
}

/** A draft: its details and the message row of its current version. */
export interface DraftRecord {
  details: typeof tables.draftDetails.$inferSelect;
  row: MessageRow;
}

/** A stored answer of an Idempotency-Key. */
export interface StoredAnswer {
  status: number;
  response: Record<string, unknown>;
}

/** A key in use: the application, the key and the fingerprint of the request it came with. */
export interface IdempotencyClaim {
  applicationId: string;
  key: string;
  fingerprint: string;
  /** Told when {@link IdempotencyStore.find} answers with a stored answer (a replay). */
  onReplay?: (() => void) | undefined;
}

/** A recipient after routing: where it goes, or why it failed at once. */
export interface RoutedRecipient {
  email: string;
  domain: string;
  /** `submission`: through the sending account's own SMTP server (a connected account, src/providers). */
  route: 'local' | 'remote' | 'submission';
  /** Set when the recipient cannot be delivered at all (an unknown mailbox on a domain of ours). */
  failed?: { code: number; response: string } | undefined;
}

/** A message to queue. */
export interface OutboundSpec {
  applicationId: string | null;
  grantId: string | null;
  /** The sender's copy in `messages`, when one was stored. */
  messageId: string | null;
  kind: 'message' | 'invitation' | 'system' | 'transactional';
  /** Without angle brackets. */
  headerMessageId: string;
  subject: string;
  envelopeFrom: string;
  raw: Buffer;
  rawHash: string;
  trackingOptions?: StoredTrackingOptions | undefined;
  /** Who made the send (a grant's send). */
  provenance?: StoredProvenance | undefined;
}

/** What the queue knows of a sent message: each recipient's delivery state, the tracking options, who sent it. */
export interface SentState {
  deliveryStatus: DeliveryStatus[];
  trackingOptions: StoredTrackingOptions | undefined;
  provenance: StoredProvenance | undefined;
}

/** What a send is told of its caller besides the principal: the Idempotency-Key, and who calls through what. */
export type SendContext = Pick<
  OperationContext,
  'idempotencyKey' | 'onIdempotentReplay' | 'requestId' | 'face' | 'client' | 'tool'
>;

/** What the outbound stage looks at: the grant's rules, lists and limits. */
export interface SendPolicy {
  rules: readonly CompiledRule[];
  lists: ReadonlyMap<string, ListSet>;
  limits: StoredPolicyLimits | undefined;
}

/** An attachment of a message to send, as the verdicts describe it. */
export interface OutgoingFile {
  filename: string;
  contentType: string;
  size: number;
}

/** A message about to be sent. */
export interface SendCandidate {
  /** The sending grant's address. */
  from: string;
  /** To, cc and bcc. */
  recipients: readonly string[];
  /** True when it answers a message (reply_to_message_id, or an In-Reply-To header). */
  reply: boolean;
  /** Bytes of the composed (signed) MIME. */
  sizeBytes: number;
  attachments: readonly OutgoingFile[];
}

/** The policy verdicts of a send, in wire form (the `verdicts` of its rule evaluation, and the dry run's answer). */
export interface SendVerdicts {
  size: { bytes: number; limit: number | null; ok: boolean };
  attachments: {
    count: number;
    total_bytes: number;
    count_limit: number | null;
    size_limit: number | null;
    allowed_types: string[] | null;
    /** Files outside the attachment limits (reported; a send is not refused for them). */
    outside_limits: { filename: string; reason: string }[];
  };
  /** `sent_today` before this send; `left_today`: sends still allowed today, this one included (null: no quota). */
  quota: { sent_today: number; limit: number | null; left_today: number | null; ok: boolean };
}

/** Why a send is refused. */
export type SendRefusal =
  | { kind: 'rule'; ruleId: string }
  | { kind: 'quota'; sentToday: number; limit: number }
  | { kind: 'size'; bytes: number; limit: number };

/** The stage's decision. */
export interface SendDecision {
  input: EvaluationInput;
  outcome: RuleOutcome;
  verdicts: SendVerdicts;
  /** The first refusal, in the module's order; absent when the send may go. */
  refusal: SendRefusal | undefined;
}

/** A staged file, for a send or a draft. */
export interface StagedFile {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** What applies to one send, loaded by {@link OutboundStage.prepare}. */
export interface OutboundCheck {
  grant: GrantRow;
  policy: SendPolicy;
  /** A policy applies (sends are counted). */
  counted: boolean;
  candidate: SendCandidate;
}

/** A send the stage let through, to record once its sent copy exists. */
export interface Admitted {
  check: OutboundCheck;
  decision: SendDecision;
  phase: 'send' | 'schedule';
}

/** Options of {@link Submission.accept}. */
export interface AcceptOptions {
  claim?: IdempotencyClaim | undefined;
  /** Message-ID to use (a draft keeps its own). */
  headerMessageId?: string | undefined;
  /** Runs inside the transaction before anything is written; throw to abort (a stale draft or schedule). */
  before?: ((tx: Tx) => Promise<void>) | undefined;
  /** Runs inside the transaction after the sender's copy was stored (remove the draft, close the schedule). */
  after?: ((tx: Tx, sentMessageId: string) => Promise<void>) | undefined;
  /** Who made the send, stored with it. */
  provenance?: StoredProvenance | undefined;
  /**
   * The message composed already (an approved send: the exact MIME approved, dated again and signed), with the
   * tracking made when it was composed: nothing is composed or rewritten again.
   */
  prebuilt?: { built: Built; tracking: { id: string; links: string[] } | undefined } | undefined;
}

/** A message with no sender's copy, for {@link Submission.sendDetached}. */
export interface DetachedSend {
  applicationId: string | null;
  grantId: string | null;
  kind: 'invitation' | 'system' | 'transactional';
  input: ComposeInput;
  envelopeFrom: string;
}

/** Options of {@link ScheduledSends.schedule}. */
export interface ScheduleOptions {
  sendAt: number;
  useDraft: boolean;
  claim?: IdempotencyClaim | undefined;
  /** The draft sent (its message is held as it is); undefined: the composition is held as a new draft. */
  existing?: DraftRecord | undefined;
  /** Who scheduled it; the sent message carries it on. */
  provenance?: StoredProvenance | undefined;
}

/** What createOutboundService() returns (src/outbound/outbound-service.ts). */
export interface OutboundService {
  /**
   * Sends a message (`send_at`: schedules it). With an Idempotency-Key, a repeat of the same request answers the
   * first answer again and sends nothing; the key with another request is a 409. `dry_run`: the verdict of the
   * outbound stage only; nothing is stored, queued or sent (and no Idempotency-Key is kept).
   */
  send: (principal: Principal, input: SendMessageInput, context?: SendContext) => Promise<SendMessageResult>;
  /** Sends a held message once approved (the approval queue's release, src/oversight). */
  release: (row: ApprovalRow) => Promise<{ messageId: string }>;
  /** Large-attachment upload sessions (staged files a send or draft takes by id). */
  uploads: AttachmentUploads;
  /** Sends from a verified domain of the application, without a mailbox (no sender's copy is stored). */
  sendFromDomain: (principal: Principal, input: TransactionalSendInput) => Promise<TransactionalSendResult>;
  /** Delivery state of each recipient, and tracking options, of sent messages, by message id. */
  sentState: (messageIds: string[]) => Promise<Map<string, SentState>>;
  /** Drafts and scheduled sends. */
  drafts: DraftService;
  /** iMIP invitations, updates, cancellations and replies of the event service. */
  invitations: InvitationSender;
  /** The service's own emails (webhook failure alerts), from `AGENTPOST_SYSTEM_FROM`. */
  notifier: Notifier;
  /** Job handlers: delivery attempts and scheduled sends. */
  handlers: Record<string, JobHandler>;
  /** Closes pooled SMTP connections. */
  close: () => Promise<void>;
}

/** What createDraftService() returns (src/outbound/drafts.ts): drafts, with the scheduled sends that hold theirs. */
export interface DraftService {
  /** Holds a message as a draft until `sendAt` and schedules its sending. Answers with HTTP status 202. */
  schedule: ScheduledSends['schedule'];
  /** Creates a draft in the `drafts` folder (and in the thread of the message it answers). */
  create(principal: Principal, input: CreateDraftInput): Promise<Draft>;
  /** A page of drafts, newest first. */
  list(principal: Principal, input: ListDraftsInput): Promise<{ data: Draft[]; next_cursor?: string }>;
  /** One draft. */
  find(principal: Principal, input: DraftRefInput): Promise<Draft>;
  /** Changes the fields given (the others stay); `attachments`, when given, replaces the list. */
  update(principal: Principal, input: UpdateDraftInput): Promise<Draft>;
  /** Deletes a draft (and stops any scheduled send of it). */
  destroy(principal: Principal, input: DraftRefInput): Promise<void>;
  /**
   * Sends a draft through the send flow and removes it; a draft whose send_at is in the future is scheduled
   * instead. Idempotency-Key as for send_message.
   */
  send(principal: Principal, input: SendDraftInput, context?: SendContext): Promise<SendMessageResult>;
  /**
   * The `before` and `after` hooks of an approved draft's send: the draft must still be at the version held (an edit
   * after the request needs a new approval), and it is removed with the send.
   */
  heldHooks(
    grantId: string,
    draftId: string,
    draftMessageId: string | undefined,
  ): Promise<Pick<AcceptOptions, 'before' | 'after'>>;
  /** Scheduled sends of a mailbox, the latest send time first (at most 200). */
  listScheduled: ScheduledSends['listScheduled'];
  /** One scheduled send. */
  findScheduled: ScheduledSends['findScheduled'];
  /** Stops a pending scheduled send. A send already made is a 400. */
  stopScheduled: ScheduledSends['stopScheduled'];
  /** Ids of the drafts among the given message rows (for threads' draft_ids). */
  draftIdsOf(messageIds: string[]): Promise<Map<string, string>>;
  /** The drafts whose current version is one of the given message rows, by row id (a thread's latest_draft_or_message). */
  draftsOf(messageIds: string[]): Promise<Map<string, Draft>>;
  /** The `mail.send_scheduled` job handler. */
  handlers: Record<string, JobHandler>;
  /** A test-mode application's scheduled sends due by `at` (unix seconds), run now: see {@link ScheduledSends.runDue}. */
  runDueScheduled: ScheduledSends['runDue'];
  /** The earliest pending `send_at` of an application: see {@link ScheduledSends.nextDue}. */
  nextScheduledDue: ScheduledSends['nextDue'];
}

/** What createDraftVersions() returns (src/outbound/draft-versions.ts): the versions shared by drafts and scheduled sends. */
export interface DraftVersions {
  /** A draft with its current version, or undefined (`executor`: the database or a transaction). */
  findDraft: (executor: Pick<Orm, 'select'>, grantId: string, draftId: string) => Promise<DraftRecord | undefined>;
  /** The draft, or a 404. */
  requireDraft: (grantId: string, draftId: string) => Promise<DraftRecord>;
  /** Throws a StaleError (409) unless the draft's current version is still `record.row` (inside a transaction). */
  assertCurrent: (tx: Tx, record: DraftRecord) => Promise<void>;
  /**
   * The composition of a draft, with `changes` applied. Threading stays as stored unless `changes` names another
   * message to answer (the message first answered may have been deleted since; its headers are kept).
   */
  compositionOf: (
    principal: Principal,
    grant: GrantRow,
    record: DraftRecord,
    changes: Partial<ComposeRequest>,
    mode: 'send' | 'draft',
  ) => Promise<Composition>;
  /**
   * Stores a version of a draft in the caller's transaction: a new `messages` row (no `message.created` event: a
   * draft is not mail that arrived), then, for an existing draft, the details point to it and the old row goes.
   */
  writeVersion: (
    tx: Tx,
    composition: Composition,
    built: Built,
    previous: DraftRecord | undefined,
    flags: { starred: boolean; unread: boolean; sendAt: number | null },
  ) => Promise<DraftRecord>;
}

/** What createScheduledSends() returns (src/outbound/scheduled-sends.ts). */
export interface ScheduledSends {
  /** Holds a message as a draft until `sendAt` and schedules its sending. Answers with HTTP status 202. */
  schedule: (composition: Composition, options: ScheduleOptions) => Promise<SendResult>;
  /** Removes a draft in the caller's transaction and cancels its pending schedules (except `keep`). */
  removeDraft: (tx: Tx, record: DraftRecord, keep?: string) => Promise<void>;
  /** Scheduled sends of a mailbox, the latest send time first (at most 200). */
  listScheduled: (this: void, principal: Principal, input: { grant_id: string }) => Promise<ScheduledMessage[]>;
  /** One scheduled send. */
  findScheduled: (this: void, principal: Principal, input: ScheduledMessageRefInput) => Promise<ScheduledMessage>;
  /** Stops a pending scheduled send. A send already made is a 400. */
  stopScheduled: (this: void, principal: Principal, input: ScheduledMessageRefInput) => Promise<{ message: string }>;
  /** The `mail.send_scheduled` handler: sends the held draft, or records why it could not be sent. */
  handlers: Record<string, JobHandler>;
  /**
   * Runs a test-mode application's scheduled sends due by `at` (unix seconds), earliest first, as the worker's job
   * would (those of a test-mode application have no job: its test clock runs them). How many were run.
   */
  runDue: (this: void, applicationId: string, at: number) => Promise<number>;
  /** The earliest `send_at` (unix seconds) of a pending scheduled send of an application, if any. */
  nextDue: (this: void, applicationId: string) => Promise<number | undefined>;
}

/** What createComposer() returns (src/outbound/composition.ts): requests to compositions, compositions to signed MIME. */
export interface Composer {
  /**
   * Validates and resolves a send or draft request for `grant`. `mode: 'send'` also requires a recipient.
   * Errors name the field and say what to do.
   */
  prepare: (
    principal: Principal,
    grant: GrantRow,
    input: ComposeRequest,
    mode: 'send' | 'draft',
  ) => Promise<Composition>;
  /** Composes the MIME of a composition (with the given Message-ID and date). 413 over 40 MB. */
  build: (composition: Composition, headerMessageId: string, date: Date) => Promise<Built>;
  /** The MIME of a message, DKIM-signed when its sender's domain can sign. */
  signedMime: (input: ComposeInput) => Promise<Buffer>;
  /** Composed MIME DKIM-signed for the domain of `fromEmail`, when that domain can sign (else as it is). */
  sign: (raw: Buffer, fromEmail: string) => Promise<Buffer>;
  /**
   * Resolves attachments: Base64 content, or by id an attachment of this mailbox or a completed upload session of
   * it (another mailbox's id is a 404). Without a mailbox (a transactional send), only content is accepted.
   */
  resolveAttachments: (grant: GrantRow | undefined, inputs: AttachmentInput[]) => Promise<OutgoingAttachment[]>;
}

/** What createSubmission() returns (src/outbound/submission.ts): accept a composition now, and the detached senders. */
export interface Submission {
  /**
   * Sends a composition now: composes, then in one transaction passes the outbound stage (rules, daily quota, size:
   * a refusal stores nothing), stores the sender's copy in `sent`, queues every recipient, collects them as
   * contacts, records the evaluation and keeps the idempotency answer; then delivers to the mailboxes of this
   * service before returning (the others are the workers' job).
   */
  accept: (requested: Composition, options?: AcceptOptions) => Promise<SendResult>;
  /**
   * Queues a message that has no sender's copy (invitations, system mail, transactional sends), then delivers
   * locally at once. Returns the outbound record's id (none when there was nobody to send to).
   */
  sendDetached: (spec: DetachedSend) => Promise<{ outboundId: string | undefined }>;
  /** A plain-text message with no threading or attachments, its Message-ID on the sender's domain. */
  plainMessage: (
    fields: Pick<ComposeInput, 'from' | 'to' | 'subject' | 'customHeaders' | 'calendar'> & { text: string },
  ) => ComposeInput;
  /** iMIP invitations, updates, cancellations and replies of the event service. */
  invitations: InvitationSender;
  /** The service's own emails (webhook failure alerts), from `AGENTPOST_SYSTEM_FROM`. */
  notifier: Notifier;
}

/** What createOutboundQueue() returns (src/outbound/outbound-queue.ts): the durable outbound queue. */
export interface OutboundQueue {
  /** Routes recipients (lower-cased, once each): a mailbox here is local, an unknown one on our domains fails at once. */
  route: (emails: string[]) => Promise<RoutedRecipient[]>;
  /**
   * Routes the recipients of a send of `grant` (a provider's grant, or the grant with that id): through its
   * account's own SMTP server when its provider has a submitter (a connected account), else as {@link route}.
   */
  routeFor: (grant: Pick<GrantRow, 'id' | 'provider'> | string, emails: string[]) => Promise<RoutedRecipient[]>;
  /**
   * Queues a composed message inside the caller's transaction: the ledger rows, one job for the local recipients
   * (returned, already leased to the caller, who runs it at once with {@link runInline} after the commit) and one
   * per remote domain (the workers take those).
   */
  queue: (
    tx: Tx,
    spec: OutboundSpec,
    recipients: RoutedRecipient[],
  ) => Promise<{ outboundId: string; inline: Job | undefined }>;
  /**
   * Runs a first attempt the caller holds the lease of (local delivery right after acceptance, so the recipient
   * has the message when the send returns) and records its outcome. Never throws: if it fails, the job stays and a
   * worker retries it once the lease lapses.
   */
  runInline: (job: Job | undefined) => Promise<void>;
  /** Delivery state of each recipient, and the tracking options, of the given sender's copies, by message id. */
  statusOf: (messageIds: string[]) => Promise<Map<string, SentState>>;
  /** The `mail.deliver` handler: one attempt for the job's recipients still owed the message. */
  handlers: Record<string, JobHandler>;
}

/** What createDeliveryAttempts() returns (src/outbound/delivery-attempts.ts): the two kinds of attempt. */
export interface DeliveryAttempts {
  /** Delivers to mailboxes of this service (once each: a copy already received with the Message-ID is not stored again). */
  deliverLocal: (outbound: OutboundRow, pending: RecipientRow[], raw: Buffer) => Promise<AttemptResult[]>;
  /**
   * Sends to the recipients of one remote domain: each target in turn, until a server answers with a verdict.
   * `returnPathOf` gives each recipient's envelope sender (default: the message's envelope sender).
   */
  deliverRemote: (
    outbound: OutboundRow,
    domain: string,
    pending: RecipientRow[],
    raw: Buffer,
    context: JobContext,
    returnPathOf?: (email: string) => string,
  ) => Promise<AttemptResult[]>;
}

/** What createRouter() returns (src/outbound/routing.ts): the router of the outbound queue. */
export interface Router {
  /** Routes recipients (lower-cased, once each): a mailbox here is local, an unknown one on our domains fails at once. */
  route: (emails: string[]) => Promise<RoutedRecipient[]>;
  /** Where mail for `domain` goes: the relay, or the domain's MX hosts by preference (their addresses, resolved here). */
  targetsFor: (domain: string) => Promise<SmtpTarget[]>;
}

/** What createOutboundStage() returns (src/outbound/outbound-stage.ts): the checks of every send of a grant. */
export interface OutboundStage {
  /** Loads what applies to a send of `grant` (outside the transaction). Undefined: nothing applies. 503 when it cannot. */
  prepare: (grant: GrantRow, candidate: SendCandidate) => Promise<OutboundCheck | undefined>;
  /**
   * Inside the send's transaction: counts the send (send phase, under a policy), decides, and throws a
   * RefusedSend when it may not go. `schedule`: a send being scheduled, checked without the quota.
   */
  admit(tx: Tx, check: OutboundCheck | undefined, phase: 'send' | 'schedule'): Promise<Admitted | undefined>;
  /** Records an admitted send's evaluation in its transaction (`messageId`: the sent copy). */
  record(tx: Tx, admitted: Admitted | undefined, messageId: string | undefined): Promise<void>;
  /** Awaits a send; a RefusedSend (its transaction rolled back) is recorded in a write of its own, then rethrown. */
  settle<T>(work: Promise<T>): Promise<T>;
  /**
   * What a send would meet, without sending: the decision against today's count, the recipients rules refuse
   * (each on its own) and those `undeliverable` names (an unknown mailbox of this service). Writes nothing.
   */
  dryRun(grant: GrantRow, candidate: SendCandidate, undeliverable: ReadonlyMap<string, string>): Promise<SendDryRun>;
}

/** What createAttachmentUploads() returns (src/outbound/attachment-uploads.ts): large-attachment upload sessions. */
export interface AttachmentUploads {
  /**
   * Opens a session for the mailbox and answers the pre-signed URL to upload to: on `AGENTPOST_PUBLIC_URL` when
   * set, else on the origin the caller reached (`origin`).
   */
  create(principal: Principal, input: CreateAttachmentUploadInput, origin?: string): Promise<AttachmentUploadSession>;
  /**
   * Stores the bytes `PUT` to a pre-signed URL. A wrong secret or an unknown session is the same 404; a session
   * already completed or expired refuses more bytes. A second PUT before completion replaces the first.
   */
  upload(id: string, token: string | undefined, bytes: Buffer): Promise<void>;
  /** Completes a session after its upload: checks the size announced, then makes the file usable (`ready`). */
  complete(principal: Principal, input: CompleteAttachmentUploadInput): Promise<AttachmentUploadComplete>;
  /**
   * The staged file of a completed session of `grant`, for a send or a draft; undefined when `id` is no session
   * of this mailbox. A session not completed, failed or expired is a 400 naming `field`.
   */
  staged(grant: GrantRow, id: string, field: string): Promise<StagedFile | undefined>;
}

/** What createIdempotencyStore() returns (src/outbound/idempotency.ts): the answers kept for Idempotency-Keys. */
export interface IdempotencyStore {
  /**
   * The claim of a request, or undefined without a key. A key over 256 characters is a 400 of type
   * `api.invalid_idempotency_key`; `onReplay` is told when the answer turns out to be a stored one.
   */
  claim(
    applicationId: string,
    key: string | undefined,
    operation: string,
    input: unknown,
    onReplay?: () => void,
  ): IdempotencyClaim | undefined;
  /**
   * The stored answer for the claim's key, if any (then the claim's `onReplay` is told). The key used with another
   * request is a 409 of type `api.invalid_idempotent_request`.
   */
  find(executor: Executor, claim: IdempotencyClaim | undefined): Promise<StoredAnswer | undefined>;
  /** Stores the answer, in the transaction of the send it answers. */
  save(tx: Tx, claim: IdempotencyClaim | undefined, answer: StoredAnswer): Promise<void>;
}

export type { DueRun, FollowUps, FollowUpSender } from './follow-ups-contracts.js';
