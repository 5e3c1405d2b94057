/**
 * @module grants/grant-mapper
 * A grant as the API shows it: the row, and for a connected account the servers, usernames, options and sync
 * progress of its `imap_accounts` row (never a password).
 */
import { inArray } from 'drizzle-orm';
import { tables, type Executor, type GrantRow } from '../../storage/index.js';
import type { imapAccounts } from '../../storage/schema/connected.js';
import { sendingStateOf } from './sending-state.js';
import { IMAP_PROVIDER } from '../providers/index.js';
import type { Grant } from '../schemas/grants.js';

/** A stored connected account row. */
export type ImapAccountRow = typeof imapAccounts.$inferSelect;

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
  const sync: ImapSyncProgress = {
    state: account.syncState,
    total: account.syncTotal,
    done: account.syncDone,
    last_error: account.lastError,
    last_sync_at: account.lastSyncAt,
  };
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

/**
 * Maps a grant row to its wire form; write-only secrets never leave. A connected account's `settings` show its
 * servers, usernames, options and sync progress from its `imap_accounts` row (`account`), never a password.
 */
export function toGrant(row: GrantRow, account?: ImapAccountRow): Grant {
  const { app_password: _secret, ...settings } = row.settings;
  return {
    id: row.id,
    provider: row.provider,
    grant_status: row.grantStatus,
    email: row.email,
    ...(row.name !== null ? { name: row.name } : {}),
    ...(row.state !== null ? { state: row.state } : {}),
    scope: row.scope,
    settings: { ...settings, email: row.email, ...(account ? imapSettingsOf(account) : {}) },
    ...(row.workspaceId !== null ? { workspace_id: row.workspaceId } : {}),
    blocked: row.blocked,
    sending: sendingStateOf(row),
    ...(row.suspendedAt !== null ? { suspended_at: row.suspendedAt, suspended_reason: row.suspendedReason ?? '' } : {}),
    oversight_mode: (row.oversightMode as Grant['oversight_mode']) ?? null,
    ...(row.credentialId !== null ? { credential_id: row.credentialId } : {}),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The `imap_accounts` rows of the connected accounts among `rows`, by grant id. */
export async function accountsOf(
  executor: Pick<Executor, 'select'>,
  rows: readonly Pick<GrantRow, 'id' | 'provider'>[],
): Promise<Map<string, ImapAccountRow>> {
  const ids = rows.filter((row) => row.provider === IMAP_PROVIDER).map((row) => row.id);
  if (ids.length === 0) return new Map();
  const accounts = await executor.select().from(tables.imapAccounts).where(inArray(tables.imapAccounts.grantId, ids));
  return new Map(accounts.map((account) => [account.grantId, account]));
}

/** A grant row's wire form, with its account when it is a connected one (one primary-key read). */
export async function grantOf(executor: Pick<Executor, 'select'>, row: GrantRow): Promise<Grant> {
  return toGrant(row, (await accountsOf(executor, [row])).get(row.id));
}
