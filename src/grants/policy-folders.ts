/**
 * @module grants/policy-folders
 * The folders a policy adds to every mailbox under it (`options.additional_folders`): created with the mailbox
 * when it is placed in a workspace whose policy names them (grant-service.ts), and for mailboxes already there by
 * the periodic reconcile (admin/policy-upkeep.ts) when a workspace gets the policy or the policy's options change.
 * A folder is matched by name: one the user already has (or made and renamed back) is left as it is; one the user
 * deleted comes back at the next reconcile while the policy asks for it.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { SYSTEM_FOLDERS, tables, type Executor, type StoredPolicyOptions, type Tx } from '../../storage/index.js';
import type { IdGenerator } from '../ports/index.js';
import { lastSortOrderOf } from './folder-store.js';

/** Sort position of the first folder a user makes (as in folder-service.ts); system folders take 0–5. */
const FIRST_USER_SORT_ORDER = 1000;
/** Folder names longer than this are ignored (the folder API's limit). */
const MAX_FOLDER_NAME = 1024;

type FolderRow = typeof tables.folders.$inferSelect;

/** The folder names a policy's options ask for: trimmed, non-empty, once each, never a system folder's name. */
export function additionalFolderNames(options: StoredPolicyOptions | undefined): string[] {
  const names: string[] = [];
  for (const raw of options?.additional_folders ?? []) {
    const name = typeof raw === 'string' ? raw.trim() : '';
    if (
      name === '' ||
      name.length > MAX_FOLDER_NAME ||
      (SYSTEM_FOLDERS as readonly string[]).includes(name.toLowerCase())
    )
      continue;
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** The additional folders of the policy of a workspace (`null`: the application's default workspace). */
export async function policyFolderNames(
  db: Executor,
  applicationId: string,
  workspaceId: string | null,
): Promise<string[]> {
  const [row] = await db
    .select({ options: tables.policies.options })
    .from(tables.workspaces)
    .innerJoin(
      tables.policies,
      and(eq(tables.policies.id, tables.workspaces.policyId), eq(tables.policies.applicationId, applicationId)),
    )
    .where(
      and(
        eq(tables.workspaces.applicationId, applicationId),
        workspaceId === null ? eq(tables.workspaces.isDefault, true) : eq(tables.workspaces.id, workspaceId),
      ),
    )
    .limit(1);
  return additionalFolderNames(row?.options);
}

/** Creates the folders of `names` that the grant does not have yet (by name). Returns the rows created. */
export async function addMissingFolders(
  tx: Tx,
  grantId: string,
  names: readonly string[],
  at: number,
  newId: IdGenerator,
): Promise<FolderRow[]> {
  if (names.length === 0) return [];
  const existing = new Set(
    (
      await tx
        .select({ name: tables.folders.name })
        .from(tables.folders)
        .where(and(eq(tables.folders.grantId, grantId), inArray(tables.folders.name, [...names])))
    ).map((row) => row.name),
  );
  const missing = names.filter((name) => !existing.has(name));
  if (missing.length === 0) return [];
  let order = Math.max(FIRST_USER_SORT_ORDER, ((await lastSortOrderOf(tx, grantId)) ?? 0) + 1);
  const rows = missing.map((name) => ({
    id: newId(),
    grantId,
    name,
    sortOrder: order++,
    createdAt: at,
    updatedAt: at,
  }));
  return tx.insert(tables.folders).values(rows).returning();
}
