/**
 * @module admin/workspace-service
 * Workspaces (`/v3/workspaces`): an application's groups of grants, each naming one policy and some rules.
 * - Every application has exactly one default workspace, made with the application. It cannot be deleted, and only
 *   its `policy_id` and `rule_ids` can change (any other field is a 400 that says so).
 * - Deleting a workspace moves its grants to the default workspace.
 * - `auto-group` places the grants still in the default workspace by the placement order of new accounts
 *   (../grants/placement.ts); it runs inline and answers when done.
 * - `manual-assign` moves named grants in (from anywhere) or out (to the default workspace).
 */
import { and, eq, inArray, isNull, or } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { unixSeconds } from '../time.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError, invalid, notFound } from '../errors.js';
import { eventRecorder } from '../outbox/index.js';
import { accountsOf, toGrant, chooseWorkspace } from '../grants/index.js';
import type {
  AutoGroupInput,
  CreateWorkspaceInput,
  ManualAssignInput,
  ManualAssignResult,
  UpdateWorkspaceInput,
  Workspace,
} from '../schemas/admin.js';
import { adminWriter, requireOwned, requireOwnedRow, unique } from './ownership.js';

type WorkspaceRow = typeof tables.workspaces.$inferSelect;

/** The fields of the default workspace that can change. */
const DEFAULT_MUTABLE = ['policy_id', 'rule_ids'] as const;

/** A row in wire form. */
export function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    workspace_id: row.id,
    application_id: row.applicationId,
    name: row.name,
    ...(row.domain !== null ? { domain: row.domain } : {}),
    auto_group: row.autoGroup,
    default: row.isDefault,
    ...(row.policyId !== null ? { policy_id: row.policyId } : {}),
    rule_ids: row.ruleIds,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Creates the workspace service; `invalidate` runs after every write (enforcement caches). */
export function createWorkspaceService({ db, clock, newId }: CoreDeps, invalidate: () => void) {
  const now = () => unixSeconds(clock.now());
  const record = eventRecorder({ newId, clock });

  /** A `grant.updated` notification for each grant that moved (its `workspace_id` changed). */
  async function announceMoves(tx: Tx, rows: readonly GrantRow[]): Promise<void> {
    const accounts = await accountsOf(tx, rows);
    for (const row of rows)
      await record(tx, {
        applicationId: row.applicationId,
        grantId: row.id,
        type: 'grant.updated',
        objectId: row.id,
        object: toGrant(row, accounts.get(row.id)),
        createdAt: row.updatedAt,
      });
  }

  async function defaultOf(tx: Tx, applicationId: string): Promise<WorkspaceRow> {
    const [row] = await tx
      .select()
      .from(tables.workspaces)
      .where(and(eq(tables.workspaces.applicationId, applicationId), eq(tables.workspaces.isDefault, true)));
    if (!row) throw new AppError('internal', 'The application has no default workspace.');
    return row;
  }

  const write = adminWriter(db, invalidate);

  /** Moves grants of the application to a workspace; returns the ids moved. */
  async function moveGrants(
    tx: Tx,
    applicationId: string,
    grantIds: readonly string[],
    workspaceId: string,
    at: number,
  ): Promise<void> {
    for (let index = 0; index < grantIds.length; index += 500) {
      const moved = await tx
        .update(tables.grants)
        .set({ workspaceId, updatedAt: at })
        .where(
          and(
            eq(tables.grants.applicationId, applicationId),
            inArray(tables.grants.id, grantIds.slice(index, index + 500)),
          ),
        )
        .returning();
      await announceMoves(tx, moved);
    }
  }

  return {
    /** Every workspace of the application, the default first, then oldest first. */
    async list(principal: Principal): Promise<{ data: Workspace[] }> {
      const rows = await db.orm
        .select()
        .from(tables.workspaces)
        .where(eq(tables.workspaces.applicationId, principal.applicationId));
      rows.sort(
        (a, b) => Number(b.isDefault) - Number(a.isDefault) || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1),
      );
      return { data: rows.map(toWorkspace) };
    },

    /** One workspace. */
    async find(principal: Principal, workspaceId: string): Promise<Workspace> {
      return toWorkspace(await requireOwnedRow(db.orm, 'workspace', principal.applicationId, workspaceId));
    },

    /** Creates a (non-default) workspace; `auto_group` defaults to true when a domain is given. */
    async create(principal: Principal, input: CreateWorkspaceInput): Promise<Workspace> {
      const at = now();
      return toWorkspace(
        await write(async (tx) => {
          await requireOwned(
            tx,
            principal.applicationId,
            'policy',
            input.policy_id !== undefined ? [input.policy_id] : [],
            'policy_id',
          );
          await requireOwned(tx, principal.applicationId, 'rule', input.rule_ids ?? [], 'rule_ids');
          const domain = input.domain?.toLowerCase() ?? null;
          const [row] = await tx
            .insert(tables.workspaces)
            .values({
              id: newId(),
              applicationId: principal.applicationId,
              name: input.name,
              domain,
              autoGroup: input.auto_group ?? domain !== null,
              isDefault: false,
              policyId: input.policy_id ?? null,
              ruleIds: unique(input.rule_ids ?? []),
              createdAt: at,
              updatedAt: at,
            })
            .returning();
          return row!;
        }),
      );
    },

    /** Changes a workspace (PATCH: only the fields given; null clears policy_id or rule_ids). */
    async update(principal: Principal, input: UpdateWorkspaceInput): Promise<Workspace> {
      return toWorkspace(
        await write(async (tx) => {
          const current = await requireOwnedRow(tx, 'workspace', principal.applicationId, input.workspace_id);
          if (current.isDefault) {
            const other = (['name', 'domain', 'auto_group'] as const).filter((field) => input[field] !== undefined);
            if (other.length > 0) {
              throw new AppError(
                'invalid_request',
                `${other.join(', ')}: the default workspace cannot change ${other.length === 1 ? 'this field' : 'these fields'}; only ${DEFAULT_MUTABLE.join(' and ')} can change on it.`,
                { field: other[0] },
              );
            }
          }
          if (input.policy_id)
            await requireOwned(tx, principal.applicationId, 'policy', [input.policy_id], 'policy_id');
          if (input.rule_ids) await requireOwned(tx, principal.applicationId, 'rule', input.rule_ids, 'rule_ids');
          const [row] = await tx
            .update(tables.workspaces)
            .set({
              ...(input.name !== undefined ? { name: input.name } : {}),
              ...(input.domain !== undefined ? { domain: input.domain.toLowerCase() } : {}),
              ...(input.auto_group !== undefined ? { autoGroup: input.auto_group } : {}),
              ...(input.policy_id !== undefined ? { policyId: input.policy_id } : {}),
              ...(input.rule_ids !== undefined ? { ruleIds: unique(input.rule_ids ?? []) } : {}),
              updatedAt: now(),
            })
            .where(eq(tables.workspaces.id, current.id))
            .returning();
          return row!;
        }),
      );
    },

    /** Deletes a workspace; its grants move to the default workspace. The default workspace cannot be deleted. */
    async destroy(principal: Principal, workspaceId: string): Promise<void> {
      await write(async (tx) => {
        const current = await requireOwnedRow(tx, 'workspace', principal.applicationId, workspaceId);
        if (current.isDefault) throw invalid('workspace_id', 'the default workspace cannot be deleted.');
        const fallback = await defaultOf(tx, principal.applicationId);
        const moved = await tx
          .update(tables.grants)
          .set({ workspaceId: fallback.id, updatedAt: now() })
          .where(
            and(eq(tables.grants.applicationId, principal.applicationId), eq(tables.grants.workspaceId, current.id)),
          )
          .returning();
        await announceMoves(tx, moved);
        await tx.delete(tables.workspaces).where(eq(tables.workspaces.id, current.id));
      });
    },

    /**
     * Places the grants still in the default workspace (or in none) by the placement order: a workspace with
     * `auto_group` whose domain is the grant's. Filters: created at or after `after_created_at`, valid grants
     * only unless `invalid_also`, and only the workspace of `specific_domain` when given.
     */
    async autoGroup(principal: Principal, input: AutoGroupInput): Promise<{ job_id: string; message: string }> {
      const jobId = newId();
      const moved = await write(async (tx) => {
        const own = await tx
          .select()
          .from(tables.workspaces)
          .where(eq(tables.workspaces.applicationId, principal.applicationId));
        const fallback = own.find((workspace) => workspace.isDefault);
        if (!fallback) throw new AppError('internal', 'The application has no default workspace.');
        const specific = input.specific_domain?.toLowerCase();
        const targets = own.filter(
          (workspace) => workspace.isDefault || specific === undefined || workspace.domain === specific,
        );
        if (
          specific !== undefined &&
          !targets.some((workspace) => workspace.autoGroup && workspace.domain === specific)
        ) {
          throw new AppError(
            'not_found',
            `specific_domain: no workspace with auto_group has the domain ${JSON.stringify(specific)}.`,
            { field: 'specific_domain' },
          );
        }
        const candidates = await tx
          .select({
            id: tables.grants.id,
            email: tables.grants.email,
            createdAt: tables.grants.createdAt,
            status: tables.grants.grantStatus,
          })
          .from(tables.grants)
          .where(
            and(
              eq(tables.grants.applicationId, principal.applicationId),
              or(isNull(tables.grants.workspaceId), eq(tables.grants.workspaceId, fallback.id)),
            ),
          );
        const byWorkspace = new Map<string, string[]>();
        for (const grant of candidates) {
          if (input.after_created_at !== undefined && grant.createdAt < input.after_created_at) continue;
          if (!input.invalid_also && grant.status !== 'valid') continue;
          const chosen = chooseWorkspace({
            applicationId: principal.applicationId,
            email: grant.email,
            requestedWorkspaceId: undefined,
            workspaces: targets,
          });
          if (chosen === fallback.id) continue;
          byWorkspace.set(chosen, [...(byWorkspace.get(chosen) ?? []), grant.id]);
        }
        const at = now();
        for (const [workspaceId, grantIds] of byWorkspace)
          await moveGrants(tx, principal.applicationId, grantIds, workspaceId, at);
        return {
          grants: [...byWorkspace.values()].reduce((sum, ids) => sum + ids.length, 0),
          workspaces: byWorkspace.size,
        };
      });
      return {
        job_id: jobId,
        message: `Auto-grouping done: ${moved.grants} grant(s) moved into ${moved.workspaces} workspace(s).`,
      };
    },

    /**
     * Moves grants into the workspace (`assign_grants`) and out of it to the default workspace (`remove_grants`).
     * A grant that is not this application's is a 404 and nothing moves; removing a grant that is not in the
     * workspace leaves it where it is (it is not listed in `grants_removed`).
     */
    async manualAssign(principal: Principal, input: ManualAssignInput): Promise<ManualAssignResult> {
      return write(async (tx) => {
        const workspace = await requireOwnedRow(tx, 'workspace', principal.applicationId, input.workspace_id);
        const assign = unique(input.assign_grants ?? []);
        const remove = unique(input.remove_grants ?? []);
        if (workspace.isDefault && remove.length > 0)
          throw invalid(
            'remove_grants',
            'grants cannot be removed from the default workspace; assign them to another workspace instead.',
          );
        const both = assign.filter((id) => remove.includes(id));
        if (both.length > 0)
          throw invalid('remove_grants', `grant ${JSON.stringify(both[0])} is both assigned and removed.`);
        const named = [...assign, ...remove];
        const rows =
          named.length === 0
            ? []
            : await tx
                .select({ id: tables.grants.id, workspaceId: tables.grants.workspaceId })
                .from(tables.grants)
                .where(and(eq(tables.grants.applicationId, principal.applicationId), inArray(tables.grants.id, named)));
        const found = new Map(rows.map((row) => [row.id, row.workspaceId]));
        const missing = named.find((id) => !found.has(id));
        if (missing !== undefined)
          throw new AppError(
            'not_found',
            `${assign.includes(missing) ? 'assign_grants' : 'remove_grants'}: ${notFound('Grant', missing).message}`,
          );
        const removed = remove.filter((id) => found.get(id) === workspace.id);
        const at = now();
        await moveGrants(tx, principal.applicationId, assign, workspace.id, at);
        if (removed.length > 0)
          await moveGrants(tx, principal.applicationId, removed, (await defaultOf(tx, principal.applicationId)).id, at);
        return {
          application_id: principal.applicationId,
          workspace_id: workspace.id,
          domain: workspace.domain ?? '',
          grants_assigned: input.assign_grants !== undefined ? assign : null,
          grants_removed: input.remove_grants !== undefined ? removed : null,
        };
      });
    },
  };
}
