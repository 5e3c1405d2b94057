/**
 * @module admin/workspace-state
 * What the workspace service's writes (./workspace-writes.ts) and grouping (./workspace-grouping.ts) share: the state
 * `createWorkspaceService` makes, a row in wire form, the default workspace of an application, and moving grants
 * between workspaces with their `grant.updated` notifications.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError } from '../errors.js';
import type { eventRecorder } from '../outbox/index.js';
import { accountsOf, toGrant } from '../grants/index.js';
import type { Workspace } from '../schemas/admin.js';
import type { adminWriter } from './ownership.js';

export type WorkspaceRow = typeof tables.workspaces.$inferSelect;

/** What the functions of the workspace service share, made once by `createWorkspaceService`. */
export interface WorkspaceState {
  db: CoreDeps['db'];
  newId: CoreDeps['newId'];
  /** The clock's time in unix seconds. */
  now: () => number;
  record: ReturnType<typeof eventRecorder>;
  /** One write transaction, then the enforcement caches are invalidated (./ownership.ts). */
  write: ReturnType<typeof adminWriter>;
}

/** A row in wire form. */
export function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    workspace_id: row.id,
    application_id: row.applicationId,
    name: row.name,
    // Always present, as the Nylas SDK's Workspace model requires: "" for a workspace without a domain.
    domain: row.domain ?? '',
    auto_group: row.autoGroup,
    default: row.isDefault,
    ...(row.policyId !== null ? { policy_id: row.policyId } : {}),
    rule_ids: row.ruleIds,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** A `grant.updated` notification for each grant that moved (its `workspace_id` changed). */
export async function announceMoves(state: WorkspaceState, tx: Tx, rows: readonly GrantRow[]): Promise<void> {
  const accounts = await accountsOf(tx, rows);
  for (const row of rows)
    await state.record(tx, {
      applicationId: row.applicationId,
      grantId: row.id,
      type: 'grant.updated',
      objectId: row.id,
      object: toGrant(row, accounts.get(row.id)),
      createdAt: row.updatedAt,
    });
}

export async function defaultOf(tx: Tx, applicationId: string): Promise<WorkspaceRow> {
  const [row] = await tx
    .select()
    .from(tables.workspaces)
    .where(and(eq(tables.workspaces.applicationId, applicationId), eq(tables.workspaces.isDefault, true)));
  if (!row) throw new AppError('internal', 'The application has no default workspace.');
  return row;
}

/** Moves grants of the application to a workspace; returns the ids moved. */
export async function moveGrants(
  state: WorkspaceState,
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
    await announceMoves(state, tx, moved);
  }
}
