/**
 * Deliverability and engagement: what became of sent mail after it left.
 * - Tracking: a sent message with `tracking_options` ({@link trackedMessages}), its rewritten links
 *   ({@link trackingLinks}) and every hit or reply recorded against it ({@link engagementEvents}).
 * - Reports: bounces (DSNs, permanent SMTP failures) and complaints (ARF) attributed to a message and recipient
 *   ({@link deliveryReports}), and the per-application suppression list they feed ({@link suppressions}).
 * - Sending health: per grant and UTC day, recipients sent to and bounces and complaints against them
 *   ({@link grantSendingDays}), the rates a pause is decided on; each pause and resume ({@link sendingStateChanges}).
 * - Per sending domain and UTC day: recipients sent (the warm-up ramp), and the domain's bounces and complaints
 *   ({@link domainDailySends}); each pause and resume of a domain's sending ({@link domainSendingStateChanges}).
 * - Service keys: random keys the service makes once and shares between its processes through the database
 *   ({@link serviceKeys}: the tracking and VERP signing key).
 */
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { grants } from './grants.js';
import { applications, domains } from './tenancy.js';

/** A sent message with tracking on: what is tracked, the label echoed in notifications, and the counters. */
export const trackedMessages = sqliteTable(
  'tracked_messages',
  {
    /** The tracking id (in the pixel and link tokens); made before the message is composed. */
    id: text('id').primaryKey(),
    /** The sender's copy in `messages` (the id the API and notifications show). */
    messageId: text('message_id').notNull(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    /** The queue's record of the send (`outbound_messages.id`). */
    outboundId: text('outbound_id').notNull(),
    /** Normalised Message-ID (lower case, no angle brackets): replies name it in In-Reply-To / References. */
    headerMessageId: text('header_message_id').notNull(),
    threadId: text('thread_id'),
    opens: integer('opens', { mode: 'boolean' }).notNull().default(false),
    links: integer('links', { mode: 'boolean' }).notNull().default(false),
    threadReplies: integer('thread_replies', { mode: 'boolean' }).notNull().default(false),
    label: text('label'),
    /** Unix milliseconds at which the message was accepted for delivery. */
    sentAt: integer('sent_at').notNull(),
    /** Opens counted as people (not flagged, not within a minute of the last counted one). */
    opensCount: integer('opens_count').notNull().default(0),
    /** Unix milliseconds of the last counted open. */
    lastOpenAt: integer('last_open_at'),
    clicksCount: integer('clicks_count').notNull().default(0),
    repliesCount: integer('replies_count').notNull().default(0),
  },
  (table) => [
    index('tracked_messages_header_idx').on(table.grantId, table.headerMessageId),
    index('tracked_messages_message_idx').on(table.messageId),
    index('tracked_messages_application_idx').on(table.applicationId),
  ],
);

/** Each http(s) link of a tracked message's HTML body, in body order, as it was before it was rewritten. */
export const trackingLinks = sqliteTable(
  'tracking_links',
  {
    messageId: text('message_id')
      .notNull()
      .references(() => trackedMessages.id, { onDelete: 'cascade' }),
    /** 0-based position in the body (the wire's `link_index`, as a string there). */
    linkIndex: integer('link_index').notNull(),
    /** The original URL: the only place a click is ever redirected to. */
    url: text('url').notNull(),
    /** Clicks counted as people. */
    clicksCount: integer('clicks_count').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.messageId, table.linkIndex] })],
);

/** Kinds of engagement. */
export const ENGAGEMENT_KINDS = ['open', 'click', 'reply'] as const;
export type EngagementKind = (typeof ENGAGEMENT_KINDS)[number];

/**
 * Why a hit was not counted as a person: `head` (a HEAD request), `scanner` (a link scanner's or a mail-privacy
 * proxy's user agent), `early` (within seconds of delivery: a gateway fetching ahead of the reader), `repeat` (an
 * open within a minute of the last counted one).
 */
export const ENGAGEMENT_FLAGS = ['head', 'scanner', 'early', 'repeat'] as const;
export type EngagementFlag = (typeof ENGAGEMENT_FLAGS)[number];

/** Every open, click and reply recorded against a tracked message, counted or flagged. */
export const engagementEvents = sqliteTable(
  'engagement_events',
  {
    id: text('id').primaryKey(),
    messageId: text('message_id')
      .notNull()
      .references(() => trackedMessages.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: ENGAGEMENT_KINDS }).notNull(),
    /** Clicks: the link's position. */
    linkIndex: integer('link_index'),
    ip: text('ip'),
    userAgent: text('user_agent'),
    /** Replies: the reply's id in the grant's mailbox (unique per tracked message: a reply counts once). */
    replyMessageId: text('reply_message_id'),
    counted: integer('counted', { mode: 'boolean' }).notNull(),
    flag: text('flag', { enum: ENGAGEMENT_FLAGS }),
    /**
     * Hits this row stands for: identical flagged hits of one write batch (same message, kind, link, client and flag:
     * a flood, a scanner fetching again) are one row, `at` the last of them. Counted hits are a row each.
     */
    hits: integer('hits').notNull().default(1),
    /** Unix milliseconds. */
    at: integer('at').notNull(),
  },
  (table) => [index('engagement_events_message_idx').on(table.messageId, table.at)],
);

/** Kinds of delivery report. */
export const REPORT_KINDS = ['bounce', 'complaint'] as const;
/** Hard: the address will not work (unknown user, no such domain); soft: it may later (mailbox full, deferred too long, a policy block). */
export const BOUNCE_TYPES = ['hard', 'soft'] as const;
export type BounceType = (typeof BOUNCE_TYPES)[number];
/** Where a report came from: a DSN to the VERP address, the SMTP reply during delivery, the queue giving up, or an ARF complaint. */
export const REPORT_SOURCES = ['dsn', 'smtp', 'timeout', 'arf'] as const;

/** A bounce or complaint, attributed to one sent message and one of its recipients. */
export const deliveryReports = sqliteTable(
  'delivery_reports',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id'),
    outboundId: text('outbound_id').notNull(),
    /** The sender's copy, when one was stored. */
    messageId: text('message_id'),
    /** Lower-cased recipient address. */
    recipient: text('recipient').notNull(),
    kind: text('kind', { enum: REPORT_KINDS }).notNull(),
    bounceType: text('bounce_type', { enum: BOUNCE_TYPES }),
    /** Enhanced status code (`5.1.1`), when known. */
    statusCode: text('status_code'),
    /** SMTP reply code (550), when known. */
    smtpCode: integer('smtp_code'),
    /** Diagnostic text or complaint feedback type. */
    reason: text('reason').notNull(),
    source: text('source', { enum: REPORT_SOURCES }).notNull(),
    /** The report as received (a blob), for DSNs and ARF reports. */
    rawHash: text('raw_hash'),
    /** Unix milliseconds. */
    at: integer('at').notNull(),
  },
  (table) => [
    index('delivery_reports_message_idx').on(table.outboundId, table.recipient),
    index('delivery_reports_grant_idx').on(table.grantId, table.at),
    // A stored report keeps its blob (storage/repositories/blob-repository.ts releaseBlobs), and a repeat is found by it.
    index('delivery_reports_raw_idx').on(table.rawHash),
  ],
);

/** Why an address is suppressed. */
export const SUPPRESSION_REASONS = ['hard_bounce', 'complaint', 'manual'] as const;

/** Addresses an application does not send to until they are removed through the API. */
export const suppressions = sqliteTable(
  'suppressions',
  {
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** Lower-cased address. */
    email: text('email').notNull(),
    reason: text('reason', { enum: SUPPRESSION_REASONS }).notNull(),
    /** The report that put it here, if any. */
    reportId: text('report_id'),
    /** Unix seconds. */
    createdAt: integer('created_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.applicationId, table.email] }),
    index('suppressions_created_idx').on(table.applicationId, table.createdAt),
  ],
);

/** Per grant and UTC day (unix days): recipients sent to, and the bounces and complaints reported against them. */
export const grantSendingDays = sqliteTable(
  'grant_sending_days',
  {
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    day: integer('day').notNull(),
    sent: integer('sent').notNull().default(0),
    hardBounces: integer('hard_bounces').notNull().default(0),
    softBounces: integer('soft_bounces').notNull().default(0),
    complaints: integer('complaints').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.grantId, table.day] })],
);

/** Each pause (the service, on a threshold) and resume (a caller, through the API) of a grant's sending. */
export const sendingStateChanges = sqliteTable(
  'sending_state_changes',
  {
    id: text('id').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    state: text('state', { enum: ['paused', 'active'] }).notNull(),
    reason: text('reason').notNull(),
    /** `service` for a pause on a threshold; for a resume, the request id of the API call. */
    actor: text('actor').notNull(),
    /** Unix seconds. */
    at: integer('at').notNull(),
  },
  (table) => [index('sending_state_changes_grant_idx').on(table.grantId, table.at)],
);

/**
 * Per sending domain and UTC day: recipients sent to (`sent`, what the warm-up ramp of a domain is checked against,
 * never reset), and the domain's reputation counters (`rated_sent` and the bounces and complaints reported against
 * sends from it, over all its grants and transactional sends), which a resume of the domain's sending sets to zero.
 */
export const domainDailySends = sqliteTable(
  'domain_daily_sends',
  {
    domainId: text('domain_id')
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    day: integer('day').notNull(),
    sent: integer('sent').notNull().default(0),
    /** Recipients sent to, as the bounce and complaint rates count them (reset by a resume). */
    ratedSent: integer('rated_sent').notNull().default(0),
    hardBounces: integer('hard_bounces').notNull().default(0),
    softBounces: integer('soft_bounces').notNull().default(0),
    complaints: integer('complaints').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.domainId, table.day] })],
);

/** Each pause (the service, on a threshold of the domain's totals) and resume (a caller) of a domain's sending. */
export const domainSendingStateChanges = sqliteTable(
  'domain_sending_state_changes',
  {
    id: text('id').primaryKey(),
    domainId: text('domain_id')
      .notNull()
      .references(() => domains.id, { onDelete: 'cascade' }),
    state: text('state', { enum: ['paused', 'active'] }).notNull(),
    reason: text('reason').notNull(),
    /** `service` for a pause on a threshold; for a resume, the request id of the API call. */
    actor: text('actor').notNull(),
    /** Unix seconds. */
    at: integer('at').notNull(),
  },
  (table) => [index('domain_sending_state_changes_domain_idx').on(table.domainId, table.at)],
);

/** Random keys made once per installation and shared by its processes (base64). */
export const serviceKeys = sqliteTable('service_keys', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: integer('created_at').notNull(),
});
