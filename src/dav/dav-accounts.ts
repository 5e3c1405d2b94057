/**
 * @module dav/dav-accounts
 * The CalDAV and CardDAV part of connecting an account (`POST /v3/connect/custom`): `settings.caldav_url` and
 * `settings.carddav_url` (with their own logins, the IMAP one by default) are discovered (RFC 6764: the home found
 * from a base URL through `/.well-known/caldav`, the principal and its home set) and logged in to before anything is
 * stored, after the mail servers; then stored in `dav_accounts` beside the grant, passwords sealed. It wraps the
 * mail kind's {@link ConnectedAccounts}, so connecting mail stays as it was.
 */
import { and, eq, isNull } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { ConnectedAccounts } from '../providers/index.js';
import type { DavClient, DavKind } from './dav-client.js';
import { mirrorCalendars, type ListedCalendar } from './dav-store.js';

/** The settings of a connect request this module reads (checked by the settings schema already). */
interface DavSettings {
  imap_username?: string;
  imap_password?: string;
  caldav_url?: string;
  carddav_url?: string;
  caldav_username?: string;
  caldav_password?: string;
  carddav_username?: string;
  carddav_password?: string;
}

/** Settings keys only connecting again may change (with the mail ones). */
export const DAV_CONNECTION_SETTINGS = [
  'caldav_url',
  'carddav_url',
  'caldav_username',
  'caldav_password',
  'carddav_username',
  'carddav_password',
] as const;

/** The DAV part of an account as stored (home found, credentials sealed; null: the IMAP login). */
interface DavPart {
  url: string;
  home: string;
  username: string | null;
  passwordSealed: string | null;
  /** The calendars of the home (CalDAV), mirrored as the grant's calendars when it is stored. */
  calendars: ListedCalendar[];
}

/** The columns of a DAV part the account no longer has. */
const DROPPED = {
  caldav: { caldavUrl: null, caldavHome: null, caldavUsername: null, caldavPasswordSealed: null },
  carddav: { carddavUrl: null, carddavHome: null, carddavUsername: null, carddavPasswordSealed: null },
} as const;

/** The null columns of the parts `kinds`. */
const droppedColumns = (kinds: readonly DavKind[]) => ({
  ...(kinds.includes('caldav') ? DROPPED.caldav : {}),
  ...(kinds.includes('carddav') ? DROPPED.carddav : {}),
});

/**
 * Forgets the parts of a grant's DAV account that a new sign-in no longer reaches (its calendar calls then answer the
 * 400 of an account without CalDAV; its contacts are those of our store), and the row once it has neither.
 */
async function dropDavParts(tx: Tx, grantId: string, kinds: readonly DavKind[], atMs: number): Promise<void> {
  const { davAccounts } = tables;
  await tx
    .update(davAccounts)
    .set({ ...droppedColumns(kinds), updatedAt: atMs })
    .where(eq(davAccounts.grantId, grantId));
  await tx
    .delete(davAccounts)
    .where(and(eq(davAccounts.grantId, grantId), isNull(davAccounts.caldavHome), isNull(davAccounts.carddavHome)));
}

/**
 * Inside the grant's transaction: stores the DAV part of an account (nothing when it has none), replacing the one
 * of a grant connected again, and mirrors its server calendars as the grant's calendars.
 */
async function saveDavAccount(
  tx: Tx,
  grantId: string,
  { caldav, carddav }: { caldav: DavPart | undefined; carddav: DavPart | undefined },
  atMs: number,
  newId: CoreDeps['newId'],
  dropped: readonly DavKind[] = [],
): Promise<void> {
  if (!caldav && !carddav) {
    if (dropped.length > 0) await dropDavParts(tx, grantId, dropped, atMs);
    return;
  }
  const values = {
    ...droppedColumns(dropped),
    ...(caldav
      ? {
          caldavUrl: caldav.url,
          caldavHome: caldav.home,
          caldavUsername: caldav.username,
          caldavPasswordSealed: caldav.passwordSealed,
        }
      : {}),
    ...(carddav
      ? {
          carddavUrl: carddav.url,
          carddavHome: carddav.home,
          carddavUsername: carddav.username,
          carddavPasswordSealed: carddav.passwordSealed,
        }
      : {}),
    failures: 0,
    lastError: null,
    retryAt: null,
    updatedAt: atMs,
  };
  await tx
    .insert(tables.davAccounts)
    .values({ grantId, ...values, createdAt: atMs })
    .onConflictDoUpdate({ target: tables.davAccounts.grantId, set: values });
  if (caldav) await mirrorCalendars(tx, grantId, caldav.calendars, { atSeconds: Math.floor(atMs / 1000), newId });
}

/**
 * The calendars and contacts of an OAuth grant's account (Google: CalDAV and CardDAV with `Authorization: Bearer`),
 * at the connector's `caldav_url` and `carddav_url`: discovered with the access token of the sign-in before the grant
 * is stored, then stored in its transaction with no login of their own (the grant's token is asked at each use).
 * Best effort: a server that cannot be used (the scope given has no calendar access, the API is off) is logged and
 * left out, and the grant has mail alone (its calendar calls answer the 400 of an account without CalDAV).
 */
export function oauthDavAccounts(
  { newId, logger }: Pick<CoreDeps, 'newId' | 'logger'>,
  client: DavClient,
): {
  discover(
    urls: { caldavUrl?: string; carddavUrl?: string },
    accessToken: string,
  ): Promise<{ save(tx: Tx, grantId: string, atMs: number): Promise<void> }>;
} {
  return {
    async discover(urls, accessToken) {
      const urlOf: Record<DavKind, string | undefined> = { caldav: urls.caldavUrl, carddav: urls.carddavUrl };
      const part = async (kind: DavKind): Promise<DavPart | undefined> => {
        const url = urlOf[kind];
        if (url === undefined) return undefined;
        const login = { url, username: '', password: '', bearer: accessToken };
        try {
          const home = await client.discover(kind, login);
          const calendars = kind === 'caldav' ? await client.collections(kind, login, home) : [];
          return { url, home, username: null, passwordSealed: null, calendars };
        } catch (error) {
          logger.warn('dav: the OAuth account has no usable server of this kind', { kind, error: String(error) });
          return undefined;
        }
      };
      const caldav = await part('caldav');
      const carddav = await part('carddav');
      // A kind the sign-in's scope does not reach (or the connector has no server of) is dropped from a grant signed
      // in again with less; a server that failed to answer leaves what was stored as it was.
      const dropped = (['caldav', 'carddav'] as const).filter((kind) => urlOf[kind] === undefined);
      return {
        save: (tx, grantId, atMs) => saveDavAccount(tx, grantId, { caldav, carddav }, atMs, newId, dropped),
      };
    },
  };
}

/**
 * `mail` (the IMAP kind) with calendars and contacts: the same parse and login, then discovery of the DAV servers
 * the settings name, stored in the grant's transaction.
 */
export function withDavAccounts(
  mail: ConnectedAccounts,
  { secrets, newId }: Pick<CoreDeps, 'secrets' | 'newId'>,
  client: DavClient,
): ConnectedAccounts {
  return {
    name: mail.name,
    parse(raw) {
      const request = mail.parse(raw);
      const settings = (raw ?? {}) as DavSettings;
      const part = async (kind: DavKind): Promise<DavPart | undefined> => {
        const url = kind === 'caldav' ? settings.caldav_url : settings.carddav_url;
        if (url === undefined) return undefined;
        const username = (kind === 'caldav' ? settings.caldav_username : settings.carddav_username) ?? null;
        const password = (kind === 'caldav' ? settings.caldav_password : settings.carddav_password) ?? null;
        const login = {
          url,
          username: username ?? settings.imap_username ?? '',
          password: password ?? settings.imap_password ?? '',
        };
        const home = await client.discover(kind, login);
        const calendars = kind === 'caldav' ? await client.collections(kind, login, home) : [];
        return { url, home, username, passwordSealed: password === null ? null : secrets.seal(password), calendars };
      };
      return {
        email: request.email,
        async login() {
          const login = await request.login();
          const caldav = await part('caldav');
          const carddav = await part('carddav');
          return {
            async save(tx, grantId, options) {
              await login.save(tx, grantId, options);
              await saveDavAccount(tx, grantId, { caldav, carddav }, options.atMs, newId);
            },
          };
        },
      };
    },
    reconnectOnly: (settings) => mail.reconnectOnly(settings) ?? DAV_CONNECTION_SETTINGS.find((key) => key in settings),
  };
}
