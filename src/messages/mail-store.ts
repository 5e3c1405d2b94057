/**
 * @module messages/mail-store
 * Writes and reads of the mail store shared by inbound delivery, the messages and threads services (and, later,
 * the sent copy of outbound mail): storing a parsed message with its blobs, attachments, thread, folders,
 * search entry and `message.created` event; changing flags and folders; deleting for good; keeping thread
 * aggregates true. Every write function takes the caller's transaction.
 *
 * The store is plain functions over a small state made here: its insert (./mail-insert-store.ts), its changes and
 * deletes with the thread aggregates (./mail-change-store.ts), and what they share (./mail-store-state.ts).
 */
import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import { preparedRead, readBlob, tables, type Executor, type MailWriteItem, type Tx } from '../../storage/index.js';
import type { Clock, IdGenerator } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import type { FolderCounter } from '../grants/index.js';
import type { Message } from '../schemas/messages.js';
import type { MailStore, MessageChanges, NewMessage, StoredMessage } from './contracts.js';
import { changeMessages, destroyMessages, refreshThread } from './mail-change-store.js';
import { insertMessages } from './mail-insert-store.js';
import { writeItemOf } from './mail-rows.js';
import type { MailStoreState } from './mail-store-state.js';
import { toMessage, type AttachmentRow, type MessageRow, type PresentedMessageRow } from './message-mapper.js';

/** Creates the store (it needs ids and the time for rows and events). */
export function createMailStore({ newId, clock }: { newId: IdGenerator; clock: Clock }): MailStore {
  const state: MailStoreState = { newId, clock, record: eventRecorder({ newId, clock }) };
  const insertMany = (tx: Tx, inputs: NewMessage[]) => insertMessages(state, tx, inputs);

  return {
    insertMany,

    /**
     * One message for the mail writer thread (storage/engine/mail-writer.ts): the rows {@link insertMany} would write
     * for `inputs` (copies of one raw message, one per mailbox), with their ids and the `message.created` events; the
     * writer picks each copy's thread and sequence inside its transaction.
     */
    toWriteItem: (inputs: NewMessage[]): MailWriteItem => writeItemOf(inputs, { newId, at: unixSeconds(clock.now()) }),

    /** Stores one message (see {@link insertMany}). */
    async insert(tx: Tx, input: NewMessage): Promise<StoredMessage> {
      const [stored] = await insertMany(tx, [input]);
      return stored!;
    },

    /** Applies flag, folder and metadata changes to messages of one mailbox and refreshes their threads. */
    change: (tx: Tx, rows: MessageRow[], changes: MessageChanges) => changeMessages(state, tx, rows, changes),

    /** Deletes messages for good: rows, attachments, folder links, search entries, unshared blobs; threads refreshed. */
    destroy: (tx: Tx, rows: MessageRow[]) => destroyMessages(state, tx, rows),

    /** Recomputes a thread's aggregates from its messages; deletes the thread when none is left. */
    refreshThread: (tx: Tx, threadId: string) => refreshThread(state, tx, threadId),
  };
}

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
