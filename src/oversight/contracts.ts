/**
 * @module oversight/contracts
 * Oversight enforced by the server (issue 37, docs/oversight.md): the checks every send passes before it may leave,
 * in one order, each one a {@link SendGuard}; what they decide ({@link SendVerdict}); and the approval queue that
 * holds a send until a person with `approvals.decide` releases it.
 */
import type { OperationContext, Principal } from '../access.js';
import type {
  GrantRow,
  StoredMessageVerdict,
  StoredOversightMode,
  StoredPolicyOversight,
  tables,
} from '../../storage/index.js';
import type { AppError } from '../errors.js';
import type {
  Approval,
  DecideApprovalInput,
  ListApprovalsInput,
  ListSendReviewsInput,
  MarkSendReviewInput,
  SendReview,
} from '../schemas/oversight.js';

/** A held send as stored (`approvals`). */
export type ApprovalRow = typeof tables.approvals.$inferSelect;

/** A grant's oversight mode. */
export type OversightMode = StoredOversightMode;

/** The oversight that applies to a grant: its mode (the grant's own, else its policy's) and every setting resolved. */
export interface ResolvedOversight {
  mode: OversightMode;
  /** Where the mode came from. */
  modeFrom: 'grant' | 'policy' | 'default';
  untrustedReadGate: 'off' | 'new_recipients' | 'all_sends';
  untrustedReadWindowMs: number;
  /** A read message whose injection score is at or above this is flagged (0–1). */
  injectionThreshold: number;
  /** Addresses (`a@b.c`) and domains (`@b.c` or `b.c`) a `gated_send` grant may write to without approval. */
  allowedRecipients: readonly string[];
  /** Who is mailed when a send waits (one-time links to decide it). */
  reviewers: readonly string[];
  /** Whether agent sends carry `Auto-Submitted: auto-generated` and `X-Auto-Response-Suppress: All`. */
  agentHeaders: boolean;
  /** Agent sends a thread may take in an hour (null: no budget). */
  threadAgentSendsPerHour: number | null;
  /** Loop detection: more than `loopMessages` messages between two mailboxes of a thread within `loopMinutes`. */
  loopMessages: number;
  loopMinutes: number;
  sendsPerHour: number | null;
  sendsPerDay: number | null;
  newRecipientsPerDay: number | null;
  /** Sends a minute a burst may go out at; faster ones are queued (null: no rate). */
  sendRatePerMinute: number | null;
  /** Sends queued at most for one grant before a burst is refused. */
  burstQueueMax: number;
  /** The policy's settings as stored (for guards that read one not listed above). */
  policy: StoredPolicyOversight;
}

/** One send about to be made: who makes it, through what, from which grant, to whom, in which thread. */
export interface SendAttempt {
  principal: Principal;
  context: Pick<OperationContext, 'face' | 'client' | 'tool' | 'requestId'>;
  grant: GrantRow;
  oversight: ResolvedOversight;
  /** Every recipient (to, cc, bcc), lower-cased, once each. */
  recipients: readonly string[];
  /** The message answered, in this grant's mailbox, and its thread. */
  replyToMessageId: string | undefined;
  threadId: string | undefined;
  /**
   * The `automated` verdict of the message answered, when the gate read it with its thread (null: a person wrote it);
   * absent, the guard that needs it reads it.
   */
  repliedAutomated?: StoredMessageVerdict['automated'] | null;
  /** Whether an agent makes it: the MCP or AI SDK face, or a key marked as an agent's. */
  agent: boolean;
  /** A send now, a draft sent, a scheduled send leaving, a message submitted over SMTP. */
  kind: 'send' | 'draft' | 'scheduled' | 'smtp';
  /** What the call says it means: `allow_automated_reply` (answer an automated message on purpose). */
  intent: { allowAutomatedReply?: boolean | undefined; claimToken?: string | undefined };
  /** Unix milliseconds of the attempt. */
  at: number;
}

/** Why a send waits: one check's request for approval. */
export interface ApprovalRequest {
  check: string;
  reason: string;
  trust?: string[] | undefined;
}

/** What one guard says of a send: nothing (it may go, as far as this guard knows), or one of these. */
export type GuardVerdict =
  | { outcome: 'approve'; request: ApprovalRequest }
  | { outcome: 'refuse'; error: AppError }
  /** Queued: leaves at `sendAt` (unix seconds), without a person. */
  | { outcome: 'queue'; sendAt: number; check: string; reason: string };

/** One check of the send gate. Reads only: what it counts is written by the send itself. */
export interface SendGuard {
  /** Its name in verdicts, logs and docs (`suspended`, `read_only`, `loop`, …). */
  readonly name: string;
  check(attempt: SendAttempt): Promise<GuardVerdict | undefined>;
}

/** The gate's decision on a send. */
export type SendVerdict =
  | { outcome: 'send'; monitored: boolean }
  | { outcome: 'approve'; requests: ApprovalRequest[] }
  | { outcome: 'refuse'; error: AppError; check: string }
  | { outcome: 'queue'; sendAt: number; check: string; reason: string };

/** What createOversight() returns: the send gate and what an agent's reads leave behind. */
export interface Oversight {
  /** The oversight of a grant (its mode and settings). */
  resolve(grant: GrantRow): Promise<ResolvedOversight>;
  /** Runs every guard in order (docs/oversight.md): the first refusal wins; else a queue; else approvals; else send. */
  check(attempt: SendAttempt): Promise<SendVerdict>;
  /**
   * A write other than a send (a draft, an event, a contact) by `principal` on `grant`: throws when the grant is
   * suspended or read-only.
   */
  assertWritable(grant: GrantRow, what: string): Promise<void>;
}

/** The approval queue (`/v3/approvals`). */
export interface ApprovalService {
  list(principal: Principal, input: ListApprovalsInput): Promise<{ data: Approval[]; next_cursor?: string }>;
  find(principal: Principal, approvalId: string): Promise<Approval>;
  /** Approves (the send leaves at once) or rejects, by a key with `approvals.decide` that did not ask. */
  decide(
    principal: Principal,
    input: DecideApprovalInput,
    decision: 'approve' | 'reject',
    reviewer?: string,
  ): Promise<Approval>;
  /**
   * Marks pending requests past their expiry as `expired` (run by the worker): the ones it closed, for the access
   * log.
   */
  expire(): Promise<{ id: string; applicationId: string; grantId: string }[]>;
  /** Mails each reviewer a signed link to the confirmation page of a held send (never throws). */
  notify(row: ApprovalRow, reviewers: readonly string[]): Promise<void>;
  /** The held send a review link names, with its reviewer; undefined for a link this service did not sign. */
  byReviewToken(token: string): Promise<{ approval: Approval; reviewer: string; applicationId: string } | undefined>;
  /** Decides through a review link (the confirmation page's POST), as the reviewer it names. */
  decideByReviewToken(token: string, decision: 'approve' | 'reject', reason: string | undefined): Promise<Approval>;
}

/** Sends made under `monitored`, for review after they left. */
export interface SendReviewService {
  list(principal: Principal, input: ListSendReviewsInput): Promise<{ data: SendReview[]; next_cursor?: string }>;
  mark(principal: Principal, input: MarkSendReviewInput): Promise<SendReview>;
}
