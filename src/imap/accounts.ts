/**
 * @module imap/accounts
 * Connecting an IMAP/SMTP account (`POST /v3/connect/custom` with `provider: "imap"`): the endpoints of the settings
 * given (security defaults from the ports), the login check on both servers before anything is stored, the values
 * of its `imap_accounts` row (passwords sealed), stored beside the grant by the grant service through
 * {@link createImapAccounts} (src/providers/contracts.ts, `ConnectedAccounts`). The account as the grant's `settings`
 * show it is mapped with the grant (src/grants/grant-mapper.ts).
 */
import { eq } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import { AppError } from '../errors.js';
import { ImapGrantSettingsSchema, type ConnectionSecurity, type ImapGrantSettings } from '../schemas/grants.js';
import type { CoreDeps, SecretBox } from '../ports/index.js';
import { IMAP_PROVIDER, type ConnectedAccounts } from '../providers/contracts.js';
import type { Connector, ImapEndpoint, SmtpEndpoint } from './connection.js';

/** The IMAP port of implicit TLS (RFC 8314 §3.3, "imaps"); any other port defaults to STARTTLS. */
export const IMAPS_PORT = 993;

/** The SMTP submission port of implicit TLS (RFC 8314 §3.3, "submissions"); any other port defaults to STARTTLS. */
export const SUBMISSIONS_PORT = 465;

/** Whether a connection is implicit TLS: the setting when given, else the port's convention. */
export function isImplicitTls(security: ConnectionSecurity | undefined, port: number, implicitPort: number): boolean {
  return security === undefined ? port === implicitPort : security === 'tls';
}

/** The address of the account: `settings.email`, else the IMAP username when it is an address; lower-cased. */
export function accountAddress(settings: Pick<ImapGrantSettings, 'email' | 'imap_username'>): string {
  const address = (settings.email ?? settings.imap_username).trim().toLowerCase();
  // The same shape zod's email check takes; an IMAP username that is not an address needs settings.email.
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address) || address.length > 320) {
    throw new AppError(
      'invalid_request',
      "settings.email: the IMAP username is not an email address; give the account's address in settings.email.",
      { field: 'settings.email' },
    );
  }
  return address;
}

/** The endpoints the settings describe, passwords in clear (used for the login check, then sealed). */
export function endpointsOfSettings(settings: ImapGrantSettings): { imap: ImapEndpoint; smtp: SmtpEndpoint } {
  const allowInsecureTls = settings.allow_insecure_tls ?? false;
  return {
    imap: {
      host: settings.imap_host,
      port: settings.imap_port,
      secure: isImplicitTls(settings.imap_security, settings.imap_port, IMAPS_PORT),
      username: settings.imap_username,
      password: settings.imap_password,
      allowInsecureTls,
    },
    smtp: {
      host: settings.smtp_host,
      port: settings.smtp_port,
      secure: isImplicitTls(settings.smtp_security, settings.smtp_port, SUBMISSIONS_PORT),
      username: settings.smtp_username ?? settings.imap_username,
      password: settings.smtp_password ?? settings.imap_password,
      allowInsecureTls,
    },
  };
}

/**
 * Logs in to the IMAP server (then logs out) and to the SMTP server. Rejects with the connector's 400 (the
 * server's own words: "IMAP server host:port refused the login: …") at the first that fails; each is bounded by
 * the connect and command timeouts of `config.imap`.
 */
export async function checkLogins(
  connector: Pick<Connector, 'openImap' | 'checkSmtp'>,
  endpoints: { imap: ImapEndpoint; smtp: SmtpEndpoint },
): Promise<void> {
  // A login check answers a request: it waits for a connection slot no longer than the connect timeout.
  const session = await connector.openImap(endpoints.imap, { boundedSlotWait: true });
  await session.close();
  await connector.checkSmtp(endpoints.smtp);
}

/** The server and credential columns of an account row for these settings (passwords sealed by `secrets`). */
export function accountServerValues(
  settings: ImapGrantSettings,
  endpoints: { imap: ImapEndpoint; smtp: SmtpEndpoint },
  secrets: SecretBox,
) {
  return {
    imapHost: endpoints.imap.host,
    imapPort: endpoints.imap.port,
    imapUsername: endpoints.imap.username,
    imapPasswordSealed: secrets.seal(endpoints.imap.password),
    imapSecure: endpoints.imap.secure,
    smtpHost: endpoints.smtp.host,
    smtpPort: endpoints.smtp.port,
    // Null: the same as IMAP's (kept so a later IMAP change carries over, as when it was created).
    smtpUsername: settings.smtp_username ?? null,
    smtpPasswordSealed: settings.smtp_password === undefined ? null : secrets.seal(settings.smtp_password),
    smtpSecure: endpoints.smtp.secure,
    allowInsecureTls: endpoints.imap.allowInsecureTls,
  };
}

/** Settings keys a `PATCH /v3/grants/{id}` may not change on a connected account: connect it again instead. */
export const CONNECTION_SETTINGS = [
  'imap_username',
  'imap_password',
  'imap_host',
  'imap_port',
  'imap_security',
  'smtp_username',
  'smtp_password',
  'smtp_host',
  'smtp_port',
  'smtp_security',
  'allow_insecure_tls',
  'sync_days',
  'server_files_sent',
  'sync',
  'app_password',
] as const;

/**
 * Connecting IMAP/SMTP accounts, for the grant service: the settings read (zod, then the address), the logins checked
 * on both servers through `connector`, then the `imap_accounts` row written in the grant's transaction (a new account,
 * or, reconnecting, the servers and credentials replaced, failures and back-off cleared, a sync stopped on refused
 * logins started over).
 */
export function createImapAccounts(
  { config, secrets }: Pick<CoreDeps, 'config' | 'secrets'>,
  connector: Pick<Connector, 'openImap' | 'checkSmtp'>,
): ConnectedAccounts {
  return {
    name: IMAP_PROVIDER,
    parse(raw) {
      const settings = ImapGrantSettingsSchema.parse(raw);
      return {
        email: accountAddress(settings),
        async login() {
          const endpoints = endpointsOfSettings(settings);
          await checkLogins(connector, endpoints);
          const servers = accountServerValues(settings, endpoints, secrets);
          return {
            async save(tx, grantId, { reconnect, atMs }) {
              if (reconnect) {
                const [account] = await tx
                  .select()
                  .from(tables.imapAccounts)
                  .where(eq(tables.imapAccounts.grantId, grantId))
                  .limit(1);
                const reset = { failures: 0, retryAt: null, lastError: null, updatedAt: atMs };
                if (account) {
                  await tx
                    .update(tables.imapAccounts)
                    .set({
                      ...servers,
                      ...reset,
                      ...(settings.sync_days !== undefined ? { syncDays: settings.sync_days } : {}),
                      ...(settings.server_files_sent !== undefined
                        ? { serverFilesSent: settings.server_files_sent }
                        : {}),
                      ...(account.syncState === 'invalid' ? { syncState: 'initial' as const } : {}),
                    })
                    .where(eq(tables.imapAccounts.grantId, grantId));
                  return;
                }
              }
              await tx.insert(tables.imapAccounts).values({
                grantId,
                ...servers,
                syncDays: settings.sync_days ?? config.imap.syncDays,
                serverFilesSent: settings.server_files_sent ?? null,
                syncState: 'initial',
                createdAt: atMs,
                updatedAt: atMs,
              });
            },
          };
        },
      };
    },
    reconnectOnly: (settings) => CONNECTION_SETTINGS.find((key) => key in settings),
  };
}

/** The servers of an account that logs in with OAuth (the connector's, src/connectors/endpoints.ts). */
export interface OAuthAccountServers {
  /** The account's address: the login name of XOAUTH2. */
  email: string;
  imap: { host: string; port: number; secure: boolean };
  smtp: { host: string; port: number; secure: boolean };
  allowInsecureTls: boolean;
}

/**
 * Inside the grant's write transaction: stores the `imap_accounts` row of an OAuth grant (`auth_method` `oauth2`: it
 * logs in with the grant's access token, so no password is kept), or, for a grant connected again, replaces its
 * servers, clears its failures and starts a sync stopped on refused logins over.
 */
export async function saveOAuthAccount(
  tx: Tx,
  { config, secrets }: Pick<CoreDeps, 'config' | 'secrets'>,
  grantId: string,
  servers: OAuthAccountServers,
  atMs: number,
): Promise<void> {
  const values = {
    imapHost: servers.imap.host,
    imapPort: servers.imap.port,
    imapUsername: servers.email,
    imapPasswordSealed: secrets.seal(''),
    imapSecure: servers.imap.secure,
    smtpHost: servers.smtp.host,
    smtpPort: servers.smtp.port,
    smtpUsername: null,
    smtpPasswordSealed: null,
    smtpSecure: servers.smtp.secure,
    allowInsecureTls: servers.allowInsecureTls,
    authMethod: 'oauth2' as const,
    updatedAt: atMs,
  };
  const [account] = await tx
    .select()
    .from(tables.imapAccounts)
    .where(eq(tables.imapAccounts.grantId, grantId))
    .limit(1);
  if (account) {
    await tx
      .update(tables.imapAccounts)
      .set({
        ...values,
        failures: 0,
        retryAt: null,
        lastError: null,
        ...(account.syncState === 'invalid' ? { syncState: 'initial' as const } : {}),
      })
      .where(eq(tables.imapAccounts.grantId, grantId));
    return;
  }
  await tx
    .insert(tables.imapAccounts)
    .values({ grantId, ...values, syncDays: config.imap.syncDays, syncState: 'initial', createdAt: atMs });
}
