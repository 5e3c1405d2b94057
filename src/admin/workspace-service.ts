/**
 * @module admin/workspace-service
 * Workspaces (`/v3/workspaces`): an application's groups of grants, each naming one policy and some rules.
 * - Every application has exactly one default workspace, made with the application. It cannot be deleted, and only
 *   its `policy_id` and `rule_ids` can change (any other field is a 400 that says so).
 * - Deleting a workspace moves its grants to the default workspace.
 * - `auto-group` places the grants still in the default workspace by the placement order of new accounts
 *   (../grants/placement.ts); it runs inline and answers when done.
 * - `manual-assign` moves named grants in (from anywhere) or out (to the default workspace).
 *
 * The service is plain functions over a small state made here: its writes (./workspace-writes.ts), its moves of
 * grants (./workspace-grouping.ts) and what they share (./workspace-state.ts).
 */
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { unixSeconds } from '../time.js';
import type { CoreDeps } from '../ports/index.js';
import { eventRecorder } from '../outbox/index.js';
import type {
  AutoGroupInput,
  CreateWorkspaceInput,
  ManualAssignInput,
  ManualAssignResult,
  UpdateWorkspaceInput,
  Workspace,
} from '../schemas/admin.js';
import type { WorkspaceService } from './contracts.js';
import { adminWriter, requireOwnedRow } from './ownership.js';
import { autoGroup, manualAssign } from './workspace-grouping.js';
import { toWorkspace, type WorkspaceState } from './workspace-state.js';
import { createWorkspace, destroyWorkspace, updateWorkspace } from './workspace-writes.js';

/** Creates the workspace service; `invalidate` runs after every write (enforcement caches). */
export function createWorkspaceService({ db, clock, newId }: CoreDeps, invalidate: () => void): WorkspaceService {
  const state: WorkspaceState = {
    db,
    newId,
    now: () => unixSeconds(clock.now()),
    record: eventRecorder({ newId, clock }),
    write: adminWriter(db, invalidate),
  };

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
    create: (principal: Principal, input: CreateWorkspaceInput): Promise<Workspace> =>
      createWorkspace(state, principal, input),

    /** Changes a workspace (PATCH: only the fields given; null clears policy_id or rule_ids). */
    update: (principal: Principal, input: UpdateWorkspaceInput): Promise<Workspace> =>
      updateWorkspace(state, principal, input),

    /** Deletes a workspace; its grants move to the default workspace. The default workspace cannot be deleted. */
    destroy: (principal: Principal, workspaceId: string): Promise<void> =>
      destroyWorkspace(state, principal, workspaceId),

    /**
     * Places the grants still in the default workspace (or in none) by the placement order: a workspace with
     * `auto_group` whose domain is the grant's. Filters: created at or after `after_created_at`, valid grants
     * only unless `invalid_also`, and only the workspace of `specific_domain` when given.
     */
    autoGroup: (principal: Principal, input: AutoGroupInput): Promise<{ job_id: string; message: string }> =>
      autoGroup(state, principal, input),

    /**
     * Moves grants into the workspace (`assign_grants`) and out of it to the default workspace (`remove_grants`).
     * A grant that is not this application's is a 404 and nothing moves; removing a grant that is not in the
     * workspace leaves it where it is (it is not listed in `grants_removed`).
     */
    manualAssign: (principal: Principal, input: ManualAssignInput): Promise<ManualAssignResult> =>
      manualAssign(state, principal, input),
  };
}
