/**
 * Calendars and contacts of connected accounts over CalDAV (RFC 4791) and CardDAV (RFC 6352), issue 38: where the
 * account's servers are (the passwords sealed by the secret box), which server collection each of its calendars and
 * address books is (with the sync-token or ctag of its last sync), and which server object (URL, ETag) each stored
 * event series or contact is.
 */
import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { grants } from './grants.js';

/** The CalDAV and CardDAV servers of a connected account, one row per grant that has either. */
export const davAccounts = sqliteTable('dav_accounts', {
  grantId: text('grant_id')
    .primaryKey()
    .references(() => grants.id, { onDelete: 'cascade' }),
  /** The CalDAV calendar home found by discovery (or null: the account has no CalDAV). */
  caldavHome: text('caldav_home'),
  /** The URL given (`settings.caldav_url`), shown on the grant. */
  caldavUrl: text('caldav_url'),
  caldavUsername: text('caldav_username'),
  /** Sealed by the secret box; never returned. */
  caldavPasswordSealed: text('caldav_password_sealed'),
  /** The CardDAV address book home found by discovery (or null: the account has no CardDAV). */
  carddavHome: text('carddav_home'),
  carddavUrl: text('carddav_url'),
  carddavUsername: text('carddav_username'),
  carddavPasswordSealed: text('carddav_password_sealed'),
  /** Failures in a row of the sync, its last error, and until when (Unix ms) it waits before the next try. */
  failures: integer('failures').notNull().default(0),
  lastError: text('last_error'),
  retryAt: integer('retry_at'),
  /** Unix ms of the last completed pass (null: none yet). */
  lastSyncAt: integer('last_sync_at'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/** What a server collection is to us: a calendar (CalDAV) or an address book (CardDAV). */
export type DavCollectionKind = 'calendar' | 'addressbook';

/** One calendar or address book on the account's server, and the state of its sync. */
export const davCollections = sqliteTable(
  'dav_collections',
  {
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    kind: text('kind').$type<DavCollectionKind>().notNull(),
    /** The `calendars.id` it is (calendars); null for an address book. */
    calendarId: text('calendar_id'),
    /** RFC 6578 sync-token of the last sync (null: the server has none, or no sync yet). */
    syncToken: text('sync_token'),
    /** getctag of the last sync (the fallback where the server has no sync-token). */
    ctag: text('ctag'),
  },
  (table) => [
    primaryKey({ columns: [table.grantId, table.url] }),
    index('dav_collections_calendar_idx').on(table.calendarId),
  ],
);

/** One object on the server (an iCalendar resource: an event with its changed instances; or a vCard). */
export const davObjects = sqliteTable(
  'dav_objects',
  {
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    collectionUrl: text('collection_url').notNull(),
    /** The ETag the server gave the version we hold. */
    etag: text('etag'),
    /** The iCalendar UID (events) or the contact id (contacts) the object is stored as. */
    localId: text('local_id').notNull(),
    /** A vCard's UID (contacts: kept when the card is written back); null for events (their UID is `local_id`). */
    uid: text('uid'),
  },
  (table) => [
    primaryKey({ columns: [table.grantId, table.url] }),
    index('dav_objects_local_idx').on(table.grantId, table.localId),
  ],
);
