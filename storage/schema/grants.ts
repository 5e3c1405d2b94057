/**
 * Grants (Agent Accounts and connected accounts) and what every grant owns from birth: folders and calendars.
 */
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { applications, workspaces } from './tenancy.js';

export const grants = sqliteTable(
  'grants',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** `nylas` for hosted Agent Accounts (the spec's `hosted`). */
    provider: text('provider').notNull(),
    /** Lower-cased address; unique across the service so inbound mail finds exactly one mailbox. */
    email: text('email').notNull(),
    name: text('name'),
    /** Opaque `state` the creator passed (Nylas returns it on the grant). */
    state: text('state'),
    grantStatus: text('grant_status', { enum: ['valid', 'invalid'] })
      .notNull()
      .default('valid'),
    workspaceId: text('workspace_id').references(() => workspaces.id),
    settings: text('settings', { mode: 'json' })
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'`),
    scope: text('scope', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    blocked: integer('blocked', { mode: 'boolean' }).notNull().default(false),
    /** scrypt hash of the write-only `settings.app_password` (IMAP/SMTP login), never returned. */
    appPasswordHash: text('app_password_hash'),
    /** Unix seconds at which sending was paused on a bounce or complaint threshold; null while sending is allowed. */
    sendingPausedAt: integer('sending_paused_at'),
    /** Why sending is paused (the rate, its threshold and window), shown on the grant. */
    sendingPausedReason: text('sending_paused_reason'),
    /** Issue 37: `autonomous`, `monitored`, `gated_send`, `gated_all`, `read_only`; null follows the policy. */
    oversightMode: text('oversight_mode'),
    /** Unix seconds the grant was suspended (the kill switch): no send, scheduled send or agent write until resumed. */
    suspendedAt: integer('suspended_at'),
    suspendedReason: text('suspended_reason'),
    /**
     * The connector credential the grant's tokens are minted with (a Google service account, a Microsoft app with
     * admin consent); null for other grants. Shown as the grant's `credential_id`.
     */
    credentialId: text('credential_id'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    uniqueIndex('grants_email_idx').on(table.email),
    index('grants_application_idx').on(table.applicationId, table.createdAt),
  ],
);

/** The six folders every hosted grant has; their names are fixed and they cannot be renamed or deleted. */
export const SYSTEM_FOLDERS = ['inbox', 'sent', 'drafts', 'trash', 'junk', 'archive'] as const;
export type SystemFolder = (typeof SYSTEM_FOLDERS)[number];

export const folders = sqliteTable(
  'folders',
  {
    /** System folders use their role as id (`inbox`, `sent`, …), so ids are unique per grant only. */
    id: text('id').notNull(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** Which system folder this is, or null for a folder the user made. */
    systemRole: text('system_role', { enum: SYSTEM_FOLDERS }),
    parentId: text('parent_id'),
    /** Listing order: the system folders first, in their canonical order, then the user's by creation. */
    sortOrder: integer('sort_order').notNull().default(1000),
    textColor: text('text_color'),
    backgroundColor: text('background_color'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.grantId, table.id] }),
    uniqueIndex('folders_grant_name_idx').on(table.grantId, table.name),
    index('folders_grant_order_idx').on(table.grantId, table.sortOrder, table.createdAt, table.id),
  ],
);

export const calendars = sqliteTable(
  'calendars',
  {
    id: text('id').primaryKey(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    description: text('description'),
    location: text('location'),
    timezone: text('timezone').notNull().default('UTC'),
    isPrimary: integer('is_primary', { mode: 'boolean' }).notNull().default(false),
    hexColor: text('hex_color'),
    metadata: text('metadata', { mode: 'json' }).$type<Record<string, string>>(),
    /** Minutes before an event's start its `event.starting` fires (null: the default, 10; issue 40, item 7). */
    notifyBeforeStartMinutes: integer('notify_before_start_minutes'),
    /** Whether the calendar's events fire `event.starting` and `event.ending` at all. */
    eventTimers: integer('event_timers', { mode: 'boolean' }).notNull().default(true),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    index('calendars_grant_idx').on(table.grantId, table.createdAt),
    /** The largest lead of any calendar (the timers' look-ahead), read from the index's end. */
    index('calendars_notify_before_idx').on(table.notifyBeforeStartMinutes),
  ],
);
