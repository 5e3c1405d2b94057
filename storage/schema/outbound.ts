/**
 * Outbound mail: what was accepted for delivery and the state of each recipient (the queue's ledger and the
 * bounce record), drafts' compose-only fields, scheduled sends, and the Idempotency-Key replay store.
 * The sent copy and drafts themselves are rows of `messages` (folders `sent` / `drafts`).
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { grants } from './grants.js';
import { messages } from './mail.js';

/** `{ name, value }` of a custom header. */
export interface StoredHeader {
  name: string;
  value: string;
}

/** Tracking options as given at send time (tracking itself is a later feature; they are kept and echoed). */
export interface StoredTrackingOptions {
  opens?: boolean | undefined;
  links?: boolean | undefined;
  thread_replies?: boolean | undefined;
  label?: string | undefined;
}

/**
 * Who made a send (issue 36): the key, the face, the MCP client and session, the tool and the request, as the wire
 * field `provenance` shows them; `approval_id` is the person's approval once sends can wait for one (null today).
 */
export interface StoredProvenance {
  api_key_id: string | null;
  api_key_name: string | null;
  principal: 'api_key' | 'service_account' | 'local';
  face: 'http' | 'mcp' | 'ai-sdk' | 'smtp' | 'dashboard' | 'review-link' | 'worker' | null;
  client: { name: string | null; version: string | null; session: string | null } | null;
  tool: string | null;
  request_id: string | null;
  approval_id: string | null;
}

/**
 * One composed message accepted for delivery: a grant's send (then `messageId` is its sent copy), an iMIP
 * invitation or reply, or a system email of the service. The raw MIME is a blob; while recipients are still
 * pending, `pendingRawHash` holds it so deleting the sent copy cannot take the bytes from under the queue.
 */
export const outboundMessages = sqliteTable(
  'outbound_messages',
  {
    id: text('id').primaryKey(),
    /** Null for system emails (webhook alerts), which belong to no application. */
    applicationId: text('application_id'),
    grantId: text('grant_id'),
    /** The sent copy in `messages`, when one was stored. */
    messageId: text('message_id'),
    /** `transactional`: sent from a domain without a mailbox (`/v3/domains/{domain}/messages/send`); no sender's copy. */
    kind: text('kind', { enum: ['message', 'invitation', 'system', 'transactional'] }).notNull(),
    /** Normalised Message-ID (lower case, no angle brackets): local delivery checks it to never deliver twice. */
    headerMessageId: text('header_message_id').notNull(),
    subject: text('subject').notNull().default(''),
    /** SMTP MAIL FROM. */
    envelopeFrom: text('envelope_from').notNull(),
    rawHash: text('raw_hash').notNull(),
    /** Same as `rawHash` while any recipient is pending; null once every recipient is final. */
    pendingRawHash: text('pending_raw_hash'),
    rawSize: integer('raw_size').notNull(),
    /** Tracking options given at send time (kept for `fields=include_tracking_options`; tracking is a later feature). */
    trackingOptions: text('tracking_options', { mode: 'json' }).$type<StoredTrackingOptions>(),
    /** Who made the send (a grant's send: `kind` message); null for mail the service makes itself. */
    provenance: text('provenance', { mode: 'json' }).$type<StoredProvenance>(),
    /** Unix milliseconds of acceptance: the retry schedule and the give-up time count from here. */
    acceptedAt: integer('accepted_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    index('outbound_messages_message_idx').on(table.messageId),
    index('outbound_messages_pending_idx').on(table.pendingRawHash),
    // A grant's sends in a window (the send budgets and rate of src/oversight/budget-guards.ts).
    index('outbound_messages_grant_idx').on(table.grantId, table.acceptedAt),
  ],
);

/** Delivery states of one recipient: `queued` → `delivered` | `deferred` (retried) → … | `failed` (permanent). */
export const DELIVERY_STATUSES = ['queued', 'deferred', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Per-recipient delivery state: what the queue still owes, and the permanent-failure (bounce) record. */
export const outboundRecipients = sqliteTable(
  'outbound_recipients',
  {
    outboundId: text('outbound_id')
      .notNull()
      .references(() => outboundMessages.id, { onDelete: 'cascade' }),
    /** Lower-cased address. */
    email: text('email').notNull(),
    domain: text('domain').notNull(),
    /** `local`: a mailbox of this service (delivered through the inbound path); `remote`: SMTP. */
    route: text('route', { enum: ['local', 'remote', 'submission'] }).notNull(),
    status: text('status', { enum: DELIVERY_STATUSES }).notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** SMTP reply code of the last attempt (or 0 for a connection failure). */
    lastCode: integer('last_code'),
    /** The server's reply or the error of the last attempt. */
    lastResponse: text('last_response'),
    /** Unix milliseconds of the next attempt, while deferred. */
    nextAttemptAt: integer('next_attempt_at'),
    updatedAt: integer('updated_at').notNull(),
    /** Unix milliseconds at which the status became final. */
    finalAt: integer('final_at'),
  },
  (table) => [
    primaryKey({ columns: [table.outboundId, table.email] }),
    index('outbound_recipients_domain_idx').on(table.outboundId, table.domain, table.status),
  ],
);

/**
 * Every address a grant ever sent to, with the first time (`new_recipients_per_day`, src/oversight/budget-guards.ts).
 * Written with the send's recipients (INSERT OR IGNORE), so writing again to a known address writes nothing here;
 * kept when the outbound rows are purged, so an address stays known. WITHOUT ROWID (in its migration, 0032): the key
 * is the row, so a new address writes two B-trees (the row and the index by first time), a known one none.
 */
export const grantCorrespondents = sqliteTable(
  'grant_correspondents',
  {
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    /** Lower-cased address. */
    email: text('email').notNull(),
    /** Unix milliseconds of the first send to it (its outbound row's `accepted_at`). */
    firstAt: integer('first_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.grantId, table.email] }),
    index('grant_correspondents_first_idx').on(table.grantId, table.firstAt),
  ],
);

/**
 * A draft: its stable id, the `messages` row that holds its current version (folder `drafts`; an update stores a
 * new version and drops the old, so the row id changes while the draft id stays), and the fields only sending uses.
 */
export const draftDetails = sqliteTable(
  'draft_details',
  {
    /** The draft id on the wire. */
    id: text('id').primaryKey(),
    /** The current version's row in `messages`; deleting that message deletes the draft. */
    messageId: text('message_id')
      .notNull()
      .references(() => messages.id, { onDelete: 'cascade' }),
    grantId: text('grant_id').notNull(),
    /** Message-ID the draft's MIME carries, the same across updates. */
    headerMessageId: text('header_message_id').notNull(),
    replyToMessageId: text('reply_to_message_id'),
    isPlaintext: integer('is_plaintext', { mode: 'boolean' }).notNull().default(false),
    /** The body as written, for plain-text drafts (the message row holds its HTML form). */
    plainBody: text('plain_body'),
    trackingOptions: text('tracking_options', { mode: 'json' }).$type<StoredTrackingOptions>(),
    customHeaders: text('custom_headers', { mode: 'json' }).$type<StoredHeader[]>(),
    /** Unix seconds of a scheduled send of this draft (set while one is pending). */
    sendAt: integer('send_at'),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [
    uniqueIndex('draft_details_message_idx').on(table.messageId),
    index('draft_details_grant_idx').on(table.grantId),
  ],
);

/** States of a scheduled send (wire `status.code`). */
export const SCHEDULE_STATUSES = ['pending', 'sending', 'success', 'failed', 'cancelled'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

/** Scheduled sends: the draft they will send at `sendAt`, run by a job of the durable queue. */
export const scheduledMessages = sqliteTable(
  'scheduled_messages',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id').notNull(),
    /** The draft that holds the message until it is sent. */
    draftId: text('draft_id').notNull(),
    /** Keep the draft when the schedule is stopped (`use_draft`, or a draft scheduled by the caller). */
    keepDraft: integer('keep_draft', { mode: 'boolean' }).notNull().default(false),
    /** Unix seconds. */
    sendAt: integer('send_at').notNull(),
    status: text('status', { enum: SCHEDULE_STATUSES }).notNull(),
    /** The sent message, once sent. */
    sentMessageId: text('sent_message_id'),
    /** Who scheduled it: the sent message carries it on when the schedule fires. */
    provenance: text('provenance', { mode: 'json' }).$type<StoredProvenance>(),
    error: text('error'),
    /** Unix seconds at which it was sent, failed or was stopped. */
    closeTime: integer('close_time'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    index('scheduled_messages_grant_idx').on(table.grantId, table.sendAt),
    index('scheduled_messages_draft_idx').on(table.draftId),
  ],
);

/**
 * Idempotency keys of send requests, per application: the request's fingerprint and the response to replay.
 * The key row and the send it answers commit in the same transaction, so a replay never sees half a send.
 */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    applicationId: text('application_id').notNull(),
    key: text('key').notNull(),
    /** Operation name plus SHA-256 of the canonical request. */
    fingerprint: text('fingerprint').notNull(),
    /** HTTP status of the stored response. */
    status: integer('status').notNull(),
    response: text('response', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /** Unix seconds after which the key may be reused. */
    expiresAt: integer('expires_at').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.applicationId, table.key] }),
    index('idempotency_keys_expiry_idx').on(table.expiresAt),
  ],
);

export const FOLLOW_UP_STATUSES = ['pending', 'sent', 'cancelled', 'failed'] as const;
export type FollowUpStatus = (typeof FOLLOW_UP_STATUSES)[number];

/**
 * Follow-ups (issue 40, item 6): a reply sent into the thread of a sent message when nobody other than the grant has
 * answered in it by `due_at`; a reply cancels it. One per sent message. The worker (and a test-mode application's test
 * clock) runs the pending ones by `due_at`.
 */
export const followUps = sqliteTable(
  'follow_ups',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id').notNull(),
    /** The sent message it follows up (one follow-up per message). */
    messageId: text('message_id').notNull(),
    threadId: text('thread_id').notNull(),
    /**
     * The sent message's `messages.seq`: a reply is a message of the thread stored after it (a larger seq) that is not
     * from the grant, whatever the clocks said when it was stored.
     */
    afterSeq: integer('after_seq').notNull(),
    /** The follow-up's text (HTML or plain). */
    body: text('body').notNull(),
    /** Unix seconds at which it is sent unless a reply came. */
    dueAt: integer('due_at').notNull(),
    status: text('status', { enum: FOLLOW_UP_STATUSES }).notNull(),
    /** The follow-up as sent, once sent. */
    sentMessageId: text('sent_message_id'),
    /** The reply that cancelled it, when one did. */
    replyMessageId: text('reply_message_id'),
    /** Why it failed or was cancelled. */
    reason: text('reason'),
    /** The key that asked for it (its id, name and agent flag): the follow-up is sent as that key would send it. */
    requestedBy: text('requested_by', { mode: 'json' }).$type<{ id: string; name: string; agent?: boolean }>(),
    /** Unix seconds at which it was sent, cancelled or failed. */
    closedAt: integer('closed_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    // The worker's pass: pending follow-ups by due time.
    index('follow_ups_status_due_idx').on(table.status, table.dueAt),
    // A reply cancels: pending follow-ups of a thread.
    index('follow_ups_thread_idx').on(table.threadId),
    // An agent's list, newest first.
    index('follow_ups_grant_idx').on(table.grantId, table.createdAt),
    uniqueIndex('follow_ups_message_idx').on(table.messageId),
  ],
);
