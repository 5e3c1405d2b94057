/**
 * @module dav/dav-sync
 * One sync pass of a connected account's calendars and contacts: the calendars of its CalDAV home mirrored as the
 * grant's calendars, then per collection the objects changed since its last sync (RFC 6578 sync-token where the
 * server reports it, else the ctag and a comparison of ETags: src/dav/dav-client.ts) written through the calendar's
 * and the contacts' sinks, each in one transaction with the record of the object (URL, ETag); objects gone from the
 * server are removed. Changes found give `event.*` and `contact.*` webhooks as changes made through the API do.
 */
import { eq } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { RemoteEventSink } from '../calendar/index.js';
import type { RemoteContactSink } from '../contacts/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { DavClient, DavCollectionInfo, DavKind } from './dav-client.js';
import {
  accountOf,
  collectionsOf,
  dropCollection,
  dropObject,
  holdObjects,
  loginOf,
  mirrorCalendars,
  objectsOf,
  saveCollection,
  type DavCollectionRow,
  type DavObjectRow,
} from './dav-store.js';

/** Objects written in one transaction: an initial sync of a large calendar commits every few hundred. */
const APPLY_BATCH = 250;

/** What a pass needs. */
export interface DavSyncParts {
  client: DavClient;
  events: RemoteEventSink;
  contacts: RemoteContactSink;
}

/** What one pass did: objects written and removed, and those the server held that could not be read. */
export interface DavPassResult {
  changed: number;
  removed: number;
  unreadable: number;
}

/** Runs one pass over the grant's DAV servers (nothing when it has none). Throws when a server fails. */
export async function syncDavAccount(
  deps: Pick<CoreDeps, 'db' | 'secrets' | 'clock' | 'newId' | 'logger'>,
  parts: DavSyncParts,
  grantId: string,
): Promise<DavPassResult> {
  const { db, secrets, clock, newId, logger } = deps;
  const result: DavPassResult = { changed: 0, removed: 0, unreadable: 0 };
  const account = await accountOf(db.orm, grantId);
  const found = await db.orm.query.grants.findFirst({ where: eq(tables.grants.id, grantId) });
  if (!account || !found) return result;
  const grant: GrantRow = found;

  /** The changes of one collection, written object by object; its sync state recorded last. */
  async function syncCollection(
    kind: DavKind,
    login: NonNullable<Awaited<ReturnType<typeof loginOf>>>,
    info: DavCollectionInfo,
    row: DavCollectionRow,
  ) {
    if (row.ctag !== null && row.ctag === info.ctag && (row.syncToken ?? null) === (info.syncToken ?? null)) return;
    const held = await objectsOf(db, grantId, info.url);
    const heldByUrl = new Map(held.map((object) => [object.url, object]));
    // The account's first pass brings its past: no event.created for it (as an IMAP account's first sync).
    const firstSync = account!.lastSyncAt === null && held.length === 0;
    const changes = await parts.client.changes(kind, login, login.home, info, {
      syncToken: row.syncToken,
      ctag: row.ctag,
      held: held.map((object) => ({ url: object.url, etag: object.etag })),
    });
    // Written in transactions of up to APPLY_BATCH objects, each with its record (URL, ETag).
    for (let from = 0; from < changes.changed.length; from += APPLY_BATCH) {
      const batch = changes.changed.slice(from, from + APPLY_BATCH);
      const held = (index: number, localId: string, uid: string | null): DavObjectRow => ({
        grantId,
        url: batch[index]!.url,
        collectionUrl: info.url,
        etag: batch[index]!.etag,
        localId,
        uid,
      });
      const results =
        kind === 'caldav'
          ? await parts.events.apply(
              grant,
              row.calendarId!,
              batch.map((object) => object.data),
              (tx, stored) =>
                holdObjects(
                  tx,
                  stored.map(({ index, uid }) => held(index, uid, null)),
                ),
              { history: firstSync },
            )
          : await parts.contacts.apply(
              grant,
              batch.map((object) => ({ vcard: object.data, contactId: heldByUrl.get(object.url)?.localId })),
              (tx, stored) =>
                holdObjects(
                  tx,
                  stored.map(({ index, contactId, uid }) => held(index, contactId, uid)),
                ),
            );
      for (const [index, applied] of results.entries()) {
        if (applied.ok) result.changed++;
        else {
          result.unreadable++;
          logger.warn('a server object could not be read', {
            grant_id: grantId,
            url: batch[index]!.url,
            reason: applied.error,
          });
        }
      }
    }
    for (const url of changes.deleted) {
      const object = heldByUrl.get(url);
      if (!object) continue;
      if (kind === 'caldav') await parts.events.remove(grant, object.localId);
      else await parts.contacts.remove(grant, object.localId);
      await db.write((tx) => dropObject(tx, grantId, url));
      result.removed++;
    }
    await db.write((tx) => saveCollection(tx, { ...row, syncToken: changes.syncToken, ctag: changes.ctag }));
  }

  const caldav = await loginOf(db, secrets, account, 'caldav');
  if (caldav) {
    const listed = await parts.client.collections('caldav', caldav, caldav.home);
    const rows = await db.write((tx) =>
      mirrorCalendars(tx, grantId, listed, { atSeconds: unixSeconds(clock.now()), newId }),
    );
    for (const info of listed) {
      const row = rows.get(info.url);
      if (row) await syncCollection('caldav', caldav, info, row);
    }
  }
  const carddav = await loginOf(db, secrets, account, 'carddav');
  if (carddav) {
    const listed = await parts.client.collections('carddav', carddav, carddav.home);
    const known = new Map((await collectionsOf(db.orm, grantId, 'addressbook')).map((row) => [row.url, row]));
    for (const info of listed) {
      const row = known.get(info.url) ?? {
        grantId,
        url: info.url,
        kind: 'addressbook' as const,
        calendarId: null,
        syncToken: null,
        ctag: null,
      };
      if (!known.has(info.url)) await db.write((tx) => saveCollection(tx, row));
      await syncCollection('carddav', carddav, info, row);
    }
    for (const [url] of known) {
      if (listed.some((info) => info.url === url)) continue;
      for (const object of await objectsOf(db, grantId, url)) await parts.contacts.remove(grant, object.localId);
      await db.write((tx) => dropCollection(tx, grantId, url));
    }
  }
  return result;
}
