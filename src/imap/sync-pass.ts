/**
 * @module imap/sync-pass
 * One pass over an account (./sync.ts): its folders listed, then each folder selected, its UIDVALIDITY checked, and
 * its initial sync or its changes; and INBOX selected to wait there.
 */
import { and, eq } from 'drizzle-orm';
import type { ImapFlow, MailboxObject } from 'imapflow';
import { tables } from '../../storage/index.js';
import { imapAccounts, imapFolders } from '../../storage/schema/connected.js';
import { grantOf } from '../grants/index.js';
import {
  expungeLogOf,
  selectLogged,
  type FolderRow,
  type FolderRun,
  type PassOptions,
  type SyncState,
} from './sync-state.js';
import { syncFolders } from './sync-folders.js';
import { initialSync } from './sync-initial.js';
import { incremental } from './sync-changes.js';
import { markSyncDone, unlinkAndPrune } from './sync-store.js';

/** One folder: selected, UIDVALIDITY checked, then its initial sync or its changes. */
async function syncFolder(state: SyncState, run: FolderRun): Promise<void> {
  const { db, logger, now } = state;
  const { client, folder, account } = run;
  // With QRESYNC the SELECT names the folder's last known state, and the server answers with what was expunged
  // since (VANISHED (EARLIER)); a folder that stays selected (INBOX under IDLE) keeps being told of expunges.
  const selecting = !client.mailbox || client.mailbox.path !== folder.path;
  // Selected already (INBOX under IDLE): the lock sends no SELECT, and the log goes on as it is.
  const { opened: lock, expunges } = selecting
    ? await selectLogged(client, folder.path, folder, (options) => client.getMailboxLock(folder.path, options))
    : { opened: await client.getMailboxLock(folder.path), expunges: expungeLogOf(client, folder.path) };
  try {
    const box = client.mailbox;
    if (!box) return;
    run.expunges = expunges.complete ? expunges : undefined;
    // Selected already: a server that holds its expunge news until a command allows it (not every one does) tells it now.
    if (!selecting && run.expunges) await client.noop();
    const validity = box.uidValidity.toString();
    const mailbox = {
      uidNext: box.uidNext,
      highestModseq: box.highestModseq !== undefined && !box.noModseq ? box.highestModseq.toString() : null,
      exists: box.exists,
    };
    // A folder that stayed selected (INBOX under IDLE) has UIDNEXT and HIGHESTMODSEQ as of its SELECT: ask again.
    const status = await client
      .status(folder.path, { uidNext: true, ...(mailbox.highestModseq !== null ? { highestModseq: true } : {}) })
      .catch(() => false as const);
    if (status) {
      if (status.uidNext !== undefined) mailbox.uidNext = Math.max(mailbox.uidNext, status.uidNext);
      if (status.highestModseq !== undefined && mailbox.highestModseq !== null)
        mailbox.highestModseq = status.highestModseq.toString();
    }
    if (folder.uidValidity !== null && folder.uidValidity !== validity) {
      // Every UID of the folder changed meaning: its links go, and it is synced again (messages matched anew).
      logger.warn('imap: UIDVALIDITY changed; the folder is synced again', {
        grant_id: account.grantId,
        path: folder.path,
      });
      // The UIDs of the log were of the folder's earlier UIDVALIDITY.
      expunges.uids.clear();
      expunges.complete = false;
      run.expunges = undefined;
      await db.write(async (tx) => {
        await unlinkAndPrune(state, tx, account, run.applicationId, folder.path, 'all');
        await tx
          .update(imapFolders)
          .set({
            uidValidity: validity,
            uidNext: null,
            highestModseq: null,
            initialDone: false,
            initialLowestUid: null,
            initialFloorUid: null,
            updatedAt: now(),
          })
          .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, folder.path)));
      });
      Object.assign(folder, {
        uidValidity: validity,
        uidNext: null,
        highestModseq: null,
        initialDone: false,
        initialLowestUid: null,
        initialFloorUid: null,
      });
    } else if (folder.uidValidity === null) {
      await db.write((tx) =>
        tx
          .update(imapFolders)
          .set({ uidValidity: validity, updatedAt: now() })
          .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, folder.path))),
      );
      folder.uidValidity = validity;
    }
    if (!folder.initialDone) await initialSync(state, run, mailbox);
    else await incremental(state, run, mailbox);
  } finally {
    lock.release();
  }
}

/**
 * One pass over the account on `client` (logged in). Returns whether the account's initial sync completed in this
 * pass (every folder's initial sync done, and no pass had completed before).
 */
export async function pass(
  state: SyncState,
  client: ImapFlow,
  grantId: string,
  options: PassOptions = {},
): Promise<{ initialCompleted: boolean }> {
  const { db, parts, record } = state;
  const [found] = await db.orm
    .select({
      account: imapAccounts,
      applicationId: tables.grants.applicationId,
      email: tables.grants.email,
      provider: tables.grants.provider,
    })
    .from(imapAccounts)
    .innerJoin(tables.grants, eq(tables.grants.id, imapAccounts.grantId))
    .where(eq(imapAccounts.grantId, grantId))
    .limit(1);
  if (!found) return { initialCompleted: false };
  const { account, applicationId } = found;
  const grant = { email: found.email, provider: found.provider };
  let folders: FolderRow[];
  // An initial sync ahead: the writer thread starts loading while the folders are listed.
  if (account.lastSyncAt === null) void parts.inbound.warm();
  if (options.inboxOnly)
    folders = await db.orm
      .select()
      .from(imapFolders)
      .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.folderId, 'inbox')));
  else folders = await syncFolders(state, client, account, applicationId);
  for (const folder of folders) {
    if (options.signal?.aborted) throw new Error('the sync was stopped');
    await syncFolder(state, {
      client,
      account,
      applicationId,
      grant,
      folder,
      signal: options.signal,
      fetchThread: options.fetchThread,
    });
  }
  if (options.inboxOnly) return { initialCompleted: false };
  // The initial sync completes once: the first pass to end with every folder done.
  const completed = await db.write(async (tx) => {
    const [fresh] = await tx
      .select({ lastSyncAt: imapAccounts.lastSyncAt })
      .from(imapAccounts)
      .where(eq(imapAccounts.grantId, grantId));
    const [open] = await tx
      .select({ path: imapFolders.path })
      .from(imapFolders)
      .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.initialDone, false)))
      .limit(1);
    if (!fresh || open || fresh.lastSyncAt !== null) return false;
    const [grant] = await tx.select().from(tables.grants).where(eq(tables.grants.id, grantId));
    if (grant)
      await record(tx, {
        applicationId,
        grantId,
        type: 'grant.imap_sync_completed',
        objectId: grantId,
        object: await grantOf(tx, grant),
      });
    await markSyncDone(tx, grantId);
    return true;
  });
  return { initialCompleted: completed };
}

/**
 * SELECTs INBOX on `client` to wait there (IDLE): with QRESYNC when the server has it, so the connection learns of
 * every expunge there from INBOX's last pass on (VANISHED (EARLIER) now, VANISHED while it idles), and the next
 * INBOX pass needs no comparison of UIDs.
 */
export async function watchInbox(state: SyncState, client: ImapFlow, grantId: string): Promise<MailboxObject> {
  const [inbox] = await state.db.orm
    .select()
    .from(imapFolders)
    .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.folderId, 'inbox')))
    .limit(1);
  const path = inbox?.path ?? 'INBOX';
  return (await selectLogged(client, path, inbox, (options) => client.mailboxOpen(path, options))).opened;
}
