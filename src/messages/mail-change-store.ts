/**
 * @module messages/mail-change-store
 * The mail store's changes to stored messages (./mail-store.ts): flags, folders and metadata; deleting for good; and
 * the thread aggregates both keep true. Every function takes the caller's transaction.
 */
import { asc, eq, inArray } from 'drizzle-orm';
import {
  breathe,
  dateKindOf,
  mergeParticipants,
  releaseBlobs,
  tables,
  union,
  type StoredAddress,
  type Tx,
} from '../../storage/index.js';
import { unixSeconds } from '../time.js';
import type { MessageChanges } from './contracts.js';
import { folderRowsOf } from './mail-rows.js';
import type { MailStoreState } from './mail-store-state.js';
import type { MessageRow } from './message-mapper.js';

/** Recomputes a thread's aggregates from its messages; deletes the thread when none is left. */
export async function refreshThread(state: MailStoreState, tx: Tx, threadId: string): Promise<void> {
  const rows = await tx
    .select({
      id: tables.messages.id,
      seq: tables.messages.seq,
      date: tables.messages.date,
      subject: tables.messages.subject,
      snippet: tables.messages.snippet,
      fromAddresses: tables.messages.fromAddresses,
      toAddresses: tables.messages.toAddresses,
      ccAddresses: tables.messages.ccAddresses,
      bccAddresses: tables.messages.bccAddresses,
      unread: tables.messages.unread,
      starred: tables.messages.starred,
      hasAttachments: tables.messages.hasAttachments,
      folders: tables.messages.folders,
    })
    .from(tables.messages)
    .where(eq(tables.messages.threadId, threadId))
    .orderBy(asc(tables.messages.date), asc(tables.messages.seq));
  const first = rows[0];
  const latest = rows[rows.length - 1];
  if (!first || !latest) {
    await tx.delete(tables.threads).where(eq(tables.threads.id, threadId));
    return;
  }
  let participants: StoredAddress[] = [];
  let folders: string[] = [];
  let received: number | null = null;
  let sent: number | null = null;
  for (const row of rows) {
    participants = mergeParticipants(participants, [
      ...row.fromAddresses,
      ...row.toAddresses,
      ...row.ccAddresses,
      ...row.bccAddresses,
    ]);
    folders = union(folders, row.folders);
    const kind = dateKindOf(row);
    if (kind === 'sent') sent = row.date;
    else if (kind === 'received') received = row.date;
  }
  await tx
    .update(tables.threads)
    .set({
      subject: first.subject,
      snippet: latest.snippet,
      participants,
      messageCount: rows.length,
      earliestMessageDate: first.date,
      latestMessageDate: latest.date,
      latestSeq: latest.seq,
      latestMessageId: latest.id,
      latestMessageReceivedDate: received,
      latestMessageSentDate: sent,
      hasAttachments: rows.some((row) => row.hasAttachments),
      unread: rows.some((row) => row.unread),
      starred: rows.some((row) => row.starred),
      folders,
      updatedAt: unixSeconds(state.clock.now()),
    })
    .where(eq(tables.threads.id, threadId));
}

/** Applies flag, folder and metadata changes to messages of one mailbox and refreshes their threads. */
export async function changeMessages(
  state: MailStoreState,
  tx: Tx,
  rows: MessageRow[],
  changes: MessageChanges,
): Promise<MessageRow[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const at = unixSeconds(state.clock.now());
  const updated = await tx
    .update(tables.messages)
    .set({
      ...(changes.unread !== undefined ? { unread: changes.unread } : {}),
      ...(changes.starred !== undefined ? { starred: changes.starred } : {}),
      ...(changes.folders !== undefined ? { folders: changes.folders } : {}),
      ...(changes.metadata !== undefined ? { metadata: changes.metadata } : {}),
      updatedAt: at,
    })
    .where(inArray(tables.messages.id, ids))
    .returning();
  if (changes.folders !== undefined) {
    await tx.delete(tables.messageFolders).where(inArray(tables.messageFolders.messageId, ids));
    const memberships = updated.flatMap(folderRowsOf);
    for (let index = 0; index < memberships.length; index += 200) {
      await tx.insert(tables.messageFolders).values(memberships.slice(index, index + 200));
      await breathe();
    }
  } else if (changes.unread !== undefined) {
    await tx
      .update(tables.messageFolders)
      .set({ unread: changes.unread })
      .where(inArray(tables.messageFolders.messageId, ids));
  }
  for (const threadId of new Set(updated.map((row) => row.threadId))) {
    await refreshThread(state, tx, threadId);
    await breathe();
  }
  const order = new Map(ids.map((id, index) => [id, index]));
  return updated.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
}

/** Deletes messages for good: rows, attachments, folder links, search entries, unshared blobs; threads refreshed. */
export async function destroyMessages(state: MailStoreState, tx: Tx, rows: MessageRow[]): Promise<void> {
  if (rows.length === 0) return;
  const ids = rows.map((row) => row.id);
  const attachmentHashes = await tx
    .select({ hash: tables.attachments.blobHash })
    .from(tables.attachments)
    .where(inArray(tables.attachments.messageId, ids));
  await tx.delete(tables.messages).where(inArray(tables.messages.id, ids));
  await releaseBlobs(tx, [
    ...rows.flatMap((row) => (row.rawHash ? [row.rawHash] : [])),
    ...rows.flatMap((row) => (row.bodyHash ? [row.bodyHash] : [])),
    ...attachmentHashes.map((row) => row.hash),
  ]);
  for (const threadId of new Set(rows.map((row) => row.threadId))) {
    await refreshThread(state, tx, threadId);
    await breathe();
  }
}
