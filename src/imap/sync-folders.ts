/**
 * @module imap/sync-folders
 * The first phase of a pass (./sync.ts): LIST, and `folders` / `imap_folders` kept in step with what it lists.
 */
import { and, eq } from 'drizzle-orm';
import type { ImapFlow } from 'imapflow';
import { tables } from '../../storage/index.js';
import { imapFolders, imapMessages } from '../../storage/schema/connected.js';
import { deletedEvent } from '../outbox/index.js';
import { toFolder } from '../grants/index.js';
import { mapFolders, ROLE_ORDER, type ListedFolder } from './folders.js';
import type { AccountRow, FolderRow, SyncState } from './sync-state.js';
import { unlinkAndPrune } from './sync-store.js';

/** LIST and keep `folders` / `imap_folders` in step; returns the folders to sync, INBOX and the system ones first. */
export async function syncFolders(
  state: SyncState,
  client: ImapFlow,
  account: AccountRow,
  applicationId: string,
): Promise<FolderRow[]> {
  const { db, newId, record, now } = state;
  const listed = (await client.list()) as unknown as ListedFolder[];
  const mapped = mapFolders(listed);
  const known = await db.orm.select().from(imapFolders).where(eq(imapFolders.grantId, account.grantId));
  const knownByPath = new Map(known.map((row) => [row.path, row]));
  const gone = known.filter((row) => !mapped.some((folder) => folder.path === row.path));
  const added = mapped.filter((folder) => !knownByPath.has(folder.path));
  // A renamed folder keeps its UIDVALIDITY (RFC 3501 allows it, Dovecot and most servers do): one new path with the
  // UIDVALIDITY of exactly one folder gone is that folder.
  const renamed = new Map<string, FolderRow>();
  if (gone.length > 0 && added.length > 0) {
    for (const folder of added) {
      const status = await client.status(folder.path, { uidValidity: true }).catch(() => undefined);
      const validity = status ? status.uidValidity?.toString() : undefined;
      const matches = gone.filter(
        (row) =>
          row.uidValidity !== null &&
          row.uidValidity === validity &&
          !row.folderId.match(/^(inbox|sent|drafts|trash|junk|archive)$/),
      );
      if (validity && matches.length === 1 && ![...renamed.values()].includes(matches[0]!))
        renamed.set(folder.path, matches[0]!);
    }
  }
  const at = now();
  await db.write(async (tx) => {
    for (const row of gone) {
      const target = [...renamed.entries()].find(([, old]) => old === row)?.[0];
      if (target !== undefined) {
        await tx
          .update(imapMessages)
          .set({ path: target })
          .where(and(eq(imapMessages.grantId, account.grantId), eq(imapMessages.path, row.path)));
        await tx
          .update(imapFolders)
          .set({ path: target, updatedAt: at })
          .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, row.path)));
        const [updated] = await tx
          .update(tables.folders)
          .set({ name: target, updatedAt: at })
          .where(and(eq(tables.folders.grantId, account.grantId), eq(tables.folders.id, row.folderId)))
          .returning();
        if (updated)
          await record(tx, {
            applicationId,
            grantId: account.grantId,
            type: 'folder.updated',
            objectId: updated.id,
            object: toFolder(updated, undefined, 0),
            createdAt: at,
          });
        continue;
      }
      await unlinkAndPrune(state, tx, account, applicationId, row.path, 'all');
      await tx.delete(imapFolders).where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, row.path)));
      if (!ROLE_ORDER.includes(row.folderId as (typeof ROLE_ORDER)[number])) {
        await tx
          .delete(tables.folders)
          .where(and(eq(tables.folders.grantId, account.grantId), eq(tables.folders.id, row.folderId)));
        await record(tx, deletedEvent(applicationId, account.grantId, 'folder', row.folderId));
      }
    }
    const existingFolders = await tx
      .select({ id: tables.folders.id, name: tables.folders.name })
      .from(tables.folders)
      .where(eq(tables.folders.grantId, account.grantId));
    const folderIds = new Set(existingFolders.map((row) => row.id));
    const idOfPath = new Map<string, string>([...known.map((row): [string, string] => [row.path, row.folderId])]);
    for (const [path, old] of renamed) idOfPath.set(path, old.folderId);
    for (const folder of mapped) {
      if (!idOfPath.has(folder.path)) idOfPath.set(folder.path, folder.role ?? `f${newId()}`);
    }
    for (const folder of mapped) {
      const id = idOfPath.get(folder.path)!;
      if (!folderIds.has(id)) {
        // A name taken by a folder of another path (the API made it) gets the path's id appended.
        const taken = existingFolders.some((row) => row.name === folder.path);
        const [inserted] = await tx
          .insert(tables.folders)
          .values({
            id,
            grantId: account.grantId,
            name: taken ? `${folder.path} (${id})` : folder.path,
            systemRole: folder.role,
            parentId: folder.parentPath ? (idOfPath.get(folder.parentPath) ?? null) : null,
            sortOrder: folder.role ? ROLE_ORDER.indexOf(folder.role) : 1000,
            createdAt: at,
            updatedAt: at,
          })
          .onConflictDoNothing()
          .returning();
        folderIds.add(id);
        // A folder made on the server after the account was first mapped (those of the first mapping are the
        // mailbox as it was connected: `grant.imap_sync_completed` tells of them).
        if (inserted && known.length > 0)
          await record(tx, {
            applicationId,
            grantId: account.grantId,
            type: 'folder.created',
            objectId: inserted.id,
            object: toFolder(inserted, undefined, 0),
            createdAt: at,
          });
      }
      if (!knownByPath.has(folder.path) && !renamed.has(folder.path)) {
        await tx
          .insert(imapFolders)
          .values({
            grantId: account.grantId,
            path: folder.path,
            folderId: id,
            delimiter: folder.delimiter,
            specialUse: folder.specialUse,
            updatedAt: at,
          })
          .onConflictDoNothing();
      }
    }
  });
  const rows = await db.orm.select().from(imapFolders).where(eq(imapFolders.grantId, account.grantId));
  const rank = (row: FolderRow) => {
    const role = ROLE_ORDER.indexOf(row.folderId as (typeof ROLE_ORDER)[number]);
    return role >= 0 ? role : ROLE_ORDER.length;
  };
  return rows.sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
}
