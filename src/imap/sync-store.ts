/**
 * @module imap/sync-store
 * The reads and writes of the sync (./sync.ts) that go past drizzle's query builder: the links of a folder's
 * messages, the orphans they leave, the jobs still to push, and the initial sync's counters.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import { imapAccounts, imapFolders, imapMessages } from '../../storage/schema/connected.js';
import type { MessageRow } from '../messages/index.js';
import type { AccountRow, SyncState } from './sync-state.js';

type Db = SyncState['db'];

/** A message with no link to any folder of its account's server. */
const unlinked = () => sql`not exists (select 1 from imap_messages l where l.message_id = ${tables.messages.id})`;

/** Deletes the links of (path, uids); a message left without a link is deleted for good. */
export async function unlinkAndPrune(
  state: Pick<SyncState, 'parts'>,
  tx: Tx,
  account: Pick<AccountRow, 'grantId'>,
  applicationId: string,
  path: string,
  uids: readonly number[] | 'all',
): Promise<void> {
  const where =
    uids === 'all'
      ? and(eq(imapMessages.grantId, account.grantId), eq(imapMessages.path, path))
      : and(
          eq(imapMessages.grantId, account.grantId),
          eq(imapMessages.path, path),
          inArray(imapMessages.uid, [...uids]),
        );
  const removed = await tx.delete(imapMessages).where(where).returning({ messageId: imapMessages.messageId });
  if (removed.length === 0) return;
  const ids = [...new Set(removed.map((row) => row.messageId))];
  for (let index = 0; index < ids.length; index += 200) {
    const slice = ids.slice(index, index + 200);
    const orphans: MessageRow[] = await tx
      .select()
      .from(tables.messages)
      .where(and(inArray(tables.messages.id, slice), unlinked()));
    if (orphans.length > 0) await state.parts.destroyForGood(tx, applicationId, orphans);
  }
}

/** Whether changes made through the API still wait to reach the account's server (`imap.push` jobs). */
export async function pushPending(db: Db, grantId: string): Promise<boolean> {
  const rows = await db.orm.all<{ one: number }>(
    sql`select 1 as one from jobs where order_key = ${`imap ${grantId}`} and dead_at is null limit 1`,
  );
  return rows.length > 0;
}

/** UIDs of `uids` already linked in the folder `path`. */
export async function linkedAmong(
  db: Db,
  grantId: string,
  path: string,
  uids: readonly number[],
): Promise<Set<number>> {
  const found = new Set<number>();
  for (let index = 0; index < uids.length; index += 500) {
    const rows = await db.orm
      .select({ uid: imapMessages.uid })
      .from(imapMessages)
      .where(
        and(
          eq(imapMessages.grantId, grantId),
          eq(imapMessages.path, path),
          inArray(imapMessages.uid, uids.slice(index, index + 500)),
        ),
      );
    for (const row of rows) found.add(row.uid);
  }
  return found;
}

/** A message of the grant with Message-ID `headerId` and no link to the server yet. */
export async function unlinkedOwnMessage(
  tx: Tx,
  grantId: string,
  headerId: string,
): Promise<{ id: string } | undefined> {
  const [own] = await tx
    .select({ id: tables.messages.id })
    .from(tables.messages)
    .where(and(eq(tables.messages.grantId, grantId), eq(tables.messages.headerMessageId, headerId), unlinked()))
    .limit(1);
  return own;
}

/** The lowest UID linked in the folder `path`, or null when it has none. */
export async function lowestLinkedUid(db: Db, grantId: string, path: string): Promise<number | null> {
  const [bounds] = await db.orm
    .select({ low: sql<number | null>`min(${imapMessages.uid})` })
    .from(imapMessages)
    .where(and(eq(imapMessages.grantId, grantId), eq(imapMessages.path, path)));
  return bounds?.low ?? null;
}

/**
 * The start of a folder's initial sync: its window (`floor` up to `lowest`), where new mail starts, and `todo` more
 * messages for the account's progress.
 */
export async function markInitialWindow(
  tx: Tx,
  grantId: string,
  path: string,
  window: { floor: number; lowest: number; uidNext: number; highestModseq: string | null; todo: number },
  at: { seconds: number; ms: number },
): Promise<void> {
  await tx
    .update(imapFolders)
    .set({
      initialFloorUid: window.floor,
      initialLowestUid: window.lowest,
      uidNext: window.uidNext,
      highestModseq: window.highestModseq,
      updatedAt: at.seconds,
    })
    .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.path, path)));
  await tx
    .update(imapAccounts)
    .set({ syncTotal: sql`${imapAccounts.syncTotal} + ${window.todo}`, updatedAt: at.ms })
    .where(eq(imapAccounts.grantId, grantId));
}

/**
 * The progress of a folder's initial sync: its resume point (`lowest`), done or not, and `count` more messages done
 * for the account (never past its total).
 */
export async function recordInitialProgress(
  tx: Tx,
  grantId: string,
  path: string,
  progress: { lowest: number; done: boolean; count: number },
  at: { seconds: number; ms: number },
): Promise<void> {
  await tx
    .update(imapFolders)
    .set({
      initialLowestUid: progress.lowest,
      ...(progress.done ? { initialDone: true } : {}),
      updatedAt: at.seconds,
    })
    .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.path, path)));
  if (progress.count > 0)
    await tx
      .update(imapAccounts)
      .set({
        syncDone: sql`min(${imapAccounts.syncTotal}, ${imapAccounts.syncDone} + ${progress.count})`,
        updatedAt: at.ms,
      })
      .where(eq(imapAccounts.grantId, grantId));
}

/** The account's initial sync is complete: its progress shows every message done. */
export async function markSyncDone(tx: Tx, grantId: string): Promise<void> {
  await tx
    .update(imapAccounts)
    .set({ syncDone: sql`${imapAccounts.syncTotal}` })
    .where(eq(imapAccounts.grantId, grantId));
}
