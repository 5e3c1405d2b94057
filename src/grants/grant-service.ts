/**
 * @module grants/grant-service
 * Grants: hosted Agent Accounts (created with their six system folders and primary calendar, in one transaction)
 * and connected accounts (`provider: "imap"`: created, or re-authenticated, once the account's servers accepted the
 * login; the provider's {@link ConnectedAccounts}, src/imap/accounts.ts), listing, reading, updating and
 * deletion. Every call is scoped to the calling application.
 */
import { and, asc, desc, eq, gte, lt, type SQL } from 'drizzle-orm';
import {
  findGrantByEmail,
  findGrantByRef,
  SYSTEM_FOLDERS,
  tables,
  type GrantRow,
  type Tx,
} from '../../storage/index.js';
import { hashPassword } from '../applications/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import { eventRecorder } from '../outbox/index.js';
import {
  HostedGrantSettingsSchema,
  ImapGrantSettingsSchema,
  type CreateGrantInput,
  type Grant,
  type ListGrantsInput,
  type UpdateGrantInput,
} from '../schemas/grants.js';
import { HOSTED_PROVIDER, type ConnectedAccounts } from '../providers/index.js';
import { isDomainUsable } from '../domains/index.js';
import type { GrantService } from './contracts.js';
import { chooseWorkspace } from './placement.js';
import { addMissingFolders, policyFolderNames } from './policy-folders.js';
import { resumeSending } from './sending-state.js';
import { accountsOf, grantOf, toGrant } from './grant-mapper.js';

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
  return systemRole && systemRole in FOLDER_ATTRIBUTES
    ? [FOLDER_ATTRIBUTES[systemRole as keyof typeof FOLDER_ATTRIBUTES]]
    : [];
}

/** Codes Nylas gives grant notifications (`data.object.code`). */
const NOTIFICATION_CODES = { 'grant.created': 25012, 'grant.updated': 25014 } as const;

/**
 * The `object` of a grant notification for a connected account: the grant as the API returns it, plus what Nylas'
 * grant notifications carry (`code`, `grant_id`; `reauthentication_flag` on a re-authentication).
 */
function grantNotification(
  grant: Grant,
  type: keyof typeof NOTIFICATION_CODES,
  reauthenticated = false,
): Record<string, unknown> {
  return {
    ...grant,
    code: NOTIFICATION_CODES[type],
    grant_id: grant.id,
    ...(reauthenticated ? { reauthentication_flag: true } : {}),
  };
}

/** What else a grant change concerns, and the parts it uses. */
export interface GrantHooks {
  /** Called after a grant was deleted (caches of this process keyed by what it owned). */
  onDeleted?: ((grantId: string) => void) | undefined;
  /** Called after a connected account was created or re-authenticated (committed): its sync starts now. */
  onConnected?: ((grantId: string) => void) | undefined;
  /** The kinds of connected account a grant can be (`imap`), by their provider value; none: hosted grants only. */
  accounts?: readonly ConnectedAccounts[] | undefined;
}

/** Creates the grant service. */
export function createGrantService(
  { db, clock, newId, randomBytes, config }: CoreDeps,
  hooks: GrantHooks = {},
): GrantService {
  const record = eventRecorder({ newId, clock });
  const now = () => unixSeconds(clock.now());
  const connectedKinds = new Map((hooks.accounts ?? []).map((kind) => [kind.name, kind]));

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
     * Creates a grant: an Agent Account ({@link createHosted}) or a connected account of a kind in `hooks.accounts`
     * ({@link connectAccount}).
     */
    async create(principal: Principal, input: CreateGrantInput): Promise<{ grant: Grant; created: boolean }> {
      const kind = connectedKinds.get(input.provider);
      return kind ? connectAccount(principal, input, kind) : createHosted(principal, input);
    },

    /** Lists the application's grants with offset pagination (as `GET /v3/grants` does in Nylas v3). */
    async list(
      principal: Principal,
      input: ListGrantsInput,
    ): Promise<{ data: Grant[]; limit: number; offset: number }> {
      const limit = input.limit ?? 10;
      const offset = input.offset ?? 0;
      const conditions: SQL[] = [eq(tables.grants.applicationId, principal.applicationId)];
      if (input.email) conditions.push(eq(tables.grants.email, input.email.trim().toLowerCase()));
      if (input.grant_status) conditions.push(eq(tables.grants.grantStatus, input.grant_status));
      if (input.provider)
        conditions.push(eq(tables.grants.provider, input.provider === 'hosted' ? HOSTED_PROVIDER : input.provider));
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
    async update(
      principal: Principal,
      input: UpdateGrantInput,
      context: { requestId?: string | undefined } = {},
    ): Promise<Grant> {
      const current = await requireGrant(principal, input.grant_id);
      const kind = connectedKinds.get(current.provider);
      if (kind) {
        const named = input.settings !== undefined ? kind.reconnectOnly(input.settings) : undefined;
        if (named !== undefined) {
          throw new AppError(
            'invalid_request',
            `settings.${named}: a connected account's servers, credentials and sync options change by connecting it again (POST /v3/connect/custom with provider "${kind.name}" and the same address), which checks the logins first.`,
            { field: `settings.${named}` },
          );
        }
      }
      const appPasswordHash = input.settings?.app_password
        ? await hashPassword(input.settings.app_password, randomBytes(16))
        : undefined;
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
          await resumeSending(tx, newId, current.id, {
            actor: context.requestId ?? `local:${principal.via}`,
            now: clock.now(),
            windowDays: config.deliverability.pauseWindowDays,
          });
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
        await record(tx, {
          applicationId: principal.applicationId,
          grantId: row.id,
          type: 'grant.updated',
          objectId: row.id,
          object: grant,
          createdAt: row.updatedAt,
        });
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
  async function createHosted(
    principal: Principal,
    input: CreateGrantInput,
  ): Promise<{ grant: Grant; created: boolean }> {
    const hostedSettings = HostedGrantSettingsSchema.parse(input.settings);
    const email = hostedSettings.email.trim().toLowerCase();
    const domainAddress = email.slice(email.lastIndexOf('@') + 1);
    const appPasswordHash = hostedSettings.app_password
      ? await hashPassword(hostedSettings.app_password, randomBytes(16))
      : null;
    const { app_password: _secret, email: _email, ...rest } = hostedSettings;
    // A connected account's fields (passwords among them) mean nothing here: never kept in an Agent Account's settings.
    const settings = Object.fromEntries(
      Object.entries(rest).filter(([key]) => !(key in ImapGrantSettingsSchema.shape)),
    );

    return db.write(async (tx) => {
      const domain = await tx.query.domains.findFirst({
        where: and(
          eq(tables.domains.domainAddress, domainAddress),
          eq(tables.domains.applicationId, principal.applicationId),
        ),
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
          throw new AppError(
            'conflict',
            `settings.email: ${email} is a connected ${existing.provider} account of this application (grant ${existing.id}), not an Agent Account.`,
            { field: 'settings.email' },
          );
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
      await addMissingFolders(
        tx,
        id,
        await policyFolderNames(tx, principal.applicationId, workspaceId ?? null),
        at,
        newId,
      );
      const grant = toGrant(row!);
      await record(tx, {
        applicationId: principal.applicationId,
        grantId: id,
        type: 'grant.created',
        objectId: id,
        object: grant,
        createdAt: at,
      });
      return { grant, created: true };
    });
  }

  /**
   * Connects an account of a connected kind (IMAP/SMTP): logs in to its servers (the first refusal or failure is a
   * 400 with the server's reason) before anything is stored, then, in one transaction, inserts the grant (`provider`:
   * the kind's name) and its account (`kind`'s to store: for IMAP its `imap_accounts` row, passwords sealed, `sync_state`
   * `initial`, no folders: the sync maps them on its first pass) and records `grant.created`. The same address again
   * (same application) re-authenticates the existing grant instead, as Nylas does: new credentials stored, failures
   * and back-off cleared, `grant_status` `valid` again (a sync stopped on refused logins starts over),
   * `grant.updated`; same id (`created: false`). The address needs no registered domain: it is the account's own.
   */
  async function connectAccount(
    principal: Principal,
    input: CreateGrantInput,
    kind: ConnectedAccounts,
  ): Promise<{ grant: Grant; created: boolean }> {
    const request = kind.parse(input.settings);
    const email = request.email;
    // What refuses the request anyway goes first: no login is tried for an address that cannot be this grant.
    const before = await findGrantByEmail(db.orm, email);
    if (before) reconnectable(principal, before, email, kind);
    const account = await request.login();
    const result = await db.write(async (tx) => {
      const at = now();
      const atMs = clock.now().getTime();
      const existing = await findGrantByEmail(tx, email);
      if (existing) {
        reconnectable(principal, existing, email, kind);
        await account.save(tx, existing.id, { reconnect: true, atMs });
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
        await record(tx, {
          applicationId: principal.applicationId,
          grantId: existing.id,
          type: 'grant.updated',
          objectId: existing.id,
          object: grantNotification(grant, 'grant.updated', true),
          createdAt: at,
        });
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
        .values({
          id,
          applicationId: principal.applicationId,
          provider: kind.name,
          email,
          name: input.name ?? null,
          state: input.state ?? null,
          workspaceId,
          settings: {},
          scope: [],
          createdAt: at,
          updatedAt: at,
        })
        .returning();
      await account.save(tx, id, { reconnect: false, atMs });
      const grant = await grantOf(tx, row!);
      await record(tx, {
        applicationId: principal.applicationId,
        grantId: id,
        type: 'grant.created',
        objectId: id,
        object: grantNotification(grant, 'grant.created'),
        createdAt: at,
      });
      return { grant, created: true };
    });
    // The sync's wake (core.accounts.sync.wake): its first pass starts now, not at its next scan.
    hooks.onConnected?.(result.grant.id);
    return result;
  }

  /** Refuses to connect an address that is another application's grant, or this application's Agent Account. */
  function reconnectable(principal: Principal, existing: GrantRow, email: string, kind: ConnectedAccounts): void {
    if (existing.applicationId !== principal.applicationId) {
      throw new AppError('conflict', `settings.email: ${email} is already in use.`, { field: 'settings.email' });
    }
    if (existing.provider !== kind.name) {
      throw new AppError(
        'conflict',
        `settings.email: ${email} is an Agent Account of this application (grant ${existing.id}), not a connected account; delete it first to connect the mailbox instead.`,
        {
          field: 'settings.email',
        },
      );
    }
  }
}

export type { GrantService } from './contracts.js';
