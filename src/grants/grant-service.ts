/**
 * @module grants/grant-service
 * Grants: hosted Agent Accounts (created with their six system folders and primary calendar, in one transaction)
 * and connected IMAP/SMTP accounts (`provider: "imap"`: created, or re-authenticated, once both servers accepted
 * the login; src/providers/imap/accounts.ts), listing, reading, updating and deletion. Every call is scoped to the
 * calling application.
 */
import { and, asc, desc, eq, gte, inArray, lt, type SQL } from 'drizzle-orm';
import { findGrantByEmail, findGrantByRef, SYSTEM_FOLDERS, tables, type Executor, type GrantRow, type Tx } from '../../storage/index.js';
import { hashPassword } from '../applications/credentials.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import { eventRecorder } from '../events/outbox.js';
import { HostedGrantSettingsSchema, ImapGrantSettingsSchema, type CreateGrantInput, type Grant, type ListGrantsInput, type UpdateGrantInput } from '../schemas/grants.js';
import { accountAddress, accountServerValues, checkLogins, CONNECTION_SETTINGS, endpointsOfSettings, imapSettingsOf, type ImapAccountRow } from '../providers/imap/accounts.js';
import { createConnector, type Connector } from '../providers/imap/connection.js';
import { IMAP_PROVIDER } from '../providers/imap/outgoing.js';
import { isDomainUsable } from '../domains/domain-service.js';
import { chooseWorkspace } from './placement.js';
import { addMissingFolders, policyFolderNames } from './policy-folders.js';
import { resumeSending, sendingStateOf } from '../deliverability/sending-state.js';

/** The provider value stored for hosted Agent Accounts (the spec's `hosted` is accepted as an alias). */
export const HOSTED_PROVIDER = 'nylas';

/** IMAP special-use attribute of each system folder (RFC 6154). */
const FOLDER_ATTRIBUTES: Record<(typeof SYSTEM_FOLDERS)[number], string> = {
  inbox: '\\Inbox',
  sent: '\\Sent',
  drafts: '\\Drafts',
  trash: '\\Trash',
  junk: '\\Junk',
  archive: '\\Archive',
};

/** The special-use attributes of a folder row. */
export function folderAttributes(systemRole: string | null): string[] {
  return systemRole && systemRole in FOLDER_ATTRIBUTES ? [FOLDER_ATTRIBUTES[systemRole as keyof typeof FOLDER_ATTRIBUTES]] : [];
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
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The `imap_accounts` rows of the connected accounts among `rows`, by grant id. */
export async function accountsOf(executor: Pick<Executor, 'select'>, rows: readonly Pick<GrantRow, 'id' | 'provider'>[]): Promise<Map<string, ImapAccountRow>> {
  const ids = rows.filter((row) => row.provider === IMAP_PROVIDER).map((row) => row.id);
  if (ids.length === 0) return new Map();
  const accounts = await executor.select().from(tables.imapAccounts).where(inArray(tables.imapAccounts.grantId, ids));
  return new Map(accounts.map((account) => [account.grantId, account]));
}

/** A grant row's wire form, with its account when it is a connected one (one primary-key read). */
export async function grantOf(executor: Pick<Executor, 'select'>, row: GrantRow): Promise<Grant> {
  return toGrant(row, (await accountsOf(executor, [row])).get(row.id));
}

/** Codes Nylas gives grant notifications (`data.object.code`). */
const NOTIFICATION_CODES = { 'grant.created': 25012, 'grant.updated': 25014 } as const;

/**
 * The `object` of a grant notification for a connected account: the grant as the API returns it, plus what Nylas'
 * grant notifications carry (`code`, `grant_id`; `reauthentication_flag` on a re-authentication).
 */
function grantNotification(grant: Grant, type: keyof typeof NOTIFICATION_CODES, reauthenticated = false): Record<string, unknown> {
  return { ...grant, code: NOTIFICATION_CODES[type], grant_id: grant.id, ...(reauthenticated ? { reauthentication_flag: true } : {}) };
}

/** What else a grant change concerns, and the parts it uses. */
export interface GrantHooks {
  /** Called after a grant was deleted (caches of this process keyed by what it owned). */
  onDeleted?: ((grantId: string) => void) | undefined;
  /** Called after a connected account was created or re-authenticated (committed): its sync starts now. */
  onConnected?: ((grantId: string) => void) | undefined;
  /** Logs in to connected accounts' servers (default: one of its own under `config.imap`; share the provider's). */
  connector?: Connector | undefined;
}

/** Creates the grant service. */
export function createGrantService({ db, clock, newId, randomBytes, config, secrets, dns }: CoreDeps, hooks: GrantHooks = {}) {
  const record = eventRecorder({ newId, clock });
  const now = () => unixSeconds(clock.now());
  const connector = hooks.connector ?? createConnector(config, dns);

  async function workspacesOf(tx: Tx, applicationId: string) {
    return tx.select().from(tables.workspaces).where(eq(tables.workspaces.applicationId, applicationId));
  }

  async function requireGrant(principal: Principal, ref: string): Promise<GrantRow> {
    const row = await findGrantByRef(db.orm, principal.applicationId, ref);
    if (!row) throw notFound('Grant', ref);
    return row;
  }

  return {
    /** Resolves a path's grant reference (id or email) within the caller's application, or 404. */
    require: requireGrant,

    /**
     * Creates a grant: an Agent Account ({@link createHosted}) or a connected IMAP/SMTP account
     * ({@link connectImap}).
     */
    async create(principal: Principal, input: CreateGrantInput): Promise<{ grant: Grant; created: boolean }> {
      return input.provider === IMAP_PROVIDER ? connectImap(principal, input) : createHosted(principal, input);
    },

    /** Lists the application's grants with offset pagination (as `GET /v3/grants` does in Nylas v3). */
    async list(principal: Principal, input: ListGrantsInput): Promise<{ data: Grant[]; limit: number; offset: number }> {
      const limit = input.limit ?? 10;
      const offset = input.offset ?? 0;
      const conditions: SQL[] = [eq(tables.grants.applicationId, principal.applicationId)];
      if (input.email) conditions.push(eq(tables.grants.email, input.email.trim().toLowerCase()));
      if (input.grant_status) conditions.push(eq(tables.grants.grantStatus, input.grant_status));
      if (input.provider) conditions.push(eq(tables.grants.provider, input.provider === 'hosted' ? HOSTED_PROVIDER : input.provider));
      if (input.workspace_id) conditions.push(eq(tables.grants.workspaceId, input.workspace_id));
      if (input.since !== undefined) conditions.push(gte(tables.grants.createdAt, input.since));
      if (input.before !== undefined) conditions.push(lt(tables.grants.createdAt, input.before));
      const column = input.sort_by === 'updated_at' ? tables.grants.updatedAt : tables.grants.createdAt;
      const order = input.order_by === 'asc' ? asc : desc;
      const rows = await db.orm
        .select()
        .from(tables.grants)
        .where(and(...conditions))
        .orderBy(order(column), order(tables.grants.id))
        .limit(limit)
        .offset(offset);
      const accounts = await accountsOf(db.orm, rows);
      return { data: rows.map((row) => toGrant(row, accounts.get(row.id))), limit, offset };
    },

    /** One grant by id or email address. */
    async find(principal: Principal, ref: string): Promise<Grant> {
      return grantOf(db.orm, await requireGrant(principal, ref));
    },

    /**
     * Changes the display name, settings (merged), scope or workspace of a grant; `sending.status: "active"` resumes
     * a paused grant's sending (recorded in `sending_state_changes` with `requestId` as the actor). A connected
     * account's servers, credentials and sync options are not settings to merge: connecting it again changes them.
     */
    async update(principal: Principal, input: UpdateGrantInput, context: { requestId?: string | undefined } = {}): Promise<Grant> {
      const current = await requireGrant(principal, input.grant_id);
      if (current.provider === IMAP_PROVIDER) {
        const named = CONNECTION_SETTINGS.find((key) => input.settings !== undefined && key in input.settings);
        if (named !== undefined) {
          throw new AppError(
            'invalid_request',
            `settings.${named}: a connected account's servers, credentials and sync options change by connecting it again (POST /v3/connect/custom with provider "imap" and the same address), which checks the logins first.`,
            { field: `settings.${named}` },
          );
        }
      }
      const appPasswordHash = input.settings?.app_password ? await hashPassword(input.settings.app_password, randomBytes(16)) : undefined;
      return db.write(async (tx) => {
        if (input.workspace_id !== undefined) {
          chooseWorkspace({
            applicationId: principal.applicationId,
            email: current.email,
            requestedWorkspaceId: input.workspace_id,
            workspaces: await workspacesOf(tx, principal.applicationId),
          });
        }
        const { app_password: _secret, email: _email, ...settings } = input.settings ?? {};
        if (input.sending?.status === 'active') {
          await resumeSending(tx, newId, current.id, { actor: context.requestId ?? `local:${principal.via}`, now: clock.now(), windowDays: config.deliverability.pauseWindowDays });
        }
        const [row] = await tx
          .update(tables.grants)
          .set({
            ...(input.name !== undefined ? { name: input.name } : {}),
            ...(input.scope !== undefined ? { scope: input.scope } : {}),
            ...(input.workspace_id !== undefined ? { workspaceId: input.workspace_id } : {}),
            ...(appPasswordHash !== undefined ? { appPasswordHash } : {}),
            settings: { ...current.settings, ...settings },
            updatedAt: now(),
          })
          .where(and(eq(tables.grants.id, current.id), eq(tables.grants.applicationId, principal.applicationId)))
          .returning();
        if (!row) throw notFound('Grant', input.grant_id);
        const grant = await grantOf(tx, row);
        await record(tx, { applicationId: principal.applicationId, grantId: row.id, type: 'grant.updated', objectId: row.id, object: grant, createdAt: row.updatedAt });
        return grant;
      });
    },

    /** Deletes a grant and everything it owns (folders, calendars, mail; a connected account's `imap_*` rows). */
    async destroy(principal: Principal, ref: string): Promise<void> {
      const current = await requireGrant(principal, ref);
      await db.write(async (tx) => {
        const removed = await tx
          .delete(tables.grants)
          .where(and(eq(tables.grants.id, current.id), eq(tables.grants.applicationId, principal.applicationId)))
          .returning({ id: tables.grants.id });
        if (removed.length === 0) throw notFound('Grant', ref);
        await record(tx, {
          applicationId: principal.applicationId,
          grantId: current.id,
          type: 'grant.deleted',
          object: { id: current.id, email: current.email },
        });
      });
      hooks.onDeleted?.(current.id);
    },
  };

  /**
   * Creates an Agent Account. The address must be on a usable domain of the caller's application; the same
   * address again returns the existing grant (`created: false`).
   */
  async function createHosted(principal: Principal, input: CreateGrantInput): Promise<{ grant: Grant; created: boolean }> {
    const hostedSettings = HostedGrantSettingsSchema.parse(input.settings);
    const email = hostedSettings.email.trim().toLowerCase();
    const domainAddress = email.slice(email.lastIndexOf('@') + 1);
    const appPasswordHash = hostedSettings.app_password ? await hashPassword(hostedSettings.app_password, randomBytes(16)) : null;
    const { app_password: _secret, email: _email, ...rest } = hostedSettings;
    // A connected account's fields (passwords among them) mean nothing here: never kept in an Agent Account's settings.
    const settings = Object.fromEntries(Object.entries(rest).filter(([key]) => !(key in ImapGrantSettingsSchema.shape)));

    return db.write(async (tx) => {
      const domain = await tx.query.domains.findFirst({
        where: and(eq(tables.domains.domainAddress, domainAddress), eq(tables.domains.applicationId, principal.applicationId)),
      });
      if (!domain) {
        throw new AppError(
          'invalid_request',
          `settings.email: ${domainAddress} is not a registered domain of this application. Register it first (POST /v3/admin/domains), or use an address on a trial subdomain.`,
          { field: 'settings.email' },
        );
      }
      if (!isDomainUsable(domain)) {
        throw new AppError(
          'invalid_request',
          `settings.email: the domain ${domainAddress} is not verified yet. Publish its DNS records (POST /v3/admin/domains/${domain.id}/info) and verify ownership (POST /v3/admin/domains/${domain.id}/verify).`,
          { field: 'settings.email' },
        );
      }
      const existing = await findGrantByEmail(tx, email);
      if (existing) {
        if (existing.applicationId !== principal.applicationId) {
          throw new AppError('conflict', `settings.email: ${email} is already in use.`, { field: 'settings.email' });
        }
        if (existing.provider !== HOSTED_PROVIDER) {
          throw new AppError('conflict', `settings.email: ${email} is a connected ${existing.provider} account of this application (grant ${existing.id}), not an Agent Account.`, { field: 'settings.email' });
        }
        return { grant: toGrant(existing), created: false };
      }
      const workspaceId = chooseWorkspace({
        applicationId: principal.applicationId,
        email,
        requestedWorkspaceId: input.workspace_id,
        workspaces: await workspacesOf(tx, principal.applicationId),
      });
      const at = now();
      const id = newId();
      const [row] = await tx
        .insert(tables.grants)
        .values({
          id,
          applicationId: principal.applicationId,
          provider: HOSTED_PROVIDER,
          email,
          name: input.name ?? null,
          state: input.state ?? null,
          workspaceId,
          settings,
          scope: [],
          appPasswordHash,
          createdAt: at,
          updatedAt: at,
        })
        .returning();
      await tx.insert(tables.folders).values(
        SYSTEM_FOLDERS.map((role, index) => ({
          id: role,
          grantId: id,
          name: role,
          systemRole: role,
          sortOrder: index,
          createdAt: at,
          updatedAt: at,
        })),
      );
      await tx.insert(tables.calendars).values({
        id: newId(),
        grantId: id,
        name: input.name ?? email,
        isPrimary: true,
        timezone: 'UTC',
        createdAt: at,
        updatedAt: at,
      });
      // The folders the policy of its workspace adds to every mailbox (options.additional_folders).
      await addMissingFolders(tx, id, await policyFolderNames(tx, principal.applicationId, workspaceId ?? null), at, newId);
      const grant = toGrant(row!);
      await record(tx, { applicationId: principal.applicationId, grantId: id, type: 'grant.created', objectId: id, object: grant, createdAt: at });
      return { grant, created: true };
    });
  }

  /**
   * Connects an IMAP/SMTP account: logs in to both servers (the first refusal or failure is a 400 with the
   * server's reason) before anything is stored, then, in one transaction, inserts the grant (`provider: "imap"`)
   * and its `imap_accounts` row (passwords sealed, `sync_state` `initial`, no folders: the sync maps them on its
   * first pass) and records `grant.created`. The same address again (same application) re-authenticates the
   * existing grant instead, as Nylas does: new credentials stored, failures and back-off cleared, `grant_status`
   * `valid` again (a sync stopped on refused logins starts over), `grant.updated`; same id (`created: false`).
   * The address needs no registered domain: it is the account's own.
   */
  async function connectImap(principal: Principal, input: CreateGrantInput): Promise<{ grant: Grant; created: boolean }> {
    const settings = ImapGrantSettingsSchema.parse(input.settings);
    const email = accountAddress(settings);
    // What refuses the request anyway goes first: no login is tried for an address that cannot be this grant.
    const before = await findGrantByEmail(db.orm, email);
    if (before) reconnectable(principal, before, email);
    const endpoints = endpointsOfSettings(settings);
    await checkLogins(connector, endpoints);
    const servers = accountServerValues(settings, endpoints, secrets);
    const result = await db.write(async (tx) => {
      const at = now();
      const atMs = clock.now().getTime();
      const existing = await findGrantByEmail(tx, email);
      if (existing) {
        reconnectable(principal, existing, email);
        const [account] = await tx.select().from(tables.imapAccounts).where(eq(tables.imapAccounts.grantId, existing.id)).limit(1);
        const reset = { failures: 0, retryAt: null, lastError: null, updatedAt: atMs };
        if (account) {
          await tx
            .update(tables.imapAccounts)
            .set({
              ...servers,
              ...reset,
              ...(settings.sync_days !== undefined ? { syncDays: settings.sync_days } : {}),
              ...(settings.server_files_sent !== undefined ? { serverFilesSent: settings.server_files_sent } : {}),
              ...(account.syncState === 'invalid' ? { syncState: 'initial' as const } : {}),
            })
            .where(eq(tables.imapAccounts.grantId, existing.id));
        } else {
          await tx.insert(tables.imapAccounts).values({ grantId: existing.id, ...servers, syncDays: settings.sync_days ?? config.imap.syncDays, serverFilesSent: settings.server_files_sent ?? null, syncState: 'initial', createdAt: atMs, updatedAt: atMs });
        }
        const [row] = await tx
          .update(tables.grants)
          .set({
            grantStatus: 'valid',
            ...(input.name !== undefined ? { name: input.name } : {}),
            ...(input.state !== undefined ? { state: input.state } : {}),
            updatedAt: at,
          })
          .where(eq(tables.grants.id, existing.id))
          .returning();
        const grant = await grantOf(tx, row!);
        await record(tx, { applicationId: principal.applicationId, grantId: existing.id, type: 'grant.updated', objectId: existing.id, object: grantNotification(grant, 'grant.updated', true), createdAt: at });
        return { grant, created: false };
      }
      const workspaceId = chooseWorkspace({
        applicationId: principal.applicationId,
        email,
        requestedWorkspaceId: input.workspace_id,
        workspaces: await workspacesOf(tx, principal.applicationId),
      });
      const id = newId();
      const [row] = await tx
        .insert(tables.grants)
        .values({ id, applicationId: principal.applicationId, provider: IMAP_PROVIDER, email, name: input.name ?? null, state: input.state ?? null, workspaceId, settings: {}, scope: [], createdAt: at, updatedAt: at })
        .returning();
      const [account] = await tx
        .insert(tables.imapAccounts)
        .values({ grantId: id, ...servers, syncDays: settings.sync_days ?? config.imap.syncDays, serverFilesSent: settings.server_files_sent ?? null, syncState: 'initial', createdAt: atMs, updatedAt: atMs })
        .returning();
      const grant = toGrant(row!, account);
      await record(tx, { applicationId: principal.applicationId, grantId: id, type: 'grant.created', objectId: id, object: grantNotification(grant, 'grant.created'), createdAt: at });
      return { grant, created: true };
    });
    // The sync's wake (core.imap.wake): its first pass starts now, not at its next scan.
    hooks.onConnected?.(result.grant.id);
    return result;
  }

  /** Refuses to connect an address that is another application's grant, or this application's Agent Account. */
  function reconnectable(principal: Principal, existing: GrantRow, email: string): void {
    if (existing.applicationId !== principal.applicationId) {
      throw new AppError('conflict', `settings.email: ${email} is already in use.`, { field: 'settings.email' });
    }
    if (existing.provider !== IMAP_PROVIDER) {
      throw new AppError('conflict', `settings.email: ${email} is an Agent Account of this application (grant ${existing.id}), not a connected account; delete it first to connect the mailbox instead.`, {
        field: 'settings.email',
      });
    }
  }
}

export type GrantService = ReturnType<typeof createGrantService>;
