/**
 * @module dav/dav-accounts
 * The CalDAV and CardDAV part of connecting an account (`POST /v3/connect/custom`): `settings.caldav_url` and
 * `settings.carddav_url` (with their own logins, the IMAP one by default) are discovered (RFC 6764: the home found
 * from a base URL through `/.well-known/caldav`, the principal and its home set) and logged in to before anything is
 * stored, after the mail servers; then stored in `dav_accounts` beside the grant, passwords sealed. It wraps the
 * mail kind's {@link ConnectedAccounts}, so connecting mail stays as it was.
 */
import { tables } from '../../storage/index.js';
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
              if (!caldav && !carddav) return;
              const values = {
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
                updatedAt: options.atMs,
              };
              await tx
                .insert(tables.davAccounts)
                .values({ grantId, ...values, createdAt: options.atMs })
                .onConflictDoUpdate({ target: tables.davAccounts.grantId, set: values });
              if (caldav)
                await mirrorCalendars(tx, grantId, caldav.calendars, {
                  atSeconds: Math.floor(options.atMs / 1000),
                  newId,
                });
            },
          };
        },
      };
    },
    reconnectOnly: (settings) => mail.reconnectOnly(settings) ?? DAV_CONNECTION_SETTINGS.find((key) => key in settings),
  };
}
