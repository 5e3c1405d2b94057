/**
 * Oversight (issue 37, src/oversight/): sends waiting for a person's approval, each bound to the SHA-256 of the exact
 * message that will leave; sends made under `monitored` listed for review afterwards; and what an agent read that
 * its trust block flagged (the untrusted-read gate's memory).
 */
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { StoredAddress } from './mail.js';
import type { StoredProvenance, StoredTrackingOptions } from './outbound.js';

/** An attachment of a held send: its metadata, the bytes kept as a blob. */
export interface StoredHeldAttachment {
  filename: string;
  contentType: string;
  contentId?: string | undefined;
  inline: boolean;
  size: number;
  blobHash: string;
}

/** The composition of a held send, as JSON (the grant is read again when it leaves). */
export interface StoredHeldComposition {
  from: StoredAddress;
  to: StoredAddress[];
  cc: StoredAddress[];
  bcc: StoredAddress[];
  replyTo: StoredAddress[];
  subject: string;
  body: string;
  isPlaintext: boolean;
  attachments: StoredHeldAttachment[];
  inReplyTo: string | undefined;
  references: string[];
  replyToMessageId: string | undefined;
  customHeaders: { name: string; value: string }[];
  trackingOptions: StoredTrackingOptions | undefined;
  metadata: Record<string, unknown>;
  /** The tracking id and rewritten links of a tracked send, made when it was composed. */
  tracking?: { id: string; links: string[] } | undefined;
  /** A draft sent: the message row of the version held (a later version needs a new approval). */
  draftMessageId?: string | undefined;
}

/** Why a send waits, and what the reviewer is shown of the mail it answers. */
export interface StoredApprovalCheck {
  /** The check that asked: `gated_all`, `gated_send`, `untrusted_read`, `thread_budget`, `loop`, … */
  check: string;
  reason: string;
  /** The `trust` reasons of the message answered, or of the flagged message that was read. */
  trust?: string[] | undefined;
}

/** A send waiting for (or decided by) a person. */
export const approvals = sqliteTable(
  'approvals',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id').notNull(),
    /** `pending`, `approved`, `rejected`, `expired`; `sent` once an approved send left, `failed` when it could not. */
    status: text('status').notNull(),
    /** `send` (a message), `draft` (a draft sent: its id in `draftId`). */
    kind: text('kind').notNull(),
    draftId: text('draft_id'),
    /** Unix ms of the draft version the approval holds: a newer version needs a new approval. */
    draftVersion: integer('draft_version'),
    checks: text('checks', { mode: 'json' }).$type<StoredApprovalCheck[]>().notNull(),
    composition: text('composition', { mode: 'json' }).$type<StoredHeldComposition>().notNull(),
    /** The composed MIME (a blob), DKIM signature left out: it is signed again when it leaves. */
    rawHash: text('raw_hash').notNull(),
    /** SHA-256 (hex) of that MIME without its `Date` header: what the reviewer approves. */
    sha256: text('sha256').notNull(),
    headerMessageId: text('header_message_id').notNull(),
    subject: text('subject').notNull(),
    recipients: text('recipients', { mode: 'json' }).$type<string[]>().notNull(),
    /** The message answered, in the grant's mailbox. */
    replyToMessageId: text('reply_to_message_id'),
    threadId: text('thread_id'),
    /** The key that asked (it may not decide). */
    requestedByKeyId: text('requested_by_key_id'),
    provenance: text('provenance', { mode: 'json' }).$type<StoredProvenance>(),
    decidedByKeyId: text('decided_by_key_id'),
    decidedByName: text('decided_by_name'),
    decisionReason: text('decision_reason'),
    /** The sent copy, once the approved send left. */
    sentMessageId: text('sent_message_id'),
    error: text('error'),
    /** Unix seconds. */
    expiresAt: integer('expires_at').notNull(),
    decidedAt: integer('decided_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    index('approvals_application_idx').on(table.applicationId, table.createdAt),
    index('approvals_grant_idx').on(table.grantId, table.status),
    index('approvals_pending_idx').on(table.status, table.expiresAt),
  ],
);

/** A send made under `monitored`, listed for review after it left. */
export const sendReviews = sqliteTable(
  'send_reviews',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id').notNull(),
    messageId: text('message_id').notNull(),
    subject: text('subject').notNull(),
    recipients: text('recipients', { mode: 'json' }).$type<string[]>().notNull(),
    provenance: text('provenance', { mode: 'json' }).$type<StoredProvenance>(),
    /** `unreviewed`, then `ok` or `flagged` as the reviewer marks it. */
    status: text('status').notNull(),
    note: text('note'),
    reviewedByKeyId: text('reviewed_by_key_id'),
    reviewedAt: integer('reviewed_at'),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [index('send_reviews_application_idx').on(table.applicationId, table.status, table.createdAt)],
);

/**
 * A flagged message read by a key or an MCP session (the untrusted-read gate): for the policy's window, that reader's
 * sends outside the message's thread need approval. One row per reader and message; read again, its time moves.
 */
export const untrustedReads = sqliteTable(
  'untrusted_reads',
  {
    /** `key:<id>` or `session:<id>` (or `app:<application id>` for a call with neither). */
    reader: text('reader').notNull(),
    messageId: text('message_id').notNull(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id').notNull(),
    threadId: text('thread_id'),
    reasons: text('reasons', { mode: 'json' }).$type<string[]>().notNull(),
    /** Unix ms of the (last) read. */
    at: integer('at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.reader, table.messageId] }),
    index('untrusted_reads_reader_idx').on(table.reader, table.at),
  ],
);

/**
 * A thread claimed by one agent for a time (issue 40, item 4): a lease. While it runs, sends and drafts into the
 * thread need its token; a reply by the holder or a release ends it; past `expires_at` it is free (and the next claim
 * replaces the row). The token is kept as its SHA-256 only.
 */
export const threadClaims = sqliteTable(
  'thread_claims',
  {
    grantId: text('grant_id').notNull(),
    threadId: text('thread_id').notNull(),
    applicationId: text('application_id').notNull(),
    /** SHA-256 (hex) of the claim token. */
    tokenHash: text('token_hash').notNull(),
    /** The key that claimed (null: the application itself), its name, and the MCP session when there was one. */
    keyId: text('key_id'),
    keyName: text('key_name').notNull(),
    session: text('session'),
    /** Unix ms. */
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.grantId, table.threadId] })],
);
