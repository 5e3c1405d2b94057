/**
 * @module grants/folder-writes
 * The folder service's changes (./folder-service.ts): making, renaming, moving or recolouring, and deleting a folder,
 * each with its outbox event in the same transaction.
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import { deletedEvent } from '../outbox/index.js';
import type { CreateFolderInput, Folder, UpdateFolderInput } from '../schemas/folders.js';
import { lastSortOrderOf } from './folder-store.js';
import {
  checkParent,
  FIRST_USER_SORT_ORDER,
  nameConflict,
  present,
  requireFolder,
  type FolderState,
} from './folder-state.js';

/** Makes a folder; names are unique in a mailbox (409 otherwise). */
export async function createFolder(
  state: FolderState,
  principal: Principal,
  input: CreateFolderInput,
): Promise<Folder> {
  const { db, newId, record, now } = state;
  const grant = await state.grants.require(principal, input.grant_id);
  await checkParent(state, grant.id, input.parent_id);
  const at = now();
  const row = await db
    .write(async (tx) => {
      // User folders list in creation order after the system ones: each takes the next sort position.
      const lastSortOrder = await lastSortOrderOf(tx, grant.id);
      const [inserted] = await tx
        .insert(tables.folders)
        .values({
          id: newId(),
          grantId: grant.id,
          name: input.name,
          sortOrder: Math.max(FIRST_USER_SORT_ORDER, (lastSortOrder ?? 0) + 1),
          parentId: input.parent_id ?? null,
          textColor: input.text_color ?? null,
          backgroundColor: input.background_color ?? null,
          createdAt: at,
          updatedAt: at,
        })
        .returning();
      const [folder] = await present(state, [inserted!]);
      await record(tx, {
        applicationId: principal.applicationId,
        grantId: grant.id,
        type: 'folder.created',
        objectId: inserted!.id,
        object: folder!,
        createdAt: at,
      });
      return folder!;
    })
    .catch(nameConflict(input.name));
  return row;
}

/** Renames, moves or recolours a folder. System folders keep their name and place. */
export async function updateFolder(
  state: FolderState,
  principal: Principal,
  input: UpdateFolderInput,
): Promise<Folder> {
  const { db, record, now } = state;
  const grant = await state.grants.require(principal, input.grant_id);
  const current = await requireFolder(state, grant.id, input.folder_id);
  if (
    current.systemRole !== null &&
    ((input.name !== undefined && input.name !== current.name) || input.parent_id !== undefined)
  ) {
    throw new AppError('invalid_request', `name: ${current.name} is a system folder; it cannot be renamed or moved.`, {
      field: 'name',
    });
  }
  await checkParent(state, grant.id, input.parent_id, current.id);
  return db
    .write(async (tx) => {
      const [row] = await tx
        .update(tables.folders)
        .set({
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.parent_id !== undefined ? { parentId: input.parent_id } : {}),
          ...(input.text_color !== undefined ? { textColor: input.text_color } : {}),
          ...(input.background_color !== undefined ? { backgroundColor: input.background_color } : {}),
          updatedAt: now(),
        })
        .where(and(eq(tables.folders.grantId, grant.id), eq(tables.folders.id, current.id)))
        .returning();
      const [folder] = await present(state, [row!]);
      await record(tx, {
        applicationId: principal.applicationId,
        grantId: grant.id,
        type: 'folder.updated',
        objectId: row!.id,
        object: folder!,
        createdAt: row!.updatedAt,
      });
      return folder!;
    })
    .catch(nameConflict(input.name));
}

/** Deletes a folder the user made; system folders cannot be deleted. */
export async function destroyFolder(
  state: FolderState,
  principal: Principal,
  input: { grant_id: string; folder_id: string },
): Promise<void> {
  const { db, record } = state;
  const grant = await state.grants.require(principal, input.grant_id);
  const current = await requireFolder(state, grant.id, input.folder_id);
  if (current.systemRole !== null) {
    throw new AppError('invalid_request', `folder_id: ${current.name} is a system folder; it cannot be deleted.`, {
      field: 'folder_id',
    });
  }
  await db.write(async (tx) => {
    await tx
      .update(tables.folders)
      .set({ parentId: null })
      .where(and(eq(tables.folders.grantId, grant.id), eq(tables.folders.parentId, current.id)));
    await tx.delete(tables.folders).where(and(eq(tables.folders.grantId, grant.id), eq(tables.folders.id, current.id)));
    await record(tx, deletedEvent(principal.applicationId, grant.id, 'folder', current.id));
  });
}
