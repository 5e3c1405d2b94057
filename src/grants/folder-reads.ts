/**
 * @module grants/folder-reads
 * The folder service's reads (./folder-service.ts): a page of a grant's folders, and one folder.
 */
import { and, asc, eq, gt, or, type SQL } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { Folder, ListFoldersInput } from '../schemas/folders.js';
import { present, requireFolder, type FolderState } from './folder-state.js';

/** A page of the grant's folders: system folders first, then the user's in creation order. */
export async function listFolders(
  state: FolderState,
  principal: Principal,
  input: ListFoldersInput,
): Promise<{ data: Folder[]; next_cursor?: string }> {
  const grant = await state.grants.require(principal, input.grant_id);
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const after = decodeCursor(input.page_token, 3);
  const conditions: (SQL | undefined)[] = [eq(tables.folders.grantId, grant.id)];
  if (input.parent_id !== undefined) conditions.push(eq(tables.folders.parentId, input.parent_id));
  if (after) {
    const [order, created, id] = after as [number, number, string];
    conditions.push(
      or(
        gt(tables.folders.sortOrder, order),
        and(eq(tables.folders.sortOrder, order), gt(tables.folders.createdAt, created)),
        and(eq(tables.folders.sortOrder, order), eq(tables.folders.createdAt, created), gt(tables.folders.id, id)),
      ),
    );
  }
  const rows = await state.db.orm
    .select()
    .from(tables.folders)
    .where(and(...conditions))
    .orderBy(asc(tables.folders.sortOrder), asc(tables.folders.createdAt), asc(tables.folders.id))
    .limit(limit + 1);
  const page = toPage(
    rows,
    limit,
    (row) => [row.sortOrder, row.createdAt, row.id],
    (row) => row,
  );
  return { ...page, data: await present(state, page.data) };
}

/** One folder. */
export async function findFolder(
  state: FolderState,
  principal: Principal,
  input: { grant_id: string; folder_id: string },
): Promise<Folder> {
  const grant = await state.grants.require(principal, input.grant_id);
  const [folder] = await present(state, [await requireFolder(state, grant.id, input.folder_id)]);
  return folder!;
}
