/**
 * @module grants/folder-service
 * A grant's folders: the six system folders (fixed) and folders the user makes.
 *
 * The service is plain functions over a small state made here: its reads (./folder-reads.ts), its changes
 * (./folder-writes.ts), what they share (./folder-state.ts), the wire form (./folder-mapper.ts) and the aggregates of
 * rows (./folder-store.ts).
 */
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import type { CreateFolderInput, ListFoldersInput, UpdateFolderInput } from '../schemas/folders.js';
import type { FolderCounter, FolderService, GrantService } from './contracts.js';
import { toFolder, type FolderRow } from './folder-mapper.js';
import { findFolder, listFolders } from './folder-reads.js';
import { FIRST_USER_SORT_ORDER, type FolderState } from './folder-state.js';
import { createFolder, destroyFolder, updateFolder } from './folder-writes.js';

/**
 * The ids of a mailbox's folders named `names` (a system folder by its name or role, any case; another folder by its
 * exact name, else one whose name differs only in case), making the missing ones as the user would (with their
 * `folder.created` event). For mail rules (`assign_to_folder`), which name folders rather than point at them.
 */
export async function ensureFoldersByName(
  { db, clock, newId }: Pick<CoreDeps, 'db' | 'clock' | 'newId'>,
  grant: { id: string; applicationId: string },
  names: readonly string[],
): Promise<string[]> {
  const find = (rows: FolderRow[], name: string) =>
    rows.find((row) => row.name === name) ??
    rows.find((row) => row.name.toLowerCase() === name.toLowerCase() || row.systemRole === name.toLowerCase());
  const existing = await db.orm.select().from(tables.folders).where(eq(tables.folders.grantId, grant.id));
  if (names.every((name) => find(existing, name))) return names.map((name) => find(existing, name)!.id);
  const record = eventRecorder({ newId, clock });
  return db.write(async (tx) => {
    const rows = await tx.select().from(tables.folders).where(eq(tables.folders.grantId, grant.id));
    const ids: string[] = [];
    for (const name of names) {
      const found = find(rows, name);
      if (found) {
        ids.push(found.id);
        continue;
      }
      const at = unixSeconds(clock.now());
      const sortOrder = Math.max(FIRST_USER_SORT_ORDER, ...rows.map((row) => row.sortOrder + 1));
      const [inserted] = await tx
        .insert(tables.folders)
        .values({ id: newId(), grantId: grant.id, name, sortOrder, createdAt: at, updatedAt: at })
        .returning();
      rows.push(inserted!);
      ids.push(inserted!.id);
      await record(tx, {
        applicationId: grant.applicationId,
        grantId: grant.id,
        type: 'folder.created',
        objectId: inserted!.id,
        object: toFolder(inserted!, undefined, 0),
        createdAt: at,
      });
    }
    return ids;
  });
}

/** Creates the folder service. `countMessages` is supplied by the mail store. */
export function createFolderService(
  { db, clock, newId }: CoreDeps,
  grants: GrantService,
  countMessages: FolderCounter,
): FolderService {
  const state: FolderState = {
    db,
    newId,
    grants,
    countMessages,
    record: eventRecorder({ newId, clock }),
    now: () => unixSeconds(clock.now()),
  };

  return {
    /** A page of the grant's folders: system folders first, then the user's in creation order. */
    list: (principal: Principal, input: ListFoldersInput) => listFolders(state, principal, input),

    /** One folder. */
    find: (principal: Principal, input: { grant_id: string; folder_id: string }) => findFolder(state, principal, input),

    /** Makes a folder; names are unique in a mailbox (409 otherwise). */
    create: (principal: Principal, input: CreateFolderInput) => createFolder(state, principal, input),

    /** Renames, moves or recolours a folder. System folders keep their name and place. */
    update: (principal: Principal, input: UpdateFolderInput) => updateFolder(state, principal, input),

    /** Deletes a folder the user made; system folders cannot be deleted. */
    destroy: (principal: Principal, input: { grant_id: string; folder_id: string }) =>
      destroyFolder(state, principal, input),
  };
}
