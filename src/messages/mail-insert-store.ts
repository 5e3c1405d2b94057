/**
 * @module messages/mail-insert-store
 * The mail store's insert (./mail-store.ts): stores parsed messages with their blobs, threads, folders, attachments,
 * search entries and `message.created` events, in the caller's transaction; a few multi-row statements for the call.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import {
  breathe,
  foldIntoThread,
  indexMessageTexts,
  newThread,
  putBlobs,
  tables,
  type BlobInput,
  type Tx,
} from '../../storage/index.js';
import { unixSeconds } from '../time.js';
import type { NewMessage, StoredMessage } from './contracts.js';
import {
  attachmentRowsOf,
  createdEventOf,
  folderRowsOf,
  messageRowOf,
  placeBody,
  searchTextOf,
  threadCandidates,
  threadReferencesOf,
} from './mail-rows.js';
import type { MailStoreState } from './mail-store-state.js';
import { toMessage, type AttachmentRow, type MessageRow, type ThreadRow } from './message-mapper.js';

/** A Message-ID of one mailbox, as the key of the threads known for it. */
const threadKey = (grantId: string, headerId: string) => `${grantId}\u0000${headerId}`;

/**
 * Stores messages, each for its mailbox: blobs (raw unless `rawInline`, large bodies, attachment bytes; identical
 * ones once), raw messages stored inline, thread
 * assignment (a message joins the thread of the closest Message-ID it shares, including with a message earlier
 * in the same call), the messages and their folders, attachments, search entries, thread aggregates and one
 * `message.created` outbox event each, all in the caller's transaction. A few multi-row statements serve the whole
 * call, so committing many messages together costs little more than one.
 */
export async function insertMessages(state: MailStoreState, tx: Tx, inputs: NewMessage[]): Promise<StoredMessage[]> {
  if (inputs.length === 0) return [];
  const at = unixSeconds(state.clock.now());

  const blobs: BlobInput[] = [];
  const bodies = inputs.map((input) => {
    if (!input.rawInline) blobs.push({ bytes: input.raw, hash: input.rawHash });
    for (const attachment of input.parsed.attachments) blobs.push({ bytes: attachment.content, hash: attachment.hash });
    const placed = placeBody(input.parsed.body);
    if (placed.blob) blobs.push(placed.blob);
    return placed;
  });
  await putBlobs(tx, blobs, at);

  const { known, threads } = await knownThreads(tx, inputs);

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
    const id = state.newId();
    const found = threadCandidates(parsed)
      .map((candidate) => known.get(threadKey(input.grantId, candidate)))
      .find((threadId) => threadId !== undefined && threads.has(threadId));
    const threadId = found ?? state.newId();
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
      if (!known.has(threadKey(input.grantId, headerId))) known.set(threadKey(input.grantId, headerId), threadId);
    }
    const own = attachmentRowsOf(input, id, state.newId);
    attachmentRows.push(...own);
    attachmentsOf.set(id, own);
  });

  // New and changed threads in one upsert.
  const threadRows = [...touched].map((id) => threads.get(id)!);
  await writeRows(tx, inputs, { threadRows, references, rows, attachmentRows });

  const stored: StoredMessage[] = [];
  for (const [index, row] of rows.entries()) {
    const attachments = attachmentsOf.get(row.id) ?? [];
    if (!inputs[index]!.history)
      await state.record(tx, {
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
 * Threads already known for any Message-ID of the call, per mailbox: one query per mailbox. `known` maps
 * {@link threadKey} to a thread id, `threads` holds the rows of those threads.
 */
async function knownThreads(
  tx: Tx,
  inputs: NewMessage[],
): Promise<{ known: Map<string, string>; threads: Map<string, ThreadRow> }> {
  const known = new Map<string, string>();
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
        if (!known.has(threadKey(grantId, row.headerId))) known.set(threadKey(grantId, row.headerId), row.threadId);
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
  return { known, threads };
}

/** Writes the rows of a call: threads (one upsert), references, messages, raw messages, folders, attachments, search. */
async function writeRows(
  tx: Tx,
  inputs: NewMessage[],
  {
    threadRows,
    references,
    rows,
    attachmentRows,
  }: {
    threadRows: ThreadRow[];
    references: { grantId: string; headerId: string; threadId: string }[];
    rows: MessageRow[];
    attachmentRows: AttachmentRow[];
  },
): Promise<void> {
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
  const raws = inputs.flatMap((input, index) => (input.rawInline ? [{ seq: rows[index]!.seq, data: input.raw }] : []));
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
}
