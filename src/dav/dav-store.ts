/**
 * @module dav/dav-store
 * Reads and writes of the DAV tables (storage/schema/dav.ts): a grant's account with its logins opened (the IMAP
 * login where the account gives none of its own), its collections and the objects held, by URL or by local id.
 */
import { and, eq, isNotNull, lte, or, isNull, sql } from 'drizzle-orm';
import { tables, type Executor, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { DavKind, DavLogin } from './dav-client.js';

type Db = CoreDeps['db'];
export type DavAccountRow = typeof tables.davAccounts.$inferSelect;
export type DavCollectionRow = typeof tables.davCollections.$inferSelect;
export type DavObjectRow = typeof tables.davObjects.$inferSelect;

/** A grant's DAV account, or undefined. */
export async function accountOf(
  executor: Pick<Executor, 'select'>,
  grantId: string,
): Promise<DavAccountRow | undefined> {
  const [row] = await executor
    .select()
    .from(tables.davAccounts)
    .where(eq(tables.davAccounts.grantId, grantId))
    .limit(1);
  return row;
}

/**
 * The login of one kind of server of an account (home and credentials, the IMAP ones by default; an OAuth grant's
 * account logs in with the grant's access token), or undefined.
 */
export async function loginOf(
  db: Db,
  secrets: CoreDeps['secrets'],
  account: DavAccountRow,
  kind: DavKind,
): Promise<(DavLogin & { home: string }) | undefined> {
  const home = kind === 'caldav' ? account.caldavHome : account.carddavHome;
  const url = kind === 'caldav' ? account.caldavUrl : account.carddavUrl;
  if (!home || !url) return undefined;
  const username = kind === 'caldav' ? account.caldavUsername : account.carddavUsername;
  const sealed = kind === 'caldav' ? account.caldavPasswordSealed : account.carddavPasswordSealed;
  if (username !== null && sealed !== null) return { home, url, username, password: secrets.open(sealed) };
  const [imap] = await db.orm
    .select({
      username: tables.imapAccounts.imapUsername,
      sealed: tables.imapAccounts.imapPasswordSealed,
      authMethod: tables.imapAccounts.authMethod,
    })
    .from(tables.imapAccounts)
    .where(eq(tables.imapAccounts.grantId, account.grantId))
    .limit(1);
  if (!imap) return undefined;
  if (imap.authMethod === 'oauth2' && sealed === null)
    return { home, url, username: username ?? imap.username, password: '', oauthGrantId: account.grantId };
  return {
    home,
    url,
    username: username ?? imap.username,
    password: sealed ? secrets.open(sealed) : secrets.open(imap.sealed),
  };
}

/** Accounts whose sync is due at `atMs` (not waiting out a back-off). */
export async function dueAccounts(db: Db, atMs: number): Promise<string[]> {
  const rows = await db.orm
    .select({ grantId: tables.davAccounts.grantId })
    .from(tables.davAccounts)
    .where(
      and(
        or(isNotNull(tables.davAccounts.caldavHome), isNotNull(tables.davAccounts.carddavHome)),
        or(isNull(tables.davAccounts.retryAt), lte(tables.davAccounts.retryAt, atMs)),
      ),
    );
  return rows.map((row) => row.grantId);
}

/** The grant's collections of a kind. */
export async function collectionsOf(
  executor: Pick<Executor, 'select'>,
  grantId: string,
  kind: 'calendar' | 'addressbook',
): Promise<DavCollectionRow[]> {
  return executor
    .select()
    .from(tables.davCollections)
    .where(and(eq(tables.davCollections.grantId, grantId), eq(tables.davCollections.kind, kind)));
}

/** The collection a calendar is, or undefined. */
export async function collectionOfCalendar(
  db: Db,
  grantId: string,
  calendarId: string,
): Promise<DavCollectionRow | undefined> {
  const [row] = await db.orm
    .select()
    .from(tables.davCollections)
    .where(and(eq(tables.davCollections.grantId, grantId), eq(tables.davCollections.calendarId, calendarId)))
    .limit(1);
  return row;
}

/** The objects held of a collection. */
export async function objectsOf(db: Db, grantId: string, collectionUrl: string): Promise<DavObjectRow[]> {
  return db.orm
    .select()
    .from(tables.davObjects)
    .where(and(eq(tables.davObjects.grantId, grantId), eq(tables.davObjects.collectionUrl, collectionUrl)));
}

/** The object stored as `localId` (an event's UID, a contact's id), or undefined. */
export async function objectOfLocal(db: Db, grantId: string, localId: string): Promise<DavObjectRow | undefined> {
  const [row] = await db.orm
    .select()
    .from(tables.davObjects)
    .where(and(eq(tables.davObjects.grantId, grantId), eq(tables.davObjects.localId, localId)))
    .limit(1);
  return row;
}

/** Rows of objects recorded per statement (6 columns each). */
const HOLD_ROWS = 500;

/** Records (or replaces) the objects at their `url`s as held in the versions `etag`, a few hundred per statement. */
export async function holdObjects(tx: Tx, rows: DavObjectRow[]): Promise<void> {
  for (let from = 0; from < rows.length; from += HOLD_ROWS)
    await tx
      .insert(tables.davObjects)
      .values(rows.slice(from, from + HOLD_ROWS))
      .onConflictDoUpdate({
        target: [tables.davObjects.grantId, tables.davObjects.url],
        set: {
          etag: sql`excluded.etag`,
          localId: sql`excluded.local_id`,
          collectionUrl: sql`excluded.collection_url`,
          uid: sql`excluded.uid`,
        },
      });
}

/** Forgets the object at `url`. */
export async function dropObject(tx: Tx, grantId: string, url: string): Promise<void> {
  await tx.delete(tables.davObjects).where(and(eq(tables.davObjects.grantId, grantId), eq(tables.davObjects.url, url)));
}

/** Records a collection (or its new sync state). */
export async function saveCollection(tx: Tx, row: DavCollectionRow): Promise<void> {
  await tx
    .insert(tables.davCollections)
    .values(row)
    .onConflictDoUpdate({
      target: [tables.davCollections.grantId, tables.davCollections.url],
      set: { syncToken: row.syncToken, ctag: row.ctag, calendarId: row.calendarId },
    });
}

/** Forgets a collection gone from the server, with its objects. */
export async function dropCollection(tx: Tx, grantId: string, url: string): Promise<void> {
  await tx
    .delete(tables.davObjects)
    .where(and(eq(tables.davObjects.grantId, grantId), eq(tables.davObjects.collectionUrl, url)));
  await tx
    .delete(tables.davCollections)
    .where(and(eq(tables.davCollections.grantId, grantId), eq(tables.davCollections.url, url)));
}

/** Records the end of a pass: success (`error` undefined) clears failures; a failure backs off exponentially. */
export async function recordPass(db: Db, grantId: string, atMs: number, error?: string): Promise<void> {
  await db.write(async (tx) => {
    const account = await accountOf(tx, grantId);
    if (!account) return;
    const failures = error === undefined ? 0 : account.failures + 1;
    await tx
      .update(tables.davAccounts)
      .set(
        error === undefined
          ? { failures: 0, lastError: null, retryAt: null, lastSyncAt: atMs, updatedAt: atMs }
          : {
              failures,
              lastError: error.slice(0, 500),
              retryAt: atMs + Math.min(30 * 60_000, 5_000 * 2 ** Math.min(failures - 1, 16)),
              updatedAt: atMs,
            },
      )
      .where(eq(tables.davAccounts.grantId, grantId));
  });
}

/** A collection listed on the server, as {@link mirrorCalendars} records it. */
export interface ListedCalendar {
  url: string;
  displayName: string;
  description: string;
  color: string | null;
}

/**
 * Makes the grant's calendars the server's: a calendar row for each collection not seen before (the first one the
 * grant's primary when it has none), names and colours as the server has them, and the rows of collections gone
 * from the server deleted with their events. Returns the collection rows, by URL.
 */
export async function mirrorCalendars(
  tx: Tx,
  grantId: string,
  listed: ListedCalendar[],
  { atSeconds, newId }: { atSeconds: number; newId: () => string },
): Promise<Map<string, DavCollectionRow>> {
  const known = new Map((await collectionsOf(tx, grantId, 'calendar')).map((row) => [row.url, row]));
  const rows = new Map<string, DavCollectionRow>();
  const [primary] = await tx
    .select({ id: tables.calendars.id })
    .from(tables.calendars)
    .where(and(eq(tables.calendars.grantId, grantId), eq(tables.calendars.isPrimary, true)))
    .limit(1);
  let hasPrimary = primary !== undefined;
  for (const collection of listed) {
    const name = (
      collection.displayName ||
      decodeURIComponent(new URL(collection.url).pathname.split('/').filter(Boolean).pop() ?? 'Calendar')
    ).slice(0, 256);
    const fields = {
      name,
      description: collection.description ? collection.description.slice(0, 1000) : null,
      hexColor: collection.color ? collection.color.slice(0, 16) : null,
      updatedAt: atSeconds,
    };
    const existing = known.get(collection.url);
    if (existing?.calendarId) {
      await tx.update(tables.calendars).set(fields).where(eq(tables.calendars.id, existing.calendarId));
      rows.set(collection.url, existing);
      continue;
    }
    const calendarId = newId();
    await tx.insert(tables.calendars).values({
      id: calendarId,
      grantId,
      ...fields,
      isPrimary: !hasPrimary,
      timezone: 'UTC',
      createdAt: atSeconds,
    });
    hasPrimary = true;
    const row: DavCollectionRow = {
      grantId,
      url: collection.url,
      kind: 'calendar',
      calendarId,
      syncToken: null,
      ctag: null,
    };
    await saveCollection(tx, row);
    rows.set(collection.url, row);
  }
  for (const [url, row] of known) {
    if (rows.has(url)) continue;
    await dropCollection(tx, grantId, url);
    if (row.calendarId) await tx.delete(tables.calendars).where(eq(tables.calendars.id, row.calendarId));
  }
  return rows;
}
