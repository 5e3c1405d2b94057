/**
 * @module admin/workspace-writes
 * The workspace service's writes (./workspace-service.ts): create, update and delete a workspace.
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError, invalid } from '../errors.js';
import type { CreateWorkspaceInput, UpdateWorkspaceInput, Workspace } from '../schemas/admin.js';
import { requireOwned, requireOwnedRow, unique } from './ownership.js';
import { announceMoves, defaultOf, toWorkspace, type WorkspaceState } from './workspace-state.js';

/** The fields of the default workspace that can change. */
const DEFAULT_MUTABLE = ['policy_id', 'rule_ids'] as const;

/** Creates a (non-default) workspace; `auto_group` defaults to true when a domain is given. */
export async function createWorkspace(
  state: WorkspaceState,
  principal: Principal,
  input: CreateWorkspaceInput,
): Promise<Workspace> {
  const at = state.now();
  return toWorkspace(
    await state.write(async (tx) => {
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
          id: state.newId(),
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
}

/** Changes a workspace (PATCH: only the fields given; null clears policy_id or rule_ids). */
export async function updateWorkspace(
  state: WorkspaceState,
  principal: Principal,
  input: UpdateWorkspaceInput,
): Promise<Workspace> {
  return toWorkspace(
    await state.write(async (tx) => {
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
      if (input.policy_id) await requireOwned(tx, principal.applicationId, 'policy', [input.policy_id], 'policy_id');
      if (input.rule_ids) await requireOwned(tx, principal.applicationId, 'rule', input.rule_ids, 'rule_ids');
      const [row] = await tx
        .update(tables.workspaces)
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.domain !== undefined ? { domain: input.domain.toLowerCase() } : {}),
          ...(input.auto_group !== undefined ? { autoGroup: input.auto_group } : {}),
          ...(input.policy_id !== undefined ? { policyId: input.policy_id } : {}),
          ...(input.rule_ids !== undefined ? { ruleIds: unique(input.rule_ids ?? []) } : {}),
          updatedAt: state.now(),
        })
        .where(eq(tables.workspaces.id, current.id))
        .returning();
      return row!;
    }),
  );
}

/** Deletes a workspace; its grants move to the default workspace. The default workspace cannot be deleted. */
export async function destroyWorkspace(
  state: WorkspaceState,
  principal: Principal,
  workspaceId: string,
): Promise<void> {
  await state.write(async (tx) => {
    const current = await requireOwnedRow(tx, 'workspace', principal.applicationId, workspaceId);
    if (current.isDefault) throw invalid('workspace_id', 'the default workspace cannot be deleted.');
    const fallback = await defaultOf(tx, principal.applicationId);
    const moved = await tx
      .update(tables.grants)
      .set({ workspaceId: fallback.id, updatedAt: state.now() })
      .where(and(eq(tables.grants.applicationId, principal.applicationId), eq(tables.grants.workspaceId, current.id)))
      .returning();
    await announceMoves(state, tx, moved);
    await tx.delete(tables.workspaces).where(eq(tables.workspaces.id, current.id));
  });
}
