/**
 * @module messages/mail-rows
 * A parsed message → the rows that store it (message, attachments, folder links, search entry, `message.created`
 * event, large body blob), without the database. Two places build them and must agree: the mail store on the event
 * loop (mail-store.ts) and the mail writer thread (through src/mail/ingest-prepare.ts, which storage/engine/mail-writer-worker.ts
 * loads). Imports only node built-ins and modules without side effects; no side effects on import.
 */
import type { BlobInput, MailWriteCopy, MailWriteItem, SearchDocument } from '../../storage/index.js';
import type { ParsedMessage } from '../mime/index.js';
import { sha256 } from '../mime/for-workers.js';
import type { NewMessage } from './contracts.js';
import { toMessage, type AttachmentRow, type Message, type MessageRow } from './message-wire.js';

export type { NewMessage } from './contracts.js';

/** Bodies up to this many UTF-8 bytes live in the message row; larger ones are a blob. */
export const INLINE_BODY_BYTES = 128 * 1024;

/**
 * The raw message of mail received with one copy, up to this size, goes in `message_raw` under the message's `seq`:
 * appended to one B-tree, where a content-addressed blob writes a blob row, its chunks and an index entry at random
 * places in three. Larger raw messages, and those shared by copies for several mailboxes, are a blob.
 */
export const INLINE_RAW_BYTES = 512 * 1024;

/**
 * The copies of one received message, each for its mailbox, ready to store: with one copy, of at most
 * {@link INLINE_RAW_BYTES}, its raw message is stored inline (`rawInline`).
 */
export function asDelivery<T extends { raw: Uint8Array }>(copies: T[]): (T & { rawInline: boolean })[] {
  const rawInline = copies.length === 1 && copies[0]!.raw.length <= INLINE_RAW_BYTES;
  return copies.map((copy) => ({ ...copy, rawInline }));
}

/**
 * Message-IDs a message may share with an earlier thread, closest first: In-Reply-To, References newest first, its own.
 */
export function threadCandidates(parsed: ParsedMessage): string[] {
  return [parsed.inReplyTo, ...[...parsed.references].reverse(), parsed.messageId].filter((value): value is string =>
    Boolean(value),
  );
}

/**
 * Message-IDs a message records for its thread: its own, In-Reply-To and References, once each.
 */
export function threadReferencesOf(parsed: ParsedMessage): string[] {
  return [
    ...new Set(
      [parsed.messageId, parsed.inReplyTo, ...parsed.references].filter((value): value is string => Boolean(value)),
    ),
  ];
}

/**
 * Where a message's body goes: inline in its row, or (when large) a blob of its own.
 */
export function placeBody(body: string): { body: string | null; bodyHash: string | null; blob: BlobInput | undefined } {
  if (body.length > INLINE_BODY_BYTES / 3 && Buffer.byteLength(body) > INLINE_BODY_BYTES) {
    const bytes = Buffer.from(body);
    const hash = sha256(bytes);
    return { body: null, bodyHash: hash, blob: { bytes, hash } };
  }
  return { body, bodyHash: null, blob: undefined };
}

/**
 * The message row of `input` (thread and sequence as given).
 */
export function messageRowOf(
  input: NewMessage,
  place: { id: string; threadId: string; seq: number; at: number; body: string | null; bodyHash: string | null },
): MessageRow {
  const { parsed } = input;
  return {
    id: place.id,
    grantId: input.grantId,
    threadId: place.threadId,
    seq: place.seq,
    date: input.date,
    sentAt: parsed.date !== undefined ? Math.floor(parsed.date / 1000) : null,
    subject: parsed.subject,
    fromAddresses: parsed.from,
    toAddresses: parsed.to,
    ccAddresses: parsed.cc,
    bccAddresses: parsed.bcc,
    replyToAddresses: parsed.replyTo,
    snippet: parsed.snippet,
    body: place.body,
    bodyHash: place.bodyHash,
    folders: input.folders,
    unread: input.unread,
    starred: input.starred ?? false,
    hasAttachments: parsed.attachments.some((attachment) => !attachment.isInline),
    headerMessageId: parsed.messageId ?? null,
    inReplyTo: parsed.inReplyTo ?? null,
    references: parsed.references,
    rawHash: input.rawInline ? null : input.rawHash,
    rawSize: input.raw.length,
    envelopeFrom: input.envelopeFrom,
    envelopeTo: input.envelopeTo,
    parseError: input.parseError,
    metadata: input.metadata ?? {},
    verdict: input.verdict ?? null,
    createdAt: place.at,
    updatedAt: place.at,
    rev: 0,
  };
}

/**
 * The attachment rows of a message (one `newId()` each, in order).
 */
export function attachmentRowsOf(input: NewMessage, messageId: string, newId: () => string): AttachmentRow[] {
  return input.parsed.attachments.map((attachment, position) => ({
    id: newId(),
    messageId,
    grantId: input.grantId,
    position,
    filename: attachment.filename,
    contentType: attachment.contentType,
    size: attachment.content.length,
    isInline: attachment.isInline,
    contentId: attachment.contentId ?? null,
    contentDisposition: attachment.disposition,
    blobHash: attachment.hash,
  }));
}

/**
 * The folder links of a message row.
 */
export function folderRowsOf(
  row: MessageRow,
): { messageId: string; grantId: string; folderId: string; unread: boolean }[] {
  return row.folders.map((folderId) => ({ messageId: row.id, grantId: row.grantId, folderId, unread: row.unread }));
}

/**
 * What full-text search indexes of a message.
 */
export function searchTextOf(parsed: ParsedMessage): Omit<SearchDocument, 'seq'> {
  const addresses = [...parsed.from, ...parsed.to, ...parsed.cc, ...parsed.bcc, ...parsed.replyTo]
    .map((entry) => `${entry.name ?? ''} ${entry.email}`)
    .join(' ');
  return { subject: parsed.subject, addresses, body: parsed.searchText };
}

/**
 * The `message.created` event's object: the message without its body, which it would otherwise carry a second
 * time (bodies never change once stored). Webhook fan-out reads the body back (src/webhooks/delivery.ts); the
 * log of a busy mailbox writes a third less.
 */
export function createdEventOf(row: MessageRow, attachments: AttachmentRow[]): Omit<Message, 'body'> {
  const { body: _body, ...rest } = toMessage(row, '', attachments);
  return rest;
}

/**
 * One message for the mail writer thread (storage/engine/mail-writer.ts): the rows the mail store's `insertMany` would write
 * for `inputs` (copies of one raw message, one per mailbox), with their ids and the `message.created` events; the
 * writer picks each copy's thread and sequence inside its transaction. A raw message stored inline (`rawInline`)
 * goes with its copy, for `message_raw`, instead of being a blob. Ids are taken per copy in this order: the
 * message, its new thread, its attachments, its event. `at`: unix seconds, for every row and event.
 */
export function writeItemOf(inputs: NewMessage[], { newId, at }: { newId: () => string; at: number }): MailWriteItem {
  const blobs = new Map<string, Uint8Array>();
  const copies = inputs.map((input) => {
    if (!input.rawInline) blobs.set(input.rawHash, input.raw);
    for (const attachment of input.parsed.attachments) blobs.set(attachment.hash, attachment.content);
    const placed = placeBody(input.parsed.body);
    if (placed.blob) blobs.set(placed.bodyHash!, placed.blob.bytes);
    const id = newId();
    const message = messageRowOf(input, {
      id,
      threadId: newId(),
      seq: 0,
      at,
      body: placed.body,
      bodyHash: placed.bodyHash,
    });
    const attachments = attachmentRowsOf(input, id, newId);
    const copy: MailWriteCopy = {
      message,
      threadCandidates: threadCandidates(input.parsed),
      references: threadReferencesOf(input.parsed),
      folders: folderRowsOf(message),
      attachments,
      search: searchTextOf(input.parsed),
      ...(input.rawInline ? { raw: input.raw } : {}),
      ...(input.history
        ? {}
        : {
            event: {
              id: newId(),
              applicationId: input.applicationId,
              grantId: message.grantId,
              type: 'message.created',
              objectId: id,
              payload: createdEventOf(message, attachments),
              createdAt: at,
              dispatchedAt: null,
            },
          }),
    };
    return copy;
  });
  return { blobs: [...blobs].map(([hash, bytes]) => ({ hash, bytes })), copies, createdAt: at };
}
