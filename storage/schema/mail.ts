/**
 * The mail store: messages, the folders they are in, threads, attachments, and the content-addressed blobs
 * that hold raw MIME, large bodies and attachment bytes. The full-text index (an FTS5 table drizzle-kit cannot
 * describe) is created by `storage/mail-search.ts` after the migrations.
 */
import { sql } from 'drizzle-orm';
import { blob, index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { grants } from './grants.js';

/** `{ name, email }` as stored (the wire form, so mapping is a copy). */
export interface StoredAddress {
  name?: string;
  email: string;
}

/**
 * Byte strings addressed by their SHA-256: the same attachment or the same raw message delivered to several
 * mailboxes is stored once. Bytes live in {@link blobChunks}, so a 40 MB message is never one giant row.
 */
export const blobs = sqliteTable('blobs', {
  /** Lower-case hex SHA-256 of the whole content. */
  hash: text('hash').primaryKey(),
  size: integer('size').notNull(),
  chunkCount: integer('chunk_count').notNull(),
  createdAt: integer('created_at').notNull(),
});

/** The bytes of a blob, in order. */
export const blobChunks = sqliteTable(
  'blob_chunks',
  {
    hash: text('hash')
      .notNull()
      .references(() => blobs.hash, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: blob('data', { mode: 'buffer' }).$type<Buffer>().notNull(),
  },
  (table) => [primaryKey({ columns: [table.hash, table.seq] })],
);

/**
 * A thread's aggregates, kept up to date as messages arrive, change or go.
 *
 * A WITHOUT ROWID table (migration 0002; drizzle-kit cannot say so): a migration that rebuilds it must keep that.
 */
export const threads = sqliteTable(
  'threads',
  {
    id: text('id').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    /** Subject of the earliest message. */
    subject: text('subject').notNull().default(''),
    /** Snippet of the latest message. */
    snippet: text('snippet').notNull().default(''),
    participants: text('participants', { mode: 'json' })
      .$type<StoredAddress[]>()
      .notNull()
      .default(sql`'[]'`),
    messageCount: integer('message_count').notNull().default(0),
    earliestMessageDate: integer('earliest_message_date').notNull(),
    /** Date of the latest message, received or sent: the list order. */
    latestMessageDate: integer('latest_message_date').notNull(),
    /** Sequence of the latest message: breaks ties of the list order. */
    latestSeq: integer('latest_seq').notNull(),
    latestMessageId: text('latest_message_id').notNull(),
    latestMessageReceivedDate: integer('latest_message_received_date'),
    latestMessageSentDate: integer('latest_message_sent_date'),
    hasAttachments: integer('has_attachments', { mode: 'boolean' }).notNull().default(false),
    unread: integer('unread', { mode: 'boolean' }).notNull().default(false),
    starred: integer('starred', { mode: 'boolean' }).notNull().default(false),
    folders: text('folders', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [index('threads_grant_order_idx').on(table.grantId, table.latestMessageDate, table.latestSeq)],
);

/**
 * Message-IDs known in a mailbox and the thread each belongs to: a message's own id and every id it refers to
 * (In-Reply-To, References). A new message joins the thread of any id it shares, whichever arrived first.
 *
 * A WITHOUT ROWID table (migration 0002; drizzle-kit cannot say so): a migration that rebuilds it must keep that.
 */
export const threadReferences = sqliteTable(
  'thread_references',
  {
    grantId: text('grant_id').notNull(),
    /** Normalised Message-ID: lower case, without angle brackets. */
    headerId: text('header_id').notNull(),
    threadId: text('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
  },
  (table) => [
    primaryKey({ columns: [table.grantId, table.headerId, table.threadId] }),
    index('thread_references_thread_idx').on(table.threadId),
  ],
);

/** What the inbound mail stages decided about a message, kept on it (src/mail/stages). */
export interface StoredMessageVerdict {
  /** SPF, DKIM, DMARC and ARC results (mailauth), and the `Authentication-Results` header added to the message. */
  authentication?: {
    spf?: { result: string; domain?: string };
    dkim?: { result: string; domain?: string; selector?: string }[];
    dmarc?: { result: string; domain?: string; policy?: string };
    arc?: { result: string };
    header?: string;
  };
  /** The spam verdict: score against the policy's threshold, and what contributed. */
  spam?: { spam: boolean; score: number; threshold: number; reasons: string[] };
  /** Attachments the policy removed before the message was stored. */
  removed_attachments?: { filename: string; content_type: string; size: number; reason: string }[];
  /**
   * Written by a machine (issue 37; src/mail/stages/automated.ts): an auto-reply, a bounce or report, a list, bulk
   * mail or a no-reply sender, and the header fields that told. Absent for mail a person wrote, and for mail stored
   * before the detector existed.
   */
  automated?: { kind: string; reasons: string[] };
}

export const messages = sqliteTable(
  'messages',
  {
    id: text('id').notNull().unique(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    threadId: text('thread_id').notNull(),
    /**
     * Insertion order: the table's rowid (new rows go on its last page), the rowid of the message in the full-text
     * index and the key of its raw message in {@link messageRaw}.
     */
    seq: integer('seq').primaryKey(),
    /** Unix seconds the message was received (or sent, for the sent copy): the list order. */
    date: integer('date').notNull(),
    /** The Date header, when it parsed. */
    sentAt: integer('sent_at'),
    subject: text('subject').notNull().default(''),
    fromAddresses: text('from_addresses', { mode: 'json' })
      .$type<StoredAddress[]>()
      .notNull()
      .default(sql`'[]'`),
    toAddresses: text('to_addresses', { mode: 'json' })
      .$type<StoredAddress[]>()
      .notNull()
      .default(sql`'[]'`),
    ccAddresses: text('cc_addresses', { mode: 'json' })
      .$type<StoredAddress[]>()
      .notNull()
      .default(sql`'[]'`),
    bccAddresses: text('bcc_addresses', { mode: 'json' })
      .$type<StoredAddress[]>()
      .notNull()
      .default(sql`'[]'`),
    replyToAddresses: text('reply_to_addresses', { mode: 'json' })
      .$type<StoredAddress[]>()
      .notNull()
      .default(sql`'[]'`),
    snippet: text('snippet').notNull().default(''),
    /** The HTML body when small; larger bodies are a blob ({@link bodyHash}). */
    body: text('body'),
    bodyHash: text('body_hash'),
    /** Folder ids; the same set as the message's rows in {@link messageFolders}. */
    folders: text('folders', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    unread: integer('unread', { mode: 'boolean' }).notNull().default(true),
    starred: integer('starred', { mode: 'boolean' }).notNull().default(false),
    hasAttachments: integer('has_attachments', { mode: 'boolean' }).notNull().default(false),
    /** Normalised Message-ID header (lower case, no angle brackets). */
    headerMessageId: text('header_message_id'),
    inReplyTo: text('in_reply_to'),
    references: text('references', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    /** The blob of the raw message; null when it is stored in {@link messageRaw} instead. */
    rawHash: text('raw_hash'),
    rawSize: integer('raw_size').notNull(),
    envelopeFrom: text('envelope_from'),
    envelopeTo: text('envelope_to'),
    /** Why the MIME could not be fully parsed; the raw message is stored either way. */
    parseError: text('parse_error'),
    metadata: text('metadata', { mode: 'json' })
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'`),
    /** What the inbound stages decided about a received message (authentication, spam, removed attachments); null when none ran. */
    verdict: text('verdict', { mode: 'json' }).$type<StoredMessageVerdict>(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    /**
     * The row's revision: triggers of the migration add one on every update of the row and on every change of its
     * attachments, whatever connection or process writes. Kept wire forms of a message are valid while it is unchanged
     * (src/messages/message-json-cache.ts); `updated_at` is in seconds, so two changes in one second would not show.
     */
    rev: integer('rev').notNull().default(0),
  },
  (table) => [
    // A mailbox newest first; with the id and revision in it, a page of a list's keys (src/messages/message-service.ts)
    // is read from this index alone, not from message rows.
    index('messages_grant_order_idx').on(table.grantId, table.date, table.seq, table.id, table.rev),
    // Covers the sum of a grant's raw sizes (a policy's `limit_storage_total`): read from this index alone, not from
    // message rows whose inline bodies push `raw_size` onto overflow pages.
    index('messages_grant_size_idx').on(table.grantId, table.rawSize),
    index('messages_thread_idx').on(table.threadId, table.date),
    index('messages_raw_hash_idx')
      .on(table.rawHash)
      .where(sql`${table.rawHash} IS NOT NULL`),
    // Only large bodies have a hash: no entry (and no index write) for the others.
    index('messages_body_hash_idx')
      .on(table.bodyHash)
      .where(sql`${table.bodyHash} IS NOT NULL`),
  ],
);

/**
 * The raw message of a message stored with one copy (mail to one mailbox of this service), by the message's `seq`:
 * rows go on the table's last page, where a content-addressed blob costs a blob row, its chunks and an index entry
 * at a random place in three B-trees. Mail for several mailboxes keeps one blob for all its copies.
 */
export const messageRaw = sqliteTable('message_raw', {
  seq: integer('seq')
    .primaryKey()
    .references(() => messages.seq, { onDelete: 'cascade' }),
  data: blob('data', { mode: 'buffer' }).$type<Buffer>().notNull(),
});

/**
 * Folder membership, for the `in` filter and for folder counts without scanning messages.
 *
 * A WITHOUT ROWID table (migration 0002; drizzle-kit cannot say so): a migration that rebuilds it must keep that.
 */
export const messageFolders = sqliteTable(
  'message_folders',
  {
    messageId: text('message_id')
      .notNull()
      .references(() => messages.id, { onDelete: 'cascade' }),
    grantId: text('grant_id').notNull(),
    folderId: text('folder_id').notNull(),
    /** Copy of the message's flag, so unread counts read this table only. */
    unread: integer('unread', { mode: 'boolean' }).notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.messageId, table.folderId] }),
    index('message_folders_count_idx').on(table.grantId, table.folderId, table.unread),
  ],
);

export const attachments = sqliteTable(
  'attachments',
  {
    id: text('id').primaryKey(),
    messageId: text('message_id')
      .notNull()
      .references(() => messages.id, { onDelete: 'cascade' }),
    grantId: text('grant_id').notNull(),
    /** Order in the message. */
    position: integer('position').notNull(),
    filename: text('filename').notNull(),
    contentType: text('content_type').notNull(),
    size: integer('size').notNull(),
    isInline: integer('is_inline', { mode: 'boolean' }).notNull().default(false),
    contentId: text('content_id'),
    /** `attachment` or `inline`. */
    contentDisposition: text('content_disposition'),
    blobHash: text('blob_hash').notNull(),
  },
  (table) => [
    index('attachments_message_idx').on(table.messageId, table.position),
    index('attachments_blob_idx').on(table.blobHash),
  ],
);

/**
 * Large-attachment upload sessions (`/v3/grants/{id}/attachment-uploads`): a file staged by a pre-signed `PUT`,
 * then referenced by id from a send or a draft of the same mailbox until the session expires. The bytes are a
 * blob like any attachment's.
 */
export const attachmentUploads = sqliteTable(
  'attachment_uploads',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    filename: text('filename').notNull(),
    contentType: text('content_type').notNull(),
    /** The size announced at creation (0: not announced); completion checks the upload against it. */
    expectedSize: integer('expected_size').notNull().default(0),
    status: text('status', { enum: ['uploading', 'ready', 'failed', 'expired'] }).notNull(),
    /** SHA-256 (hex) of the secret in the pre-signed URL; the secret itself is never stored. */
    tokenHash: text('token_hash').notNull(),
    /** The uploaded bytes, once the PUT arrived. */
    blobHash: text('blob_hash'),
    size: integer('size'),
    /** Unix seconds. */
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [
    index('attachment_uploads_grant_idx').on(table.grantId),
    index('attachment_uploads_expiry_idx').on(table.expiresAt),
    index('attachment_uploads_blob_idx').on(table.blobHash),
  ],
);
