/**
 * @module grants/grant-service
 * Agent Accounts: creation (with their six system folders and primary calendar, in one transaction),
 * listing, reading, updating and deletion. Every call is scoped to the calling application.
 */
import { and, asc, desc, eq, gte, lt, type SQL } from 'drizzle-orm';
import { findGrantByEmail, findGrantByRef, SYSTEM_FOLDERS, tables, type GrantRow, type Tx } from '../../storage/index.js';
import { hashPassword } from '../applications/credentials.js';
import type { Principal } from '../applications/application-service.js';
import type { CoreDeps } from '../deps.js';
import { unixSeconds } from '../deps.js';
import { AppError, notFound } from '../errors.js';
import { eventRecorder } from '../events/outbox.js';
import type { CreateGrantInput, Grant, ListGrantsInput, UpdateGrantInput } from '../schemas/grants.js';
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

/** Maps a grant row to its wire form; write-only secrets never leave. */
export function toGrant(row: GrantRow): Grant {
  const { app_password: _secret, ...settings } = row.settings;
  return {
    id: row.id,
    provider: row.provider,
    grant_status: row.grantStatus,
    email: row.email,
    ...(row.name !== null ? { name: row.name } : {}),
    ...(row.state !== null ? { state: row.state } : {}),
    scope: row.scope,
    settings: { ...settings, email: row.email },
    ...(row.workspaceId !== null ? { workspace_id: row.workspaceId } : {}),
    blocked: row.blocked,
    sending: sendingStateOf(row),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** What else a grant change concerns. */
export interface GrantHooks {
  /** Called after a grant was deleted (caches of this process keyed by what it owned). */
  onDeleted?: ((grantId: string) => void) | undefined;
}

/** Creates the grant service. */
export function createGrantService({ db, clock, newId, randomBytes, config }: CoreDeps, hooks: GrantHooks = {}) {
  const record = eventRecorder({ newId, clock });
  const now = () => unixSeconds(clock.now());

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
     * Creates an Agent Account. The address must be on a usable domain of the caller's application; the same
     * address again returns the existing grant (`created: false`).
     */
    async create(principal: Principal, input: CreateGrantInput): Promise<{ grant: Grant; created: boolean }> {
      const email = input.settings.email.trim().toLowerCase();
      const domainAddress = email.slice(email.lastIndexOf('@') + 1);
      const appPasswordHash = input.settings.app_password ? await hashPassword(input.settings.app_password, randomBytes(16)) : null;
      const { app_password: _secret, email: _email, ...settings } = input.settings;

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
      return { data: rows.map(toGrant), limit, offset };
    },

    /** One grant by id or email address. */
    async find(principal: Principal, ref: string): Promise<Grant> {
      return toGrant(await requireGrant(principal, ref));
    },

    /**
     * Changes the display name, settings (merged), scope or workspace of a grant; `sending.status: "active"` resumes
     * a paused grant's sending (recorded in `sending_state_changes` with `requestId` as the actor).
     */
    async update(principal: Principal, input: UpdateGrantInput, context: { requestId?: string | undefined } = {}): Promise<Grant> {
      const current = await requireGrant(principal, input.grant_id);
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
        const grant = toGrant(row);
        await record(tx, { applicationId: principal.applicationId, grantId: row.id, type: 'grant.updated', objectId: row.id, object: grant, createdAt: row.updatedAt });
        return grant;
      });
    },

    /** Deletes a grant and everything it owns (folders, calendars, mail). */
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
}

export type GrantService = ReturnType<typeof createGrantService>;
