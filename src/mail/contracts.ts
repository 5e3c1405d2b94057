/**
 * @module mail/contracts
 * The mail-in area's declared interface: the inbound service (delivery over SMTP and locally, and the store of mail
 * fetched from connected accounts), its stages' pipeline, evaluation log and usage meter, the follow-up of
 * deliveries; and the types they share with the areas that follow a delivery (deliverability's replies and mailbox
 * reports).
 */
import type { GrantRow, StoredMessageVerdict } from '../../storage/index.js';
import type { imapMessages } from '../../storage/schema/connected.js';
import type { EvaluationInput, EvaluationRow, GrantEnforcement, RuleOutcome } from '../admin/contracts.js';
import type { JobHandler } from '../jobs/index.js';
import type { NewMessage } from '../messages/contracts.js';
import type { ParsedMessage, ParseResult } from '../mime/index.js';
import type { AuthenticationVerdict, SmtpClientInfo, SpamVerdict } from '../ports/index.js';

/** One stored copy of a message: its mailbox and its id there. */
export interface StoredCopy {
  grantId: string;
  messageId: string;
}

/** An SMTP refusal: the reply code, its enhanced status code (RFC 3463) and a message for the sender. */
export interface Refusal {
  code: 550 | 552 | 452 | 451;
  enhanced: string;
  message: string;
  /** Which limit or rule refused (for the audit). */
  reason: string;
}

/** A removed attachment, as the message's verdict names it. */
export type RemovedAttachment = NonNullable<StoredMessageVerdict['removed_attachments']>[number];

/** A folder the copy goes to: a system folder by its role, or a folder of the mailbox by name (made when missing). */
export type FolderChoice = { system: 'inbox' | 'junk' | 'trash' | 'archive' } | { name: string };

/** What the `inbox_processing` stage decided for one copy. */
export interface InboxProcessingDecision {
  /** False when no rule applies to the grant and it has no policy: nothing was evaluated or is recorded. */
  evaluated: boolean;
  input: EvaluationInput;
  outcome: RuleOutcome;
  /** Drop the copy (a `block` rule). */
  drop: boolean;
  folders: FolderChoice[];
  unread: boolean;
  starred: boolean;
}

/** One hosted recipient of a message. */
export interface PipelineTarget {
  recipient: string;
  grant: GrantRow;
}

/** A message as the pipeline receives it. */
export interface PipelineMessage {
  raw: Buffer;
  mailFrom: string;
  /** The SMTP client; absent for local deliveries (then authentication is skipped). */
  client: SmtpClientInfo | undefined;
  /** Whether the `smtp_rcpt` stage already ran for these recipients (at RCPT TO). */
  recipientsAdmitted: boolean;
  targets: PipelineTarget[];
}

/** What was decided for one copy to store. */
export interface CopyPlan extends PipelineTarget {
  enforcement: GrantEnforcement;
  inbox: InboxProcessingDecision;
  /** Folder ids the copy goes to. */
  folderIds: string[];
  /** The ids of the folders `assign_to_folder` named (found or made). */
  assignedFolderIds: string[];
  spam: SpamVerdict | undefined;
  /** Filled by {@link InboundPipeline.stripAttachments}. */
  removedAttachments: RemovedAttachment[];
}

/** What the pipeline decided for a message. */
export interface MessagePlan {
  /** The message to store (with the `Authentication-Results` header when authenticated). */
  raw: Buffer;
  authentication: AuthenticationVerdict | undefined;
  /** Whether a machine wrote it (./stages/automated.ts): decided once from the header section, for every copy. */
  automated: StoredMessageVerdict['automated'];
  copies: CopyPlan[];
  /** Copies dropped by an `inbox_processing` block (nothing stored for them). */
  dropped: CopyPlan[];
  /** Recipients refused by the `smtp_rcpt` stage (local deliveries only). */
  refused: { recipient: string; reason: string }[];
  /** Rows decided before the message's transaction (local `smtp_rcpt`). */
  earlyRows: EvaluationRow[];
  /** Unix day and seconds of the decision. */
  day: number;
  at: number;
}

/** A message just stored for one or more mailboxes. */
export interface DeliveredMail {
  /** The mailboxes it was stored for. */
  grants: GrantRow[];
  parsed: Pick<ParsedMessage, 'from'>;
}

/** A message to deliver and its SMTP envelope. */
export interface InboundMessage {
  rawMime: Buffer | string;
  envelope: {
    /** MAIL FROM (empty for bounces). */
    mailFrom: string;
    /** RCPT TO addresses. */
    rcptTo: string[];
  };
  /** The SMTP client that handed it over (absent for local deliveries: then authentication is skipped). */
  client?: SmtpClientInfo | undefined;
  /** True when the listener already ran the `smtp_rcpt` stage for each recipient (at RCPT TO). */
  recipientsAdmitted?: boolean | undefined;
}

/** One stored copy of a delivered message. */
export interface InboundDelivery {
  recipient: string;
  grantId: string;
  messageId: string;
  threadId: string;
}

/** What {@link InboundService.deliverInbound} did. */
export interface InboundResult {
  deliveries: InboundDelivery[];
  /** Recipients that are not hosted mailboxes here, or that a rule refused (nothing stored for them). */
  rejected: { recipient: string; reason: string }[];
  /** Recipients whose copy an `inbox_processing` rule dropped after acceptance (nothing stored, no event). */
  dropped?: { recipient: string; grantId: string }[];
  /** Set when the MIME did not parse fully; the raw message was stored all the same. */
  parseError: string | undefined;
}

/**
 * Whether an address may be a recipient here. `relay` covers addresses that would route elsewhere and hosts
 * that are not ours (5.7.1); `unknown` is a hosted domain without that mailbox (5.1.1).
 */
export type RecipientCheck =
  | { ok: true; grant: GrantRow }
  | { ok: false; reason: 'relay' | 'unknown'; message: string }
  /** Refused by the recipient's rules or policy at RCPT TO (550 5.7.1, 552 5.3.4 or 452 4.2.2). */
  | { ok: false; reason: 'policy'; message: string; refusal: Refusal };

/** A row of `imap_messages`: which IMAP message (folder path, UID) a stored message is. */
export type ImapLinkRow = typeof imapMessages.$inferSelect;

/**
 * A message fetched from a connected account's IMAP server (src/imap/sync.ts). It was delivered to the
 * user already, elsewhere: it is stored as it is, without the stages meant for mail arriving at our MX.
 */
export interface FetchedMessage {
  /**
   * The message. Given to `storeFetchedMany` with others that need not be durable (a bulk load), it may be moved to
   * the writer's prepare thread: the caller must not use it after.
   */
  raw: Buffer;
  applicationId: string;
  grantId: string;
  /** The grant's address (whether a reply to a tracked send is its own) and provider (which reports come back to it). */
  grant: { email: string; provider: string };
  /** Folder ids (the IMAP folder's mapped id). */
  folders: string[];
  unread: boolean;
  starred: boolean;
  /** Unix seconds (INTERNALDATE): the list order. */
  date: number;
  /** Its link rows, given the stored message's id; stored in the same transaction. */
  links(messageId: string): ImapLinkRow[];
  /** Mail of the account's past (its initial sync): stored without `message.created` (see NewMessage.history). */
  history?: boolean | undefined;
  /**
   * False when the message is safe on its server until the sync records its progress (the initial sync): stored
   * without waiting for the log to reach the disk (MailWriteOptions.durable).
   */
  durable?: boolean | undefined;
}

/** What createEvaluationLog() returns (src/mail/stages/evaluation-log.ts): rule-evaluation rows written in batches. */
export interface EvaluationLog {
  /** Keeps rows to write soon. */
  later(rows: readonly EvaluationRow[]): void;
  /** The rows waiting, for a transaction about to be written (give them back with `later` if it fails). */
  take(): EvaluationRow[];
  /** Writes what waits; resolves when written (or the failure logged). */
  flush: () => Promise<void>;
}

/** What createUsageMeter() returns (src/mail/stages/usage-meter.ts): the usage policy limits are checked against. */
export interface UsageMeter {
  /** Messages the grant received today (UTC). */
  receivedToday(grantId: string): Promise<number>;
  /** Bytes of the grant's stored mail. */
  storedBytes(grantId: string): Promise<number>;
  /** Counts a message committed for a grant (after its transaction); `day` is its unix day. */
  added(grantId: string, bytes: number, day: number): void;
}

/** What createInboundPipeline() returns (src/mail/stages/inbound-pipeline.ts): the inbound stages in order. */
export interface InboundPipeline {
  /**
   * Stage 1 at RCPT TO, for a hosted recipient: undefined to accept it, else its refusal. Rejects (→ 451 4.3.0) when
   * the evaluation cannot complete. The evaluation's row is written soon after.
   */
  admitRecipient(
    grant: GrantRow,
    envelope: { mailFrom: string; recipient: string; size?: number | undefined },
  ): Promise<Refusal | undefined>;
  /**
   * Stages 1 (local deliveries), 2, 3, 4 (all but attachments) and 5 for a message. Throws the refusal of a limit
   * (`payload_too_large` 552, `rate_limited` 452, with `details.smtp`) when any recipient's policy refuses the
   * message, and `unavailable` when a stage cannot complete.
   */
  decide(message: PipelineMessage): Promise<MessagePlan>;
  /**
   * Stage 4 for attachments (after the parse): the parsed message each copy keeps, what it lost, and the raw message
   * it stores (src/mail/stages/policy-raw.ts: the removed parts replaced by notes). `rewrites` shares a rewrite
   * between copies whose policies decided alike; `parseFailed`: the parse failed, so under a policy that limits
   * attachments nothing of the body is kept.
   */
  stripAttachments(
    plan: CopyPlan,
    parsed: ParsedMessage,
    raw: Buffer,
    options: { parseFailed: boolean; rewrites?: Map<string, Promise<Buffer>> },
  ): Promise<{ parsed: ParsedMessage; raw: Buffer }>;
  /** What a copy stores besides the parse: folders, flags and the verdict. */
  shellOf(plan: MessagePlan, copy: CopyPlan): Pick<NewMessage, 'folders' | 'unread' | 'starred' | 'verdict'>;
  /**
   * The rule-evaluation rows to write with the message: its `inbox_processing` rows (stored copies with their message
   * ids, in order; dropped copies without) and its early rows.
   */
  rowsOf(plan: MessagePlan, messageIds: readonly string[]): EvaluationRow[];
  /** The daily counters the stored copies add to. */
  usageOf(plan: MessagePlan): { grantId: string; day: number; received: number; sent: number }[];
  /** After the message's transaction committed: counts it. */
  stored(plan: MessagePlan): void;
  /** Rows waiting from RCPT TO, for the next message's transaction (give them back with `later` when it fails). */
  takeWaiting: () => EvaluationRow[];
  /** Rows of a message whose transaction failed or that stored nothing: written by themselves, soon. */
  later(rows: readonly EvaluationRow[]): void;
  /** Writes the rows waiting (tests, shutdown). */
  flush: () => Promise<void>;
}

/** What createAfterDelivery() returns (src/mail/after-delivery.ts): the invitation job's handler and the collection of senders. */
export interface AfterDelivery {
  /** Job handlers by kind, for the background worker. */
  handlers: Record<string, JobHandler>;
  /** Runs after the delivery was answered: the sender is collected as a contact. Never throws. */
  followUp(mail: DeliveredMail): Promise<void>;
}

/** What createInboundService() returns (src/mail/inbound.ts). */
export interface InboundService {
  /**
   * Whether `address` is a hosted mailbox here. Given the envelope (the SMTP listener at RCPT TO), the `smtp_rcpt`
   * stage runs too: the recipient's rules and the limits known this early may refuse it (`reason: 'policy'`).
   * Rejects when that evaluation cannot complete (the listener answers 451 4.3.0).
   */
  checkRecipient: (
    address: string,
    envelope?: { mailFrom: string; size?: number | undefined },
  ) => Promise<RecipientCheck>;
  /** Whether mail is flowing through this process now: a delivery under way, or a recipient or delivery in the last moments. */
  flowing: () => boolean;
  /**
   * Stores a message for each hosted recipient, in one transaction; resolves after it committed. Malformed MIME
   * is stored raw with its parse error. Throws `not_found` when no recipient is hosted here and
   * `payload_too_large` over `MAX_MESSAGE_BYTES`; a storage failure rejects and stores nothing.
   */
  deliverInbound(input: InboundMessage): Promise<InboundResult>;
  /**
   * Stores a message fetched from a connected account's server, with its IMAP link, through the same store path
   * as mail received here (the writer thread's fast path, else the parser pool), in a transaction shared with
   * concurrent ones. No inbound stage runs: the mail was delivered to the user already (no rules, no spam check,
   * no bounce, no daily counter), and no follow-up (contacts); its invitation job, if any, is stored as for any
   * delivery. Rejects when it could not be stored (a link already taken: it was synced before).
   */
  storeFetched(message: FetchedMessage): Promise<InboundDelivery>;
  /**
   * {@link storeFetched} of many messages (a connected account's sync hands them over as they come), the raw
   * messages handed to the writer thread together. Each message is stored, or fails, on its own; one outcome per
   * message, in order.
   */
  storeFetchedMany: (fetched: readonly FetchedMessage[]) => Promise<PromiseSettledResult<InboundDelivery>[]>;
  /** Parses a message on the parser pool (never on the event loop). */
  parse: (raw: Buffer) => Promise<ParseResult>;
  /**
   * Starts the mail writer thread now (an embedded database only) rather than at the first message: when the
   * service starts, in the roles that store mail. Resolves once it has loaded; never rejects.
   */
  warm(): Promise<void>;
  /** Writes the rule-evaluation rows still waiting (tests; shutdown). */
  flushEvaluations: () => Promise<void>;
  /** Stops the parser's worker threads and, once the writes and follow-ups under way are done, the mail writer thread. */
  close(): Promise<void>;
}
