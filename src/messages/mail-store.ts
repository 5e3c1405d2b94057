/**
 * @module messages/mail-store
 * Writes and reads of the mail store shared by inbound delivery, the messages and threads services (and, later,
 * the sent copy of outbound mail): storing a parsed message with its blobs, attachments, thread, folders,
 * search entry and `message.created` event; changing flags and folders; deleting for good; keeping thread
 * aggregates true. Every write function takes the caller's transaction.
 */
import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import {
  breathe,
  foldIntoThread,
  indexMessageTexts,
  mergeParticipants,
  newThread,
  preparedRead,
  putBlobs,
  readBlob,
  releaseBlobs,
  dateKindOf,
  tables,
  union,
  type BlobInput,
  type Executor,
  type MailWriteItem,
  type StoredAddress,
  type Tx,
} from '../../storage/index.js';
import type { Clock, IdGenerator } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import type { FolderCounter } from '../grants/index.js';
import type { Message } from '../schemas/messages.js';
import {
  attachmentRowsOf,
  createdEventOf,
  folderRowsOf,
  messageRowOf,
  placeBody,
  searchTextOf,
  threadCandidates,
  threadReferencesOf,
  writeItemOf,
  type NewMessage,
} from './mail-rows.js';
import type { MailStore, MessageChanges, StoredMessage } from './contracts.js';
import {
  toMessage,
  type AttachmentRow,
  type MessageRow,
  type PresentedMessageRow,
  type ThreadRow,
} from './message-mapper.js';

// The pure row builders live in mail-rows.ts (shared with the mail writer thread).
export { INLINE_BODY_BYTES, type NewMessage } from './mail-rows.js';

/** Creates the store (it needs ids and the time for rows and events). */
export function createMailStore({ newId, clock }: { newId: IdGenerator; clock: Clock }): MailStore {
  const record = eventRecorder({ newId, clock });
  /** Recomputes a thread's aggregates from its messages; deletes the thread when none is left. */
  async function refreshThread(tx: Tx, threadId: string): Promise<void> {
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
        updatedAt: unixSeconds(clock.now()),
      })
      .where(eq(tables.threads.id, threadId));
  }

  /**
   * Stores messages, each for its mailbox: blobs (raw unless `rawInline`, large bodies, attachment bytes; identical
   * ones once), raw messages stored inline, thread
   * assignment (a message joins the thread of the closest Message-ID it shares, including with a message earlier
   * in the same call), the messages and their folders, attachments, search entries, thread aggregates and one
   * `message.created` outbox event each, all in the caller's transaction. A few multi-row statements serve the whole
   * call, so committing many messages together costs little more than one.
   */
  async function insertMany(tx: Tx, inputs: NewMessage[]): Promise<StoredMessage[]> {
    if (inputs.length === 0) return [];
    const at = unixSeconds(clock.now());

    const blobs: BlobInput[] = [];
    const bodies = inputs.map((input) => {
      if (!input.rawInline) blobs.push({ bytes: input.raw, hash: input.rawHash });
      for (const attachment of input.parsed.attachments)
        blobs.push({ bytes: attachment.content, hash: attachment.hash });
      const placed = placeBody(input.parsed.body);
      if (placed.blob) blobs.push(placed.blob);
      return placed;
    });
    await putBlobs(tx, blobs, at);

    // Threads already known for any Message-ID of the call, per mailbox: one query per mailbox.
    const known = new Map<string, string>();
    const key = (grantId: string, headerId: string) => `${grantId}\u0000${headerId}`;
    const candidatesByGrant = new Map<string, Set<string>>();
    for (const input of inputs) {
      const set = candidatesByGrant.get(input.grantId) ?? new Set<string>();
      for (const candidate of threadCandidates(input.parsed)) set.add(candidate);
      candidatesByGrant.set(input.grantId, set);
    }
    for (const [grantId, candidates] of candidatesByGrant) {
      const list = [...candidates];
      for (let index = 0; index < list.length; index += 500) {
        const rows = await tx
          .select({ headerId: tables.threadReferences.headerId, threadId: tables.threadReferences.threadId })
          .from(tables.threadReferences)
          .where(
            and(
              eq(tables.threadReferences.grantId, grantId),
              inArray(tables.threadReferences.headerId, list.slice(index, index + 500)),
            ),
          );
        for (const row of rows)
          if (!known.has(key(grantId, row.headerId))) known.set(key(grantId, row.headerId), row.threadId);
      }
    }
    const existingIds = [...new Set(known.values())];
    const threads = new Map<string, ThreadRow>();
    for (let index = 0; index < existingIds.length; index += 500) {
      for (const row of await tx
        .select()
        .from(tables.threads)
        .where(inArray(tables.threads.id, existingIds.slice(index, index + 500))))
        threads.set(row.id, row);
    }

    const [{ first } = { first: 1 }] = await tx
      .select({ first: sql<number>`coalesce(max(${tables.messages.seq}), 0) + 1` })
      .from(tables.messages);
    const rows: MessageRow[] = [];
    const attachmentRows: AttachmentRow[] = [];
    const attachmentsOf = new Map<string, AttachmentRow[]>();
    const references: { grantId: string; headerId: string; threadId: string }[] = [];
    const touched = new Set<string>();
    inputs.forEach((input, index) => {
      const { parsed } = input;
      const id = newId();
      const found = threadCandidates(parsed)
        .map((candidate) => known.get(key(input.grantId, candidate)))
        .find((threadId) => threadId !== undefined && threads.has(threadId));
      const threadId = found ?? newId();
      const row = messageRowOf(input, {
        id,
        threadId,
        seq: first + index,
        at,
        body: bodies[index]!.body,
        bodyHash: bodies[index]!.bodyHash,
      });
      rows.push(row);
      const thread = threads.get(threadId);
      threads.set(threadId, thread ? foldIntoThread(thread, row) : newThread(threadId, row));
      touched.add(threadId);
      for (const headerId of threadReferencesOf(parsed)) {
        references.push({ grantId: input.grantId, headerId, threadId });
        if (!known.has(key(input.grantId, headerId))) known.set(key(input.grantId, headerId), threadId);
      }
      const own = attachmentRowsOf(input, id, newId);
      attachmentRows.push(...own);
      attachmentsOf.set(id, own);
    });

    // New and changed threads in one upsert.
    const threadRows = [...touched].map((id) => threads.get(id)!);
    for (let index = 0; index < threadRows.length; index += 100) {
      await tx
        .insert(tables.threads)
        .values(threadRows.slice(index, index + 100))
        .onConflictDoUpdate({
          target: tables.threads.id,
          set: Object.fromEntries(
            (
              [
                'subject',
                'snippet',
                'participants',
                'messageCount',
                'earliestMessageDate',
                'latestMessageDate',
                'latestSeq',
                'latestMessageId',
                'latestMessageReceivedDate',
                'latestMessageSentDate',
                'hasAttachments',
                'unread',
                'starred',
                'folders',
                'updatedAt',
              ] as const
            ).map((column) => [column, sql.raw(`excluded.${tables.threads[column].name}`)]),
          ),
        });
    }
    for (let index = 0; index < references.length; index += 300) {
      await tx
        .insert(tables.threadReferences)
        .values(references.slice(index, index + 300))
        .onConflictDoNothing();
    }
    for (let index = 0; index < rows.length; index += 50) {
      await tx.insert(tables.messages).values(rows.slice(index, index + 50));
      await breathe();
    }
    const raws = inputs.flatMap((input, index) =>
      input.rawInline ? [{ seq: rows[index]!.seq, data: input.raw }] : [],
    );
    for (let index = 0; index < raws.length; index += 50)
      await tx.insert(tables.messageRaw).values(raws.slice(index, index + 50));
    const memberships = rows.flatMap(folderRowsOf);
    for (let index = 0; index < memberships.length; index += 200)
      await tx.insert(tables.messageFolders).values(memberships.slice(index, index + 200));
    for (let index = 0; index < attachmentRows.length; index += 100) {
      await tx.insert(tables.attachments).values(attachmentRows.slice(index, index + 100));
      await breathe();
    }
    await indexMessageTexts(
      tx,
      inputs.map((input, index) => ({ seq: rows[index]!.seq, ...searchTextOf(input.parsed) })),
    );

    const stored: StoredMessage[] = [];
    for (const [index, row] of rows.entries()) {
      const attachments = attachmentsOf.get(row.id) ?? [];
      if (!inputs[index]!.history)
        await record(tx, {
          applicationId: inputs[index]!.applicationId,
          grantId: row.grantId,
          type: 'message.created',
          objectId: row.id,
          object: createdEventOf(row, attachments),
          createdAt: at,
        });
      stored.push({ row, message: toMessage(row, inputs[index]!.parsed.body, attachments) });
    }
    return stored;
  }

  /**
   * One message for the mail writer thread (storage/engine/mail-writer.ts): the rows {@link insertMany} would write for
   * `inputs` (copies of one raw message, one per mailbox), with their ids and the `message.created` events; the writer
   * picks each copy's thread and sequence inside its transaction.
   */
  function toWriteItem(inputs: NewMessage[]): MailWriteItem {
    return writeItemOf(inputs, { newId, at: unixSeconds(clock.now()) });
  }

  return {
    insertMany,
    toWriteItem,

    /** Stores one message (see {@link insertMany}). */
    async insert(tx: Tx, input: NewMessage): Promise<StoredMessage> {
      const [stored] = await insertMany(tx, [input]);
      return stored!;
    },

    /** Applies flag, folder and metadata changes to messages of one mailbox and refreshes their threads. */
    async change(tx: Tx, rows: MessageRow[], changes: MessageChanges): Promise<MessageRow[]> {
      if (rows.length === 0) return [];
      const ids = rows.map((row) => row.id);
      const at = unixSeconds(clock.now());
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
        await refreshThread(tx, threadId);
        await breathe();
      }
      const order = new Map(ids.map((id, index) => [id, index]));
      return updated.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
    },

    /** Deletes messages for good: rows, attachments, folder links, search entries, unshared blobs; threads refreshed. */
    async destroy(tx: Tx, rows: MessageRow[]): Promise<void> {
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
        await refreshThread(tx, threadId);
        await breathe();
      }
    },

    refreshThread,
  };
}

export type { MailStore, StoredMessage } from './contracts.js';

/** Attachments of messages, the ids given as one JSON array (one statement whatever their number, its SQL built once). */
const attachmentsOf = preparedRead((db: Executor) =>
  db
    .select()
    .from(tables.attachments)
    .where(sql`${tables.attachments.messageId} IN (SELECT value FROM json_each(${sql.placeholder('ids')}))`)
    .orderBy(asc(tables.attachments.messageId), asc(tables.attachments.position)),
);

/** Attachments of the given messages, in message order. */
export async function loadAttachments(db: Executor, messageIds: string[]): Promise<Map<string, AttachmentRow[]>> {
  const byMessage = new Map<string, AttachmentRow[]>();
  for (let index = 0; index < messageIds.length; index += 200) {
    const rows = await attachmentsOf(db, { ids: JSON.stringify(messageIds.slice(index, index + 200)) });
    for (const row of rows) {
      const list = byMessage.get(row.messageId) ?? [];
      list.push(row);
      byMessage.set(row.messageId, list);
    }
  }
  return byMessage;
}

/** The body of a message row (inline, or read from its blob). */
export async function loadBody(db: Executor, row: Pick<MessageRow, 'body' | 'bodyHash'>): Promise<string> {
  if (row.body !== null) return row.body;
  if (row.bodyHash === null) return '';
  return (await readBlob(db, row.bodyHash))?.toString('utf8') ?? '';
}

/** Message rows → wire messages, loading attachments and large bodies in as few queries as possible. */
export async function presentMessages(db: Executor, rows: PresentedMessageRow[]): Promise<Message[]> {
  const attachments =
    rows.length > 0
      ? await loadAttachments(
          db,
          rows.map((row) => row.id),
        )
      : new Map<string, AttachmentRow[]>();
  const out: Message[] = [];
  for (const row of rows) out.push(toMessage(row, await loadBody(db, row), attachments.get(row.id) ?? []));
  return out;
}

/** Folder counts from the folder-membership table: the {@link FolderCounter} the folder service takes. */
export function createFolderCounter(db: Executor): FolderCounter {
  return async (grantId, folderIds) => {
    const counts = new Map<string, { total: number; unread: number }>();
    if (folderIds.length === 0) return counts;
    const rows = await db
      .select({
        folderId: tables.messageFolders.folderId,
        total: count(),
        unread: sql<number>`coalesce(sum(${tables.messageFolders.unread}), 0)`,
      })
      .from(tables.messageFolders)
      .where(and(eq(tables.messageFolders.grantId, grantId), inArray(tables.messageFolders.folderId, folderIds)))
      .groupBy(tables.messageFolders.folderId);
    for (const row of rows) counts.set(row.folderId, { total: Number(row.total), unread: Number(row.unread) });
    return counts;
  };
}
