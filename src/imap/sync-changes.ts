/**
 * @module imap/sync-changes
 * A folder's changes since its last pass (./sync.ts), once its initial sync is done: new UIDs, flags (with CONDSTORE
 * only what changed), and deletions (with QRESYNC what the server reported VANISHED, else by comparing UIDs).
 */
import { and, eq, gte, inArray } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { imapFolders, imapMessages } from '../../storage/schema/connected.js';
import { presentMessages, type MessageRow } from '../messages/index.js';
import { flagState, folderKey, type FolderRun, type SyncState } from './sync-state.js';
import { fetchAndStore } from './sync-fetch.js';
import { lowestLinkedUid, pushPending, unlinkAndPrune } from './sync-store.js';

/**
 * With QRESYNC a folder's deletions come from the server's VANISHED answers; once in this long (and on a folder's
 * first pass in a process) the linked UIDs are still compared with the server's, which catches whatever those did
 * not say: deletions deferred on a connection that then closed, or a server that forgot some.
 */
export const UID_CHECK_INTERVAL_MS = 60 * 60_000;

/** Applies server flags to linked messages that differ; returns how many changed. */
async function applyFlags(
  state: SyncState,
  run: FolderRun,
  seen: Map<number, { flags: string[]; modseq: string | null }>,
): Promise<void> {
  if (seen.size === 0) return;
  const { db, parts, record, now } = state;
  const { grantId } = run.account;
  const uids = [...seen.keys()];
  for (let index = 0; index < uids.length; index += 500) {
    const slice = uids.slice(index, index + 500);
    await db.write(async (tx) => {
      const links = await tx
        .select({ link: imapMessages, row: tables.messages })
        .from(imapMessages)
        .innerJoin(tables.messages, eq(tables.messages.id, imapMessages.messageId))
        .where(
          and(
            eq(imapMessages.grantId, grantId),
            eq(imapMessages.path, run.folder.path),
            inArray(imapMessages.uid, slice),
          ),
        );
      const changedRows: MessageRow[] = [];
      for (const { link, row } of links) {
        const server = seen.get(link.uid)!;
        const same =
          server.flags.length === link.flags.length && server.flags.every((flag) => link.flags.includes(flag));
        if (same && server.modseq === link.modseq) continue;
        await tx
          .update(imapMessages)
          .set({ flags: server.flags, modseq: server.modseq })
          .where(
            and(eq(imapMessages.grantId, grantId), eq(imapMessages.path, link.path), eq(imapMessages.uid, link.uid)),
          );
        if (same) continue;
        const shownFlags = flagState(server.flags);
        const changes: { unread?: boolean; starred?: boolean } = {};
        if (shownFlags.unread !== row.unread) changes.unread = shownFlags.unread;
        if (shownFlags.starred !== row.starred) changes.starred = shownFlags.starred;
        if (Object.keys(changes).length === 0) continue;
        const [updated] = await parts.store.change(tx, [row], changes);
        if (updated) changedRows.push(updated);
      }
      const isDraft = new Set(
        changedRows.length === 0
          ? []
          : (
              await tx
                .select({ id: tables.draftDetails.messageId })
                .from(tables.draftDetails)
                .where(
                  inArray(
                    tables.draftDetails.messageId,
                    changedRows.map((row) => row.id),
                  ),
                )
            ).map((row) => row.id),
      );
      const shown = changedRows.filter((row) => !isDraft.has(row.id));
      if (shown.length === 0) return;
      const at = now();
      for (const message of await presentMessages(tx, shown)) {
        await record(tx, {
          applicationId: run.applicationId,
          grantId,
          type: 'message.updated',
          objectId: message.id,
          object: message,
          createdAt: at,
        });
      }
    });
  }
}

/** Changes since the last pass of a folder whose initial sync is done: new mail, flags, deletions. */
export async function incremental(
  state: SyncState,
  run: FolderRun,
  mailbox: { uidNext: number; highestModseq: string | null; exists: number },
): Promise<void> {
  const { db, clock, now, uidsChecked } = state;
  const { account, folder, client } = run;
  const from = folder.uidNext ?? 1;
  // New mail.
  if (mailbox.uidNext > from) {
    const fresh = ((await client.search({ uid: `${from}:*` }, { uid: true })) || []).filter((uid) => uid >= from);
    await fetchAndStore(state, run, fresh, async () => undefined);
  }
  const low = await lowestLinkedUid(db, account.grantId, folder.path);
  if (low !== null) {
    // Flags: nothing to fetch when HIGHESTMODSEQ has not moved; with CONDSTORE only what changed since.
    const condstore = mailbox.highestModseq !== null && folder.highestModseq !== null;
    if (!condstore || mailbox.highestModseq !== folder.highestModseq) {
      const seen = new Map<number, { flags: string[]; modseq: string | null }>();
      const options = condstore ? { uid: true, changedSince: BigInt(folder.highestModseq!) } : { uid: true };
      for await (const message of client.fetch(`${low}:*`, { uid: true, flags: true }, options)) {
        if (message.uid >= low)
          seen.set(message.uid, {
            flags: [...(message.flags ?? [])],
            modseq: message.modseq !== undefined ? String(message.modseq) : null,
          });
      }
      await applyFlags(state, run, seen);
    }
    // Deletions: the linked UIDs the server no longer has (an expunge need not move HIGHESTMODSEQ without QRESYNC).
    // Not while a change of ours is on its way to the server: a MOVE there relinks its message only once it is done
    // (what VANISHED said stays in the connection's log meanwhile).
    if (!(await pushPending(db, account.grantId))) {
      const key = folderKey(account.grantId, folder.path);
      const checked = uidsChecked.get(key);
      const compare =
        !run.expunges || checked === undefined || clock.now().getTime() - checked >= UID_CHECK_INTERVAL_MS;
      /** What the log held before the server was asked: a comparison covers these. */
      const logged = run.expunges ? [...run.expunges.uids] : [];
      let vanished: number[];
      if (compare) {
        const onServer = new Set((await client.search({ uid: `${low}:*` }, { uid: true })) || []);
        const linked = await db.orm
          .select({ uid: imapMessages.uid })
          .from(imapMessages)
          .where(
            and(
              eq(imapMessages.grantId, account.grantId),
              eq(imapMessages.path, folder.path),
              gte(imapMessages.uid, low),
            ),
          );
        vanished = linked.map((row) => row.uid).filter((uid) => !onServer.has(uid));
        uidsChecked.set(key, clock.now().getTime());
      } else {
        // QRESYNC: the server said which UIDs went; nothing to compare.
        vanished = logged;
      }
      for (let index = 0; index < vanished.length; index += 500) {
        const slice = vanished.slice(index, index + 500);
        await db.write((tx) => unlinkAndPrune(state, tx, account, run.applicationId, folder.path, slice));
      }
      // Forgotten once deleted here; a VANISHED that came meanwhile stays for the next pass.
      for (const uid of logged) run.expunges?.uids.delete(uid);
    }
  }
  await db.write((tx) =>
    tx
      .update(imapFolders)
      .set({ uidNext: mailbox.uidNext, highestModseq: mailbox.highestModseq, updatedAt: now() })
      .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, folder.path))),
  );
}
