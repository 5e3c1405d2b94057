/**
 * @module mail/inbound-state
 * What the inbound path's parts (./inbound.ts) share: the message, result and option types, what a store carries
 * besides the copies, and the state `createInboundService` makes.
 */
import type { GroupCommit, MailWriter } from '../../storage/index.js';
import type { Enforcement } from '../admin/index.js';
import type { CoreDeps, InboundStages } from '../ports/index.js';
import type { MailStore, NewMessage } from '../messages/index.js';
import type { JobInput, JobQueue } from '../jobs/index.js';
import type { DeliveredMail, StoredCopy } from './after-delivery.js';
import type { HeaderLimits } from './header-section.js';
import type { MimeParser, ParsedMessage } from '../mime/index.js';
import type { InboundPipeline } from './stages/inbound-pipeline.js';
import type { MailboxReports, ThreadReplies } from '../deliverability/index.js';
import type { EvaluationRow } from '../admin/index.js';
import type { DailyUsageIncrement } from '../../storage/index.js';
import type { InboundDelivery, RecipientCheck, ImapLinkRow } from './contracts.js';

export type {
  InboundMessage,
  InboundDelivery,
  InboundResult,
  RecipientCheck,
  ImapLinkRow,
  FetchedMessage,
} from './contracts.js';

/** Largest message accepted, in bytes (the SMTP SIZE limit, and the outbound limit of Agent Accounts). */
export const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;

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
