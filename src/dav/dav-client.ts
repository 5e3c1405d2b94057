/**
 * @module dav/dav-client
 * Talking to CalDAV (RFC 4791) and CardDAV (RFC 6352) servers with tsdav: discovery of the calendar or address book
 * home from the URL an account gives (`/.well-known/caldav`, the principal, its home set, RFC 6764), the collections
 * of a home, the changes of a collection since its last sync (sync-token, RFC 6578, where the server reports it;
 * else the ctag and a comparison of ETags), and writes of one object guarded by its ETag. Basic authentication;
 * requests go through the `fetch` given (the process's by default).
 */
import {
  addressBookMultiGet,
  calendarMultiGet,
  createAccount,
  fetchAddressBooks,
  fetchCalendarObjects,
  fetchCalendars,
  fetchVCards,
  smartCollectionSyncDetailed,
  type DAVAccount,
  type DAVCollection,
} from 'tsdav';
import { AppError } from '../errors.js';

/**
 * What a DAV account logs in with: its server, login and password (in clear: only in memory); or, for an OAuth
 * grant's account (Google), `Authorization: Bearer` with the grant's access token (`oauthGrantId`: asked of the
 * client's token source, refreshed once on a 401) or a token given (`bearer`: at connect time, before the grant).
 */
export interface DavLogin {
  url: string;
  username: string;
  password: string;
  oauthGrantId?: string;
  bearer?: string;
}

/** The current access token of an OAuth grant (`force`: refreshed first), as the IMAP connector asks it. */
export type DavTokenSource = (grantId: string, options: { force: boolean }) => Promise<string>;

/** CalDAV or CardDAV. */
export type DavKind = 'caldav' | 'carddav';

/** A collection on the server: a calendar or an address book. */
export interface DavCollectionInfo {
  url: string;
  displayName: string;
  description: string;
  color: string | null;
  ctag: string | null;
  syncToken: string | null;
  /** Whether the server answers sync-collection REPORTs (RFC 6578). */
  syncCollection: boolean;
}

/** An object held: its URL and the ETag of the version held. */
export interface HeldObject {
  url: string;
  etag: string | null;
}

/** The changes of a collection since it was last synced. */
export interface CollectionChanges {
  /** New and changed objects, with their text (iCalendar or vCard). */
  changed: { url: string; etag: string | null; data: string }[];
  /** URLs of objects gone from the server. */
  deleted: string[];
  syncToken: string | null;
  ctag: string | null;
}

/** Bounds on what one server may make us hold: objects per collection read in one pass, collections per home. */
export const DAV_LIMITS = { maxCollections: 100, maxObjectBytes: 1_000_000, requestTimeoutMs: 30_000 } as const;

/** The client of one kind of server, over `fetch`. */
export interface DavClient {
  /** The home (calendar or address book home set) found from the URL; a 400 naming the server when it fails. */
  discover(kind: DavKind, login: DavLogin): Promise<string>;
  /** The collections of a home (calendars that hold events; address books). */
  collections(kind: DavKind, login: DavLogin, home: string): Promise<DavCollectionInfo[]>;
  /** What changed in a collection since `since` (null: everything, the initial sync). */
  changes(
    kind: DavKind,
    login: DavLogin,
    home: string,
    collection: DavCollectionInfo,
    since: { syncToken: string | null; ctag: string | null; held: HeldObject[] },
  ): Promise<CollectionChanges>;
  /** PUT one object: `etag` given: If-Match it; null: If-None-Match * (a new one). Its new ETag, or `conflict`. */
  put(
    login: DavLogin,
    url: string,
    body: { contentType: string; text: string },
    etag: string | null,
  ): Promise<{ ok: true; etag: string | null } | { ok: false; status: number }>;
  /** DELETE one object If-Match `etag`; a 404 counts as done. */
  remove(login: DavLogin, url: string, etag: string | null): Promise<{ ok: true } | { ok: false; status: number }>;
  /** MKCALENDAR (RFC 4791 §5.3.1) at `url` with these properties, holding events; a 400 naming the server's answer. */
  makeCalendar(login: DavLogin, url: string, properties: CalendarProperties): Promise<void>;
  /** PROPPATCH (RFC 4918 §9.2) of a calendar's properties (only those given). */
  updateCalendar(login: DavLogin, url: string, properties: CalendarProperties): Promise<void>;
  /** DELETE a collection with its objects; a 404 counts as done. */
  removeCollection(login: DavLogin, url: string): Promise<void>;
}

/** The properties of a calendar collection written through the API (absent: left as they are). */
export interface CalendarProperties {
  displayName?: string;
  description?: string | null;
  /** `#RRGGBB`, as Apple's calendar-color property holds it. */
  color?: string | null;
}

const escapeXml = (value: string) => value.replace(/[<>&"]/g, (character) => `&#${character.charCodeAt(0)};`);

/** The `<D:prop>` of {@link CalendarProperties}; a null removes nothing here (written as empty). */
function calendarProps(properties: CalendarProperties): string {
  return [
    properties.displayName !== undefined ? `<D:displayname>${escapeXml(properties.displayName)}</D:displayname>` : '',
    properties.description !== undefined
      ? `<C:calendar-description>${escapeXml(properties.description ?? '')}</C:calendar-description>`
      : '',
    properties.color !== undefined ? `<A:calendar-color>${escapeXml(properties.color ?? '')}</A:calendar-color>` : '',
  ].join('');
}

/** The namespaces of {@link calendarProps}. */
const NAMESPACES = 'xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" xmlns:A="http://apple.com/ns/ical/"';

/** A server's answer for a person to read: the URL's origin and what went wrong. */
function serverError(kind: DavKind, url: string, error: unknown): AppError {
  const origin = (() => {
    try {
      return new URL(url).origin;
    } catch {
      return url;
    }
  })();
  const reason = error instanceof Error ? error.message : String(error);
  return new AppError(
    'invalid_request',
    `${kind === 'caldav' ? 'CalDAV' : 'CardDAV'} server ${origin} could not be used: ${reason.slice(0, 300)}`,
    { field: `settings.${kind}_url` },
  );
}

const text = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : value && typeof value === 'object' && '_cdata' in value
      ? String(value._cdata)
      : '';

/** MKCALENDAR, PROPPATCH and DELETE of calendar collections, over the transport of each login. */
function calendarWrites(
  authed: (login: DavLogin) => typeof fetch,
): Pick<DavClient, 'makeCalendar' | 'updateCalendar' | 'removeCollection'> {
  return {
    async makeCalendar(login, url, properties) {
      const response = await authed(login)(url, {
        method: 'MKCALENDAR',
        headers: { 'content-type': 'application/xml; charset=utf-8' },
        body: `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar ${NAMESPACES}><D:set><D:prop>${calendarProps(properties)}<C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>`,
      });
      const answer = (await response.text()).slice(0, 300);
      if (response.status !== 201)
        throw serverError('caldav', url, new Error(`MKCALENDAR answered ${response.status} ${answer}`));
    },

    async updateCalendar(login, url, properties) {
      const props = calendarProps(properties);
      if (props === '') return;
      const response = await authed(login)(url, {
        method: 'PROPPATCH',
        headers: { 'content-type': 'application/xml; charset=utf-8' },
        body: `<?xml version="1.0" encoding="utf-8"?><D:propertyupdate ${NAMESPACES}><D:set><D:prop>${props}</D:prop></D:set></D:propertyupdate>`,
      });
      const answer = await response.text();
      // A 207 lists each property's own status: any but 200 means the server kept its value.
      const refused = [...answer.matchAll(/<(?:\w+:)?status>\s*HTTP\/1\.1 (\d{3})/g)].find(
        (match) => match[1] !== '200',
      );
      if (response.status !== 207 && response.status !== 200)
        throw serverError('caldav', url, new Error(`PROPPATCH answered ${response.status}`));
      if (refused) throw serverError('caldav', url, new Error(`PROPPATCH: a property was refused (${refused[1]})`));
    },

    async removeCollection(login, url) {
      const response = await authed(login)(url, { method: 'DELETE' });
      await response.body?.cancel();
      if (!response.ok && response.status !== 404)
        throw new AppError('upstream_error', `the server answered ${response.status} to DELETE ${url}`);
    },
  };
}

/**
 * Creates the client; `fetchImpl` is the transport (tests and embedders may pass their own), `accessToken` the source
 * of OAuth grants' tokens (without one, an OAuth login fails as unauthorized).
 */
export function createDavClient(fetchImpl: typeof fetch = globalThis.fetch, accessToken?: DavTokenSource): DavClient {
  const timed: typeof fetch = (input, init) =>
    fetchImpl(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(DAV_LIMITS.requestTimeoutMs) });
  const authorization = async (login: DavLogin, force: boolean): Promise<string> => {
    if (login.bearer !== undefined) return `Bearer ${login.bearer}`;
    if (login.oauthGrantId === undefined)
      return `Basic ${Buffer.from(`${login.username}:${login.password}`, 'utf8').toString('base64')}`;
    if (!accessToken) throw new AppError('unauthorized', 'No OAuth token source for this account.');
    return `Bearer ${await accessToken(login.oauthGrantId, { force })}`;
  };
  /**
   * The transport of one login: each request with its Authorization; an OAuth grant's request answered 401 (a token
   * expired or revoked early) is sent once more with a refreshed token, as its IMAP logins are.
   */
  const authed =
    (login: DavLogin): typeof fetch =>
    async (input, init) => {
      const send = async (force: boolean) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', await authorization(login, force));
        return timed(input, { ...init, headers });
      };
      const response = await send(false);
      if (response.status !== 401 || login.oauthGrantId === undefined) return response;
      await response.body?.cancel();
      return send(true);
    };
  const account = (kind: DavKind, login: DavLogin, home: string): DAVAccount => ({
    accountType: kind,
    serverUrl: login.url,
    rootUrl: new URL('/', home).href,
    homeUrl: home,
  });
  return {
    async discover(kind, login) {
      let found: DAVAccount;
      try {
        found = await createAccount({
          account: { accountType: kind, serverUrl: login.url },
          fetch: authed(login),
        });
        // The home must answer this login (a server may let discovery through and refuse the home).
        const probe = await authed(login)(found.homeUrl!, {
          method: 'PROPFIND',
          headers: { depth: '0', 'content-type': 'application/xml' },
          body: '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>',
        });
        await probe.body?.cancel();
        if (probe.status === 401 || probe.status === 403) throw new Error(`the login was refused (${probe.status})`);
        if (probe.status >= 400) throw new Error(`${found.homeUrl} answered ${probe.status}`);
      } catch (error) {
        throw serverError(kind, login.url, error);
      }
      if (!found.homeUrl) throw serverError(kind, login.url, new Error('no home set was found'));
      return found.homeUrl;
    },

    async collections(kind, login, home) {
      const list =
        kind === 'caldav'
          ? (await fetchCalendars({ account: account(kind, login, home), fetch: authed(login) })).filter(
              (calendar) =>
                !calendar.components || calendar.components.length === 0 || calendar.components.includes('VEVENT'),
            )
          : await fetchAddressBooks({ account: account(kind, login, home), fetch: authed(login) });
      return list.slice(0, DAV_LIMITS.maxCollections).map((collection) => ({
        url: collection.url,
        displayName: text(collection.displayName),
        description: text(collection.description),
        color:
          'calendarColor' in collection && typeof collection.calendarColor === 'string'
            ? collection.calendarColor
            : null,
        ctag: collection.ctag ?? null,
        syncToken: collection.syncToken ?? null,
        syncCollection: Array.isArray(collection.reports) && collection.reports.includes('syncCollection'),
      }));
    },

    async changes(kind, login, home, collection, since) {
      const caldav = kind === 'caldav';
      if (since.syncToken === null && since.held.length === 0) {
        // The first sync: one REPORT with every object's data (a sync-collection would name them all, then a multiget
        // read them again). The token and ctag listed before it are kept: what changes meanwhile is seen again next time.
        const objects = caldav
          ? await fetchCalendarObjects({ calendar: { url: collection.url }, fetch: authed(login) })
          : await fetchVCards({ addressBook: { url: collection.url }, fetch: authed(login) });
        return {
          changed: objects.flatMap((object) => {
            const data = text(object.data);
            if (data === '' || Buffer.byteLength(data, 'utf8') > DAV_LIMITS.maxObjectBytes) return [];
            return [{ url: object.url, etag: object.etag ?? null, data }];
          }),
          deleted: [],
          syncToken: collection.syncToken,
          ctag: collection.ctag,
        };
      }
      const base: DAVCollection = {
        url: collection.url,
        objects: since.held.map((object) => ({ url: object.url, etag: object.etag ?? '' })),
        reports: collection.syncCollection ? ['syncCollection'] : [],
        ...(since.syncToken ? { syncToken: since.syncToken } : {}),
        ...(since.ctag ? { ctag: since.ctag } : {}),
        objectMultiGet: caldav ? calendarMultiGet : addressBookMultiGet,
        fetchObjects: caldav
          ? () => fetchCalendarObjects({ calendar: { url: collection.url }, fetch: authed(login) })
          : () =>
              fetchVCards({
                addressBook: { url: collection.url },
                fetch: authed(login),
              }),
      };
      const run = (method: 'webdav' | 'basic', from: DAVCollection) =>
        smartCollectionSyncDetailed({
          collection: from,
          method,
          account: account(kind, login, home),
          fetch: authed(login),
        });
      let result;
      try {
        result = await run(collection.syncCollection ? 'webdav' : 'basic', base);
      } catch (error) {
        // A sync-token the server no longer knows (RFC 6578 §3.2, valid-sync-token): compare everything instead.
        if (!collection.syncCollection || !since.syncToken) throw error;
        const { syncToken: _token, ctag: _ctag, ...fresh } = base;
        result = await run('basic', fresh);
      }
      const changed = [...result.objects.created, ...result.objects.updated].flatMap((object) => {
        const data = text(object.data);
        if (data === '' || Buffer.byteLength(data, 'utf8') > DAV_LIMITS.maxObjectBytes) return [];
        return [{ url: object.url, etag: object.etag ?? null, data }];
      });
      return {
        changed,
        deleted: result.objects.deleted.map((object) => object.url),
        // The basic method leaves the token as it was; the collection's own (listed this pass) is the current one.
        syncToken: result.syncToken ?? collection.syncToken,
        ctag: result.ctag ?? collection.ctag,
      };
    },

    async put(login, url, body, etag) {
      const response = await authed(login)(url, {
        method: 'PUT',
        headers: {
          'content-type': body.contentType,
          ...(etag === null ? { 'if-none-match': '*' } : { 'if-match': etag }),
        },
        body: body.text,
      });
      await response.body?.cancel();
      if (response.status === 412 || response.status === 409) return { ok: false, status: response.status };
      if (!response.ok) throw new AppError('upstream_error', `the server answered ${response.status} to PUT ${url}`);
      return { ok: true, etag: response.headers.get('etag') };
    },

    ...calendarWrites(authed),

    async remove(login, url, etag) {
      const response = await authed(login)(url, {
        method: 'DELETE',
        headers: { ...(etag ? { 'if-match': etag } : {}) },
      });
      await response.body?.cancel();
      if (response.status === 412) return { ok: false, status: 412 };
      if (!response.ok && response.status !== 404)
        throw new AppError('upstream_error', `the server answered ${response.status} to DELETE ${url}`);
      return { ok: true };
    },
  };
}
