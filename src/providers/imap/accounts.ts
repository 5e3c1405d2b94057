/**
 * @module providers/imap/accounts
 * Connecting an IMAP/SMTP account (`POST /v3/connect/custom` with `provider: "imap"`): the endpoints of the settings
 * given (security defaults from the ports), the login check on both servers before anything is stored, the values
 * of its `imap_accounts` row (passwords sealed) and the account as the grant's `settings` show it (never a password).
 */
import type { imapAccounts } from '../../../storage/schema/connected.js';
import { AppError } from '../../errors.js';
import type { ConnectionSecurity, ImapGrantSettings } from '../../schemas/grants.js';
import type { SecretBox } from '../../ports/index.js';
import type { Connector, ImapEndpoint, SmtpEndpoint } from './connection.js';

/** A stored account row. */
export type ImapAccountRow = typeof imapAccounts.$inferSelect;

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
    throw new AppError('invalid_request', 'settings.email: the IMAP username is not an email address; give the account\'s address in settings.email.', { field: 'settings.email' });
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
export async function checkLogins(connector: Pick<Connector, 'openImap' | 'checkSmtp'>, endpoints: { imap: ImapEndpoint; smtp: SmtpEndpoint }): Promise<void> {
  // A login check answers a request: it waits for a connection slot no longer than the connect timeout.
  const session = await connector.openImap(endpoints.imap, { boundedSlotWait: true });
  await session.close();
  await connector.checkSmtp(endpoints.smtp);
}

/** The server and credential columns of an account row for these settings (passwords sealed by `secrets`). */
export function accountServerValues(settings: ImapGrantSettings, endpoints: { imap: ImapEndpoint; smtp: SmtpEndpoint }, secrets: SecretBox) {
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

/** The sync's progress as the grant shows it (`settings.sync`, an extension). */
export interface ImapSyncProgress {
  state: ImapAccountRow['syncState'];
  total: number;
  done: number;
  last_error: string | null;
  last_sync_at: number | null;
}

/** The account as the grant's `settings` show it: servers, usernames, security, options and sync progress; no password. */
export function imapSettingsOf(account: ImapAccountRow): Record<string, unknown> {
  const sync: ImapSyncProgress = { state: account.syncState, total: account.syncTotal, done: account.syncDone, last_error: account.lastError, last_sync_at: account.lastSyncAt };
  return {
    imap_host: account.imapHost,
    imap_port: account.imapPort,
    imap_username: account.imapUsername,
    imap_security: account.imapSecure ? 'tls' : 'starttls',
    smtp_host: account.smtpHost,
    smtp_port: account.smtpPort,
    smtp_username: account.smtpUsername ?? account.imapUsername,
    smtp_security: account.smtpSecure ? 'tls' : 'starttls',
    allow_insecure_tls: account.allowInsecureTls,
    sync_days: account.syncDays,
    ...(account.serverFilesSent !== null ? { server_files_sent: account.serverFilesSent } : {}),
    sync,
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
