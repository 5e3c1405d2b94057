/**
 * @module mail/inbound-state
 * What the inbound path's parts (./inbound.ts) share: the message, result and option types, what a store carries
 * besides the copies, and the state `createInboundService` makes.
 */
import type { GroupCommit, MailWriter } from '../../storage/index.js';
import type { GrantRow } from '../../storage/index.js';
import type { Enforcement } from '../admin/index.js';
import type { CoreDeps, SmtpClientInfo, InboundStages } from '../ports/index.js';
import type { MailStore, NewMessage } from '../messages/index.js';
import type { imapMessages } from '../../storage/schema/connected.js';
import type { JobInput, JobQueue } from '../jobs/index.js';
import type { DeliveredMail, StoredCopy } from './after-delivery.js';
import type { HeaderLimits } from './header-section.js';
import type { MimeParser, ParsedMessage } from '../mime/index.js';
import type { InboundPipeline } from './stages/inbound-pipeline.js';
import type { Refusal } from './stages/policy-limits.js';
import type { MailboxReports, ThreadReplies } from '../deliverability/index.js';
import type { EvaluationRow } from '../admin/index.js';
import type { DailyUsageIncrement } from '../../storage/index.js';

/** Largest message accepted, in bytes (the SMTP SIZE limit, and the outbound limit of Agent Accounts). */
export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;

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

/** One stored copy. */
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

/** Options of {@link createInboundService}. */
export interface InboundServiceOptions {
  /** The MIME parser pool (a default pool is made when absent). */
  parser?: MimeParser;
  /** The mail writer thread, for an embedded database (made on first use when absent; tests pass their own). */
  writer?: MailWriter;
  /**
   * What follows a delivery (src/mail/after-delivery.ts): `jobsOf` names the durable jobs stored in the message's own
   * transaction (its invitation), `followUp` runs after `deliverInbound` resolved (the sender to contacts). Neither
   * delays the answer to the sender, and the delivery stands whatever they do.
   */
  afterDelivery?: {
    jobsOf(parsed: Pick<ParsedMessage, 'from' | 'attachments'>, copies: StoredCopy[]): JobInput[];
    followUp(mail: DeliveredMail): Promise<void>;
  };
  /** Told when jobs were stored with a message, so the in-process workers look at once. */
  jobs?: Pick<JobQueue, 'announce'>;
  /**
   * Replies to tracked sends (src/deliverability/thread-replies.ts): asked before a message is stored, it names the
   * jobs that count the reply, stored in the message's own transaction. Skipped when absent.
   */
  replies?: Pick<ThreadReplies, 'jobsFor' | 'jobsForMany'>;
  /**
   * Reports among a connected account's synced mail (src/deliverability/mailbox-reports.ts): asked before a fetched
   * message is stored, it names the job to store with it when the message may be a bounce or complaint.
   */
  mailboxReports?: Pick<MailboxReports, 'jobsFor'>;
  /** What applies to each grant (made from the deps when absent; the core passes its own, which admin writes invalidate). */
  enforcement?: Enforcement;
  /** The authentication and spam stages (src/ports/inbound-stages.ts); each is skipped when absent. */
  stages?: InboundStages;
  /** Told when a parser or writer thread stopped on its own (src/health.ts). */
  onThreadExit?: (thread: string, reason: string) => void;
}

/** A stored copy as ./ingest-prepare.ts receives it: a {@link NewMessage} before parsing. */
export type CopyShell = Omit<NewMessage, 'parsed' | 'raw' | 'rawHash'>;

/**
 * What a message's transaction stores besides its copies: rule-evaluation rows (given the copies' message ids), daily
 * counters, and jobs decided before the parse (given the stored copies: replies to tracked sends).
 */
export interface StoreExtras {
  /** See MailWriteOptions.durable (default true). */
  durable?: boolean | undefined;
  rows(messageIds: readonly string[]): EvaluationRow[];
  usage: DailyUsageIncrement[];
  jobs(copies: readonly StoredCopy[]): JobInput[];
  /** A connected account's message: its `imap_messages` link rows, given the copies' message ids. */
  links?: (messageIds: readonly string[]) => ImapLinkRow[];
}

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

/** What the functions of the inbound path share, made once by `createInboundService`. */
export interface InboundState {
  db: CoreDeps['db'];
  clock: CoreDeps['clock'];
  newId: CoreDeps['newId'];
  logger: CoreDeps['logger'];
  mailStore: MailStore;
  options: InboundServiceOptions;
  headerLimits: HeaderLimits;
  pipeline: InboundPipeline;
  parser: MimeParser;
  /** The group commit of a libSQL server's deliveries. */
  commit: GroupCommit<{ copies: NewMessage[]; extras: StoreExtras }, InboundDelivery[]>;
  /** The mail writer thread of an embedded database (made on first use). */
  mailWriter: () => MailWriter;
  /** Messages being parsed: a commit about to start waits briefly for them (one log sync for all). */
  parsing: number;
  /** Follow-ups under way (`close` waits for them). */
  followUps: Set<Promise<void>>;
  /** When mail last moved here (performance.now()): see MAIL_FLOWING_MS in ./inbound.ts. */
  lastMail: number;
  /** Mailboxes recently found, by normalised address, with when (performance.now(): an age, not a date). */
  found: Map<string, { check: RecipientCheck; at: number }>;
}
