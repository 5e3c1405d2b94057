/**
 * @module storage/engine/mail-writer-types
 * What the mail writer (./mail-writer.ts) is given and answers: the items, raw messages and groups it stores, their
 * results, and its interface.
 */
import type { ruleEvaluations } from '../schema/admin.js';
import type { imapMessages } from '../schema/connected.js';
import type { jobs, outboxEvents } from '../schema/events.js';
import type { attachments, messageFolders, messages } from '../schema/mail.js';

/** A blob to store with a message (raw MIME, attachment bytes, a large body). */
export interface MailWriteBlob {
  /** Lower-case hex SHA-256 of `bytes`. */
  hash: string;
  bytes: Uint8Array;
}

/** One copy of a message, for one mailbox. Rows are complete; the writer fills in what needs the database. */
export interface MailWriteCopy {
  /** `threadId` is the id of the new thread used when no earlier thread matches; `seq` is assigned by the writer. */
  message: typeof messages.$inferSelect;
  /** Message-IDs the message may share with an earlier thread of its mailbox, closest first. */
  threadCandidates: string[];
  /** Message-IDs recorded for the message's thread (its own, In-Reply-To, References). */
  references: string[];
  folders: (typeof messageFolders.$inferSelect)[];
  attachments: (typeof attachments.$inferSelect)[];
  search: { subject: string; addresses: string; body: string };
  /** The raw message, stored in `message_raw` under the copy's `seq` (then `message.rawHash` is null), if not a blob. */
  raw?: Uint8Array;
  /** The `message.created` event; the writer sets its payload's `thread_id`. None for mail stored quietly (a connected account's past). */
  event?: Omit<typeof outboxEvents.$inferSelect, 'seq'>;
}

/** One message: its blobs (stored once) and a copy per mailbox, stored together or not at all. */
export interface MailWriteItem {
  blobs: MailWriteBlob[];
  copies: MailWriteCopy[];
  /** Unix seconds, for the blob rows. */
  createdAt: number;
  /**
   * Jobs stored in the same transaction (whole rows; a row whose `dedupeKey` is taken is skipped): work that must
   * follow the message, such as applying its invitation, exists if and only if the message does.
   */
  jobs?: (typeof jobs.$inferSelect)[];
  /** Rule-evaluation (audit) rows stored in the same transaction: the decisions that shaped the message. */
  evaluations?: (typeof ruleEvaluations.$inferInsert)[];
  /** Per-grant daily counters added to in the same transaction (`grant_daily_usage`). */
  dailyUsage?: DailyUsageIncrement[];
  /**
   * Links of a connected account's message to its IMAP folder and UID (`imap_messages`), stored in the same
   * transaction: a link already taken fails the message (it was synced before), so no IMAP message is stored twice.
   */
  imapLinks?: (typeof imapMessages.$inferSelect)[];
}

/** Messages to add to a grant's counters of one day (unix days, UTC). */
export interface DailyUsageIncrement {
  grantId: string;
  day: number;
  received: number;
  sent: number;
}

/** Where a copy was stored. */
export interface MailWriteResult {
  messageId: string;
  threadId: string;
  seq: number;
}

/**
 * A raw message for the thread to prepare itself, with the module named by {@link MailWriterOptions.prepareModule}:
 * parsing and row building then run on the writer thread, beside the writes, instead of on a parser thread and the
 * event loop with two more hand-offs between threads.
 */
export interface MailRawJob {
  /** The message bytes (copied once to the thread). */
  raw: Uint8Array;
  /** What the prepare module needs besides the bytes; storage does not look into it. */
  meta: unknown;
  /** The ids the copies' messages will have, for finding out what a thread that died had stored. */
  messageIds: string[];
  /** See {@link MailWriteOptions.durable}. */
  durable?: boolean | undefined;
}

/**
 * Raw messages of a bulk load (a connected account's initial sync) handed over together: one pending write and one
 * hand-off between threads for all of them. Each is prepared and stored on its own, as a {@link MailRawJob} that
 * need not be durable (see {@link MailWriteOptions.durable}).
 */
export interface MailRawGroup {
  /**
   * The messages' bytes. Each that is a whole buffer of its own is moved to the thread, not copied: the caller must
   * not use it after (it reads as empty); the others are copied. A declined message's bytes come back in its outcome.
   */
  raws: Uint8Array[];
  /** Each message's `meta` (see {@link MailRawJob.meta}). */
  metas: unknown[];
  /** Each message's ids (see {@link MailRawJob.messageIds}). */
  messageIds: string[][];
}

/** Options of one write. */
export interface MailWriteOptions {
  /**
   * Whether the write resolves only once its COMMIT reached the disk (default true: the caller acknowledges the
   * message). False for mail that is safe elsewhere until a later durable commit (a connected account's initial
   * sync: the messages stay on the IMAP server, and the sync records how far it got in a commit that syncs the log,
   * and with it every earlier commit): a transaction of such writes alone commits without waiting for the sync
   * (synchronous=NORMAL), and a crash may lose it, consistently, with its links.
   */
  durable?: boolean | undefined;
}

/** What became of a {@link MailRawJob}: stored, or left for the caller because the prepare module declined it. */
export type MailRawOutcome = { prepared: true; results: MailWriteResult[]; summary: unknown } | { prepared: false };

/**
 * What became of one message of a {@link MailRawGroup}: stored (as a {@link MailRawOutcome}, without its summary),
 * declined (with its bytes, for the caller to prepare elsewhere), or failed to store.
 */
export type MailRawGroupOutcome =
  | { prepared: true; results: MailWriteResult[]; summary: unknown }
  | { prepared: false; raw: Uint8Array }
  | { prepared: true; failed: MailWriteError };

/**
 * The contract of a prepare module: `prepare(raw, meta)` returns the item to store and a summary handed back to the
 * caller, or undefined when it cannot prepare that message (the caller then parses it elsewhere and calls `write`).
 * It runs on the writer thread, so it must be bounded in time and must not throw (a throw counts as declined).
 * The thread loads it by URL: compiled JavaScript, or TypeScript when the writer itself runs from its sources (the
 * thread has tsx registered then; see worker-module.ts).
 */
export type MailPrepare = (raw: Uint8Array, meta: unknown) => { item: MailWriteItem; summary: unknown } | undefined;

/** Options of {@link createMailWriter}. */
export interface MailWriterOptions {
  /**
   * URL of a module exporting a {@link MailPrepare} named `prepare`, loaded by the thread (find it with
   * `workerModule`, so it is JavaScript in the build and TypeScript in the sources); needed by {@link MailWriter.writeRaw}.
   */
  prepareModule?: URL | undefined;
  /** Most messages in one transaction (default 64). */
  maxBatch?: number;
  /** Most bytes of blobs in one transaction, unless one message alone is larger (default 32 MB). */
  maxBatchBytes?: number;
  /**
   * A thread that has work and answers nothing for this long is stopped (default 60 s); the messages it did not
   * commit fail. A thread stops at its next instruction of JavaScript: an SQL statement under way finishes first.
   */
  batchTimeoutMs?: number;
  /** Milliseconds the writer waits for another process's write lock (default 5 s). */
  busyTimeoutMs?: number;
  /** Told when the thread stopped before `close` (a crash, or stopped by the watchdog); the next write starts another. */
  onExit?: (reason: string) => void;
}

/** The mail writer. */
export interface MailWriter {
  /** Stores a message in the next batch; resolves with one result per copy once the batch's COMMIT is on disk (see {@link MailWriteOptions}). */
  write(item: MailWriteItem, options?: MailWriteOptions): Promise<MailWriteResult[]>;
  /**
   * Prepares a raw message on the thread and stores it in the next batch, resolving once the COMMIT is on disk; or
   * resolves `{ prepared: false }` (nothing stored) when the prepare module declines it.
   */
  writeRaw(job: MailRawJob): Promise<MailRawOutcome>;
  /**
   * {@link writeRaw} of a bulk load's messages, together: one outcome per message, in order, once each is stored
   * (without waiting for the log to reach the disk), declined, or failed (`{ failed }`: the others are not held back).
   */
  writeRawGroup(group: MailRawGroup): Promise<MailRawGroupOutcome[]>;
  /** Whether the writer was made with a prepare module (so {@link writeRaw} can store anything). */
  readonly prepares: boolean;
  /**
   * Starts the thread now rather than at the first write (e.g. when the service starts); resolves once it has loaded
   * its modules and opened its connection (or stopped trying: the next write starts another). Never rejects.
   */
  warm(): Promise<void>;
  /**
   * Stops the thread (once an SQL statement under way returns): the messages of the batch in flight that it had
   * not committed fail, and nothing of them stays. The next write starts a new thread.
   */
  terminate(): Promise<void>;
  /** Lets queued writes finish (up to `batchTimeoutMs`), then stops the thread; later writes fail. */
  close(): Promise<void>;
}

/** A failed write of the mail writer (storing may be retried later). */
export class MailWriteError extends Error {
  override readonly name = 'MailWriteError';
}
