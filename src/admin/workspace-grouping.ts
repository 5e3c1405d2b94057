/**
 * @module admin/workspace-grouping
 * The workspace service's moves of grants (./workspace-service.ts): `auto-group` by the placement order of new
 * accounts (../grants/placement.ts) and `manual-assign` of named grants.
 */
import { and, eq, inArray, isNull, or } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError, invalid, notFound } from '../errors.js';
import { chooseWorkspace } from '../grants/index.js';
import type { AutoGroupInput, ManualAssignInput, ManualAssignResult } from '../schemas/admin.js';
import { requireOwnedRow, unique } from './ownership.js';
import { defaultOf, moveGrants, type WorkspaceState } from './workspace-state.js';

/**
 * Places the grants still in the default workspace (or in none) by the placement order: a workspace with
 * `auto_group` whose domain is the grant's. Filters: created at or after `after_created_at`, valid grants
 * only unless `invalid_also`, and only the workspace of `specific_domain` when given.
 */
export async function autoGroup(
  state: WorkspaceState,
  principal: Principal,
  input: AutoGroupInput,
): Promise<{ job_id: string; message: string }> {
  const jobId = state.newId();
  const moved = await state.write(async (tx) => {
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
    if (specific !== undefined && !targets.some((workspace) => workspace.autoGroup && workspace.domain === specific)) {
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
    const at = state.now();
    for (const [workspaceId, grantIds] of byWorkspace)
      await moveGrants(state, tx, principal.applicationId, grantIds, workspaceId, at);
    return {
      grants: [...byWorkspace.values()].reduce((sum, ids) => sum + ids.length, 0),
      workspaces: byWorkspace.size,
    };
  });
  return {
    job_id: jobId,
    message: `Auto-grouping done: ${moved.grants} grant(s) moved into ${moved.workspaces} workspace(s).`,
  };
}

/**
 * Moves grants into the workspace (`assign_grants`) and out of it to the default workspace (`remove_grants`).
 * A grant that is not this application's is a 404 and nothing moves; removing a grant that is not in the
 * workspace leaves it where it is (it is not listed in `grants_removed`).
 */
export async function manualAssign(
  state: WorkspaceState,
  principal: Principal,
  input: ManualAssignInput,
): Promise<ManualAssignResult> {
  return state.write(async (tx) => {
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
    const at = state.now();
    await moveGrants(state, tx, principal.applicationId, assign, workspace.id, at);
    if (removed.length > 0)
      await moveGrants(
        state,
        tx,
        principal.applicationId,
        removed,
        (await defaultOf(tx, principal.applicationId)).id,
        at,
      );
    return {
      application_id: principal.applicationId,
      workspace_id: workspace.id,
      domain: workspace.domain ?? '',
      grants_assigned: input.assign_grants !== undefined ? assign : null,
      grants_removed: input.remove_grants !== undefined ? removed : null,
    };
  });
}
