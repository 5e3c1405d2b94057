/**
 * Connected accounts (issue 19): an existing IMAP/SMTP mailbox as a grant (`provider: "imap"`). The grant row is
 * the same as a hosted one's; these tables hold what only a connected mailbox has: how to reach its servers (the
 * passwords sealed by the secret box), the sync state of each of its IMAP folders, and which IMAP message (folder,
 * UID) each stored message is.
 */
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { grants } from './grants.js';
import { messages } from './mail.js';

/** Where the account's sync stands (shown on the grant as `settings.sync`). */
export type ImapSyncState = 'initial' | 'running' | 'idle' | 'failing' | 'invalid';

/** The servers and credentials of a connected IMAP/SMTP account, one row per grant. */
export const imapAccounts = sqliteTable('imap_accounts', {
  grantId: text('grant_id')
    .primaryKey()
    .references(() => grants.id, { onDelete: 'cascade' }),
  imapHost: text('imap_host').notNull(),
  imapPort: integer('imap_port').notNull(),
  imapUsername: text('imap_username').notNull(),
  /** Sealed by the secret box (src/secrets/secret-box.ts); never returned. */
  imapPasswordSealed: text('imap_password_sealed').notNull(),
  /** Implicit TLS on connect (true: port 993 style); otherwise STARTTLS when the server offers it. */
  imapSecure: integer('imap_secure', { mode: 'boolean' }).notNull(),
  smtpHost: text('smtp_host').notNull(),
  smtpPort: integer('smtp_port').notNull(),
  /** Null: the IMAP username. */
  smtpUsername: text('smtp_username'),
  /** Sealed; null: the IMAP password. */
  smtpPasswordSealed: text('smtp_password_sealed'),
  smtpSecure: integer('smtp_secure', { mode: 'boolean' }).notNull(),
  /** Accept TLS certificates that fail verification (self-signed servers); off unless the creator asked. */
  allowInsecureTls: integer('allow_insecure_tls', { mode: 'boolean' }).notNull().default(false),
  /**
   * How the account logs in: `password` (the sealed passwords above), or `oauth2` (XOAUTH2 with the grant's provider
   * access token, `oauth_grant_tokens`; the password columns then hold a sealed empty string).
   */
  authMethod: text('auth_method', { enum: ['password', 'oauth2'] })
    .notNull()
    .default('password'),
  /** Days of mail the initial sync covers, newest first. */
  syncDays: integer('sync_days').notNull(),
  /** Whether the SMTP server files the sent copy itself (then no APPEND to Sent); null: not known yet. */
  serverFilesSent: integer('server_files_sent', { mode: 'boolean' }),
  syncState: text('sync_state').$type<ImapSyncState>().notNull().default('initial'),
  /** Initial sync progress: messages to fetch and fetched so far, over all folders. */
  syncTotal: integer('sync_total').notNull().default(0),
  syncDone: integer('sync_done').notNull().default(0),
  /** Failures in a row (connect, login, sync); drives the back-off and the `invalid` status. */
  failures: integer('failures').notNull().default(0),
  /** Unix ms before which no new attempt is made (back-off). */
  retryAt: integer('retry_at'),
  lastError: text('last_error'),
  /** Unix seconds the last sync pass completed. */
  lastSyncAt: integer('last_sync_at'),
  /** The sync runner (one per worker process) that holds the account, and until when (Unix ms) unless renewed. */
  leaseOwner: text('lease_owner'),
  leaseUntil: integer('lease_until'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/** The sync state of one IMAP folder of a connected account. */
export const imapFolders = sqliteTable(
  'imap_folders',
  {
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    /** The IMAP path, decoded from modified UTF-7 (imapflow does it), as the server lists it. */
    path: text('path').notNull(),
    /** The id of the folder row (`folders.id`): a system role (`inbox`, `sent`, …) or an id made for the path. */
    folderId: text('folder_id').notNull(),
    delimiter: text('delimiter'),
    /** The special-use attribute (`\\Sent`, …), from the server or guessed from the name; null for none. */
    specialUse: text('special_use'),
    uidValidity: text('uid_validity'),
    /** UIDNEXT when the folder was last synced (new mail is UID ≥ this). */
    uidNext: integer('uid_next'),
    /** HIGHESTMODSEQ when last synced (CONDSTORE), as a decimal string (64-bit). */
    highestModseq: text('highest_modseq'),
    /** Initial sync: the lowest UID fetched so far (it goes newest first); the resume point after a restart. */
    initialLowestUid: integer('initial_lowest_uid'),
    /** Initial sync: the UID below which it stops (older than the sync window), or 1. */
    initialFloorUid: integer('initial_floor_uid'),
    initialDone: integer('initial_done', { mode: 'boolean' }).notNull().default(false),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.grantId, table.path] })],
);

/** Which IMAP message each synced message is: a folder path and UID (valid under the folder's UIDVALIDITY). */
export const imapMessages = sqliteTable(
  'imap_messages',
  {
    grantId: text('grant_id').notNull(),
    path: text('path').notNull(),
    uid: integer('uid').notNull(),
    messageId: text('message_id')
      .notNull()
      .references(() => messages.id, { onDelete: 'cascade' }),
    /** The flags last seen on the server (JSON), so a resync tells changes apart. */
    flags: text('flags', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    modseq: text('modseq'),
  },
  (table) => [
    primaryKey({ columns: [table.grantId, table.path, table.uid] }),
    index('imap_messages_message_idx').on(table.messageId),
  ],
);
