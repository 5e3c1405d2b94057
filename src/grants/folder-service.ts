/**
 * @module grants/folder-service
 * A grant's folders: the six system folders (fixed) and folders the user makes.
 */
import { and, asc, eq, gt, or, type SQL } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import { deletedEvent, eventRecorder } from '../outbox/index.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { CreateFolderInput, Folder, ListFoldersInput, UpdateFolderInput } from '../schemas/folders.js';
import type { FolderService, GrantService } from './contracts.js';
import { folderAttributes } from './grant-service.js';
import { childCountsOf, lastSortOrderOf } from './folder-store.js';

type FolderRow = typeof tables.folders.$inferSelect;

/** Sort position of the first folder a user makes; system folders take 0–5 (storage/schema/grants.ts). */
const FIRST_USER_SORT_ORDER = 1000;

/** Message counts of one folder. */
export interface FolderCounts {
  total: number;
  unread: number;
}

/** Where folder message counts come from (the mail store); a grant with no mail has none. */
export type FolderCounter = (grantId: string, folderIds: string[]) => Promise<Map<string, FolderCounts>>;

/** Maps a folder row and its counts to the wire form. */
export function toFolder(row: FolderRow, counts: FolderCounts | undefined, childCount: number): Folder {
  return {
    id: row.id,
    grant_id: row.grantId,
    object: 'folder',
    name: row.name,
    system_folder: row.systemRole !== null,
    attributes: folderAttributes(row.systemRole),
    ...(row.parentId !== null ? { parent_id: row.parentId } : {}),
    ...(row.textColor !== null ? { text_color: row.textColor } : {}),
    ...(row.backgroundColor !== null ? { background_color: row.backgroundColor } : {}),
    total_count: counts?.total ?? 0,
    unread_count: counts?.unread ?? 0,
    child_count: childCount,
  };
}

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
  const record = eventRecorder({ newId, clock });
  const now = () => unixSeconds(clock.now());

  async function present(rows: FolderRow[]): Promise<Folder[]> {
    const first = rows[0];
    if (!first) return [];
    const ids = rows.map((row) => row.id);
    const counts = await countMessages(first.grantId, ids);
    const childCounts = await childCountsOf(db.orm, first.grantId);
    return rows.map((row) => toFolder(row, counts.get(row.id), childCounts.get(row.id) ?? 0));
  }

  async function requireFolder(grantId: string, folderId: string): Promise<FolderRow> {
    const row = await db.orm.query.folders.findFirst({
      where: and(eq(tables.folders.grantId, grantId), eq(tables.folders.id, folderId)),
    });
    if (!row) throw notFound('Folder', folderId);
    return row;
  }

  /** The parent must exist in the same mailbox, and (when moving `selfId`) must not be the folder or one below it. */
  async function checkParent(grantId: string, parentId: string | undefined, selfId?: string) {
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
        { field: 'parent_id' },
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

  function nameTaken(error: unknown): boolean {
    const text = String((error as { cause?: unknown })?.cause ?? error);
    return text.includes('UNIQUE') && text.includes('folders');
  }

  return {
    /** A page of the grant's folders: system folders first, then the user's in creation order. */
    async list(principal: Principal, input: ListFoldersInput): Promise<{ data: Folder[]; next_cursor?: string }> {
      const grant = await grants.require(principal, input.grant_id);
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
      const rows = await db.orm
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
      return { ...page, data: await present(page.data) };
    },

    /** One folder. */
    async find(principal: Principal, input: { grant_id: string; folder_id: string }): Promise<Folder> {
      const grant = await grants.require(principal, input.grant_id);
      const [folder] = await present([await requireFolder(grant.id, input.folder_id)]);
      return folder!;
    },

    /** Makes a folder; names are unique in a mailbox (409 otherwise). */
    async create(principal: Principal, input: CreateFolderInput): Promise<Folder> {
      const grant = await grants.require(principal, input.grant_id);
      await checkParent(grant.id, input.parent_id);
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
          const [folder] = await present([inserted!]);
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
        .catch((error: unknown) => {
          if (nameTaken(error))
            throw new AppError('conflict', `name: a folder named ${JSON.stringify(input.name)} already exists.`, {
              field: 'name',
            });
          throw error;
        });
      return row;
    },

    /** Renames, moves or recolours a folder. System folders keep their name and place. */
    async update(principal: Principal, input: UpdateFolderInput): Promise<Folder> {
      const grant = await grants.require(principal, input.grant_id);
      const current = await requireFolder(grant.id, input.folder_id);
      if (
        current.systemRole !== null &&
        ((input.name !== undefined && input.name !== current.name) || input.parent_id !== undefined)
      ) {
        throw new AppError(
          'invalid_request',
          `name: ${current.name} is a system folder; it cannot be renamed or moved.`,
          { field: 'name' },
        );
      }
      await checkParent(grant.id, input.parent_id, current.id);
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
          const [folder] = await present([row!]);
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
        .catch((error: unknown) => {
          if (nameTaken(error))
            throw new AppError('conflict', `name: a folder named ${JSON.stringify(input.name)} already exists.`, {
              field: 'name',
            });
          throw error;
        });
    },

    /** Deletes a folder the user made; system folders cannot be deleted. */
    async destroy(principal: Principal, input: { grant_id: string; folder_id: string }): Promise<void> {
      const grant = await grants.require(principal, input.grant_id);
      const current = await requireFolder(grant.id, input.folder_id);
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
        await tx
          .delete(tables.folders)
          .where(and(eq(tables.folders.grantId, grant.id), eq(tables.folders.id, current.id)));
        await record(tx, deletedEvent(principal.applicationId, grant.id, 'folder', current.id));
      });
    },
  };
}

export type { FolderService } from './contracts.js';
