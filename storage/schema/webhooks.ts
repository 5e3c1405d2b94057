/**
 * Webhook subscriptions (Nylas v3 "webhook destinations"): application-level, one endpoint each, with the
 * secret that signs every delivery and the failure counters that drive `failing` → `failed`.
 */
import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { applications } from './tenancy.js';

/** The states of a subscription, as on the wire. */
export const WEBHOOK_STATUSES = ['active', 'pause', 'failing', 'failed'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export const webhooks = sqliteTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    description: text('description'),
    triggerTypes: text('trigger_types', { mode: 'json' }).$type<string[]>().notNull(),
    webhookUrl: text('webhook_url').notNull(),
    status: text('status', { enum: WEBHOOK_STATUSES }).notNull(),
    notificationEmailAddresses: text('notification_email_addresses', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    /** The signing secret (`whsec_` + base64 of 32 random bytes). Kept in clear: every delivery is signed with it. */
    secret: text('secret').notNull(),
    /** Gzip the body (and sign the compressed bytes), as Nylas' `compressed_delivery`. */
    compressedDelivery: integer('compressed_delivery', { mode: 'boolean' }).notNull().default(false),
    /** `outbox_events.seq` when the subscription was created: it receives only events recorded after that. */
    startSeq: integer('start_seq').notNull().default(0),
    /** Failed delivery attempts in a row, across notifications; a success resets it. */
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    /** Unix seconds of the first failure of the current run of failures (null after a success). */
    failingSince: integer('failing_since'),
    /** Why the last attempt failed (status code or network error), for operators. */
    lastError: text('last_error'),
    statusUpdatedAt: integer('status_updated_at').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [index('webhooks_application_idx').on(table.applicationId, table.createdAt)],
);
