/**
 * @module dav/dav-remote
 * The {@link RemoteCollections} of connected accounts (src/providers): where a grant's calendars and contacts are
 * (its CalDAV and CardDAV homes, `none` for a connected account without CalDAV), and the writes of the API's changes
 * to the server, each guarded by the ETag of the version held (`If-Match`, or `If-None-Match: *` for a new object).
 * A 412 is a 409 naming the object, and wakes the account's sync, which brings the server's version.
 */
import { AppError } from '../errors.js';
import type { CoreDeps } from '../ports/index.js';
import { HOSTED_PROVIDER, type ProviderGrant, type RemoteCollections } from '../providers/index.js';
import type { DavClient, DavKind } from './dav-client.js';
import {
  accountOf,
  collectionOfCalendar,
  collectionsOf,
  dropCollection,
  dropObject,
  holdObjects,
  loginOf,
  objectOfLocal,
  saveCollection,
} from './dav-store.js';

/** The name of a new object on the server: its UID (or contact id), made safe for a path segment. */
export function objectName(localId: string, extension: '.ics' | '.vcf'): string {
  return `${encodeURIComponent(localId)}${extension}`;
}

const conflict = (what: string, id: string) =>
  new AppError(
    'conflict',
    `${what} ${id} was changed on the account's server since it was last synced (ETag mismatch): this change was not written there. The server's version replaces it here at the next sync (within seconds); read it and apply the change again.`,
    { id },
  );

/** Creates the remote collections of connected accounts; `wake` starts a sync pass of a grant soon. */
export function createDavRemote(
  { db, secrets }: Pick<CoreDeps, 'db' | 'secrets'>,
  client: DavClient,
  wake: (grantId: string) => void = () => {},
): RemoteCollections {
  const home = async (grant: ProviderGrant, kind: DavKind) => {
    if (grant.provider === HOSTED_PROVIDER) return 'local' as const;
    const account = await accountOf(db.orm, grant.id);
    return (kind === 'caldav' ? account?.caldavHome : account?.carddavHome) ? ('remote' as const) : undefined;
  };
  const login = async (grantId: string, kind: DavKind) => {
    const account = await accountOf(db.orm, grantId);
    const found = account && (await loginOf(db, secrets, account, kind));
    if (!found) throw new AppError('internal', `grant ${grantId} has no ${kind} login`);
    return found;
  };

  /** Writes one object: at the URL held for `localId` (If-Match its ETag), else a new one in `collectionUrl`. */
  async function put(
    grantId: string,
    kind: DavKind,
    collectionUrl: string,
    localId: string,
    body: { contentType: string; text: (uid: string) => string },
    what: string,
    id: string,
  ): Promise<void> {
    const held = await objectOfLocal(db, grantId, localId);
    const uid = held?.uid ?? localId;
    const url = held?.url ?? new URL(objectName(localId, kind === 'caldav' ? '.ics' : '.vcf'), collectionUrl).href;
    const written = await client.put(
      await login(grantId, kind),
      url,
      { contentType: body.contentType, text: body.text(uid) },
      held ? (held.etag ?? '*') : null,
    );
    if (!written.ok) {
      wake(grantId);
      throw conflict(what, id);
    }
    await db.write((tx) =>
      holdObjects(tx, [
        {
          grantId,
          url,
          collectionUrl: held?.collectionUrl ?? collectionUrl,
          etag: written.etag,
          localId,
          uid: kind === 'carddav' ? uid : null,
        },
      ]),
    );
    // No ETag in the answer: the next sync reads the object once to learn it.
  }

  async function remove(grantId: string, kind: DavKind, localId: string, what: string, id: string): Promise<void> {
    const held = await objectOfLocal(db, grantId, localId);
    if (!held) return;
    const removed = await client.remove(await login(grantId, kind), held.url, held.etag);
    if (!removed.ok) {
      wake(grantId);
      throw conflict(what, id);
    }
    await db.write((tx) => dropObject(tx, grantId, held.url));
  }

  return {
    calendarsOf: async (grant) => (await home(grant, 'caldav')) ?? 'none',
    // A connected account without CardDAV keeps the contacts of our store, as before CardDAV.
    contactsOf: async (grant) => (await home(grant, 'carddav')) ?? 'local',

    async createCalendar(grant, { calendarId, name, description, hexColor }) {
      const account = await accountOf(db.orm, grant.id);
      const found = account?.caldavHome ? await login(grant.id, 'caldav') : undefined;
      if (!found) throw new AppError('internal', `grant ${grant.id} has no CalDAV home`);
      const url = new URL(`${encodeURIComponent(calendarId)}/`, found.home).href;
      await client.makeCalendar(found, url, { displayName: name, description, color: hexColor });
      // Known as this calendar before its row exists: a sync in between updates nothing and makes no second one.
      await db.write((tx) =>
        saveCollection(tx, { grantId: grant.id, url, kind: 'calendar', calendarId, syncToken: null, ctag: null }),
      );
    },

    async updateCalendar(grant, { calendarId, name, description, hexColor }) {
      const collection = await collectionOfCalendar(db, grant.id, calendarId);
      if (!collection) throw new AppError('internal', `calendar ${calendarId} is not on the server`);
      await client.updateCalendar(await login(grant.id, 'caldav'), collection.url, {
        ...(name !== undefined ? { displayName: name } : {}),
        ...(description !== undefined ? { description } : {}),
        ...(hexColor !== undefined ? { color: hexColor } : {}),
      });
    },

    async deleteCalendar(grant, { calendarId }) {
      const collection = await collectionOfCalendar(db, grant.id, calendarId);
      if (!collection) return;
      await client.removeCollection(await login(grant.id, 'caldav'), collection.url);
      await db.write((tx) => dropCollection(tx, grant.id, collection.url));
    },

    async putEvent(grant, { calendarId, uid, eventId, ics }) {
      const collection = await collectionOfCalendar(db, grant.id, calendarId);
      if (!collection) throw new AppError('internal', `calendar ${calendarId} is not on the server`);
      await put(
        grant.id,
        'caldav',
        collection.url,
        uid,
        { contentType: 'text/calendar; charset=utf-8', text: () => ics },
        'Event',
        eventId,
      );
    },

    async deleteEvent(grant, { uid, eventId }) {
      await remove(grant.id, 'caldav', uid, 'Event', eventId);
    },

    async putContact(grant, { contactId, vcard }) {
      const [book] = await collectionsOf(db.orm, grant.id, 'addressbook');
      if (!book)
        throw new AppError(
          'invalid_request',
          `grant ${grant.id} has no address book on its CardDAV server yet (its sync has not run).`,
        );
      await put(
        grant.id,
        'carddav',
        book.url,
        contactId,
        { contentType: 'text/vcard; charset=utf-8', text: vcard },
        'Contact',
        contactId,
      );
    },

    async deleteContact(grant, { contactId }) {
      await remove(grant.id, 'carddav', contactId, 'Contact', contactId);
    },
  };
}
