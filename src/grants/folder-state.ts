/**
 * @module grants/folder-state
 * What the folder service's parts (./folder-service.ts) share: the state `createFolderService` makes, the first sort
 * position of a user's folder, and the reads and checks its reads and writes start from.
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError, notFound } from '../errors.js';
import type { eventRecorder } from '../outbox/index.js';
import type { Folder } from '../schemas/folders.js';
import type { FolderCounter, GrantService } from './contracts.js';
import { toFolder, type FolderRow } from './folder-mapper.js';
import { childCountsOf } from './folder-store.js';

/** Sort position of the first folder a user makes; system folders take 0–5 (storage/schema/grants.ts). */
export const FIRST_USER_SORT_ORDER = 1000;

/** What the functions of the folder service share, made once by `createFolderService`. */
export interface FolderState {
  db: CoreDeps['db'];
  newId: CoreDeps['newId'];
  grants: GrantService;
  /** Message counts of folders (the mail store). */
  countMessages: FolderCounter;
  /** Records an outbox event in a transaction. */
  record: ReturnType<typeof eventRecorder>;
  /** The clock's time in unix seconds. */
  now: () => number;
}

/** Folder rows of one grant in the wire form, with their message counts and numbers of children. */
export async function present({ db, countMessages }: FolderState, rows: FolderRow[]): Promise<Folder[]> {
  const first = rows[0];
  if (!first) return [];
  const ids = rows.map((row) => row.id);
  const counts = await countMessages(first.grantId, ids);
  const childCounts = await childCountsOf(db.orm, first.grantId);
  return rows.map((row) => toFolder(row, counts.get(row.id), childCounts.get(row.id) ?? 0));
}

export async function requireFolder({ db }: FolderState, grantId: string, folderId: string): Promise<FolderRow> {
  const row = await db.orm.query.folders.findFirst({
    where: and(eq(tables.folders.grantId, grantId), eq(tables.folders.id, folderId)),
  });
  if (!row) throw notFound('Folder', folderId);
  return row;
}

/** The parent must exist in the same mailbox, and (when moving `selfId`) must not be the folder or one below it. */
export async function checkParent({ db }: FolderState, grantId: string, parentId: string | undefined, selfId?: string) {
  if (parentId === undefined) return;
  if (parentId === selfId)
    throw new AppError('invalid_request', 'parent_id: a folder cannot be its own parent.', { field: 'parent_id' });
  const parent = await db.orm.query.folders.findFirst({
    where: and(eq(tables.folders.grantId, grantId), eq(tables.folders.id, parentId)),
  });
  if (!parent)
    throw new AppError(
      'invalid_request',
      `parent_id: folder ${JSON.stringify(parentId)} does not exist in this mailbox.`,
      {
        field: 'parent_id',
      },
    );
  if (selfId === undefined) return;
  // Walk up from the new parent: meeting the folder itself would make a cycle. The walk is bounded because the
  // tree has no cycle yet; the guard only protects against a corrupt one.
  let ancestorId = parent.parentId;
  for (let depth = 0; ancestorId !== null && depth < 10_000; depth += 1) {
    if (ancestorId === selfId) {
      throw new AppError(
        'invalid_request',
        `parent_id: folder ${JSON.stringify(parentId)} is inside this folder; a folder cannot move below itself.`,
        { field: 'parent_id' },
      );
    }
    const ancestor = await db.orm.query.folders.findFirst({
      where: and(eq(tables.folders.grantId, grantId), eq(tables.folders.id, ancestorId)),
    });
    ancestorId = ancestor?.parentId ?? null;
  }
}

/** A write that failed on the unique folder name of a mailbox is a 409 naming `name`; any other failure is rethrown. */
export function nameConflict(name: string | undefined) {
  return (error: unknown): never => {
    const text = String((error as { cause?: unknown })?.cause ?? error);
    if (text.includes('UNIQUE') && text.includes('folders'))
      throw new AppError('conflict', `name: a folder named ${JSON.stringify(name)} already exists.`, { field: 'name' });
    throw error;
  };
}
