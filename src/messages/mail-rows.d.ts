/** Types of mail-rows.js (plain JavaScript, shared with the mail writer thread). */
import type { BlobInput, MailWriteItem, SearchDocument } from '../../storage/index.js';
import type { ParsedMessage } from '../mail/parse-inbound.js';
import type { AttachmentRow, Message, MessageRow } from './message-wire.js';

/** A message to store. */
export interface NewMessage {
  applicationId: string;
  grantId: string;
  parsed: ParsedMessage;
  raw: Buffer;
  /** SHA-256 of `raw` (the parse worker computes it); not used, and may be empty, when `rawInline`. */
  rawHash: string;
  folders: string[];
  unread: boolean;
  /** Unix seconds: received (or sent) time, the list order. */
  date: number;
  envelopeFrom: string | null;
  envelopeTo: string | null;
  parseError: string | null;
  metadata?: Record<string, unknown>;
  /**
   * Store `raw` in `message_raw`, under the message's `seq`, instead of as a content-addressed blob (then the row's
   * `rawHash` is null): set by {@link asDelivery} for received mail with one copy. Mail whose blob is shared (with
   * other copies, or with the outbound queue) leaves it unset.
   */
  rawInline?: boolean;
}

/** Bodies up to this many UTF-8 bytes live in the message row; larger ones are a blob. */
export declare const INLINE_BODY_BYTES: number;
/** Raw messages up to this size, received with one copy, go in `message_raw` (see {@link asDelivery}). */
export declare const INLINE_RAW_BYTES: number;
/** The copies of one received message, each for its mailbox, marked `rawInline` when there is one copy of at most {@link INLINE_RAW_BYTES}. */
export declare function asDelivery<T extends Pick<NewMessage, 'raw'>>(copies: T[]): (T & { rawInline: boolean })[];
/** Message-IDs a message may share with an earlier thread, closest first: In-Reply-To, References newest first, its own. */
export declare function threadCandidates(parsed: ParsedMessage): string[];
/** Message-IDs a message records for its thread: its own, In-Reply-To and References, once each. */
export declare function threadReferencesOf(parsed: ParsedMessage): string[];
/** Where a message's body goes: inline in its row, or (when large) a blob of its own (hash: hex SHA-256). */
export declare function placeBody(body: string): { body: string | null; bodyHash: string | null; blob: BlobInput | undefined };
/** The message row of `input` (thread and sequence as given). */
export declare function messageRowOf(
  input: NewMessage,
  place: { id: string; threadId: string; seq: number; at: number; body: string | null; bodyHash: string | null },
): MessageRow;
/** The attachment rows of a message (one `newId()` each, in order). */
export declare function attachmentRowsOf(input: NewMessage, messageId: string, newId: () => string): AttachmentRow[];
/** The folder links of a message row. */
export declare function folderRowsOf(row: MessageRow): { messageId: string; grantId: string; folderId: string; unread: boolean }[];
/** What full-text search indexes of a message. */
export declare function searchTextOf(parsed: ParsedMessage): Omit<SearchDocument, 'seq'>;
/** The `message.created` event's object: the message without its body. */
export declare function createdEventOf(row: MessageRow, attachments: AttachmentRow[]): Omit<Message, 'body'>;
/**
 * One message for the mail writer thread: its blobs and one copy per input (rows, ids, `message.created` event), all
 * dated `at` (unix seconds). Ids per copy, in order: message, new thread, attachments, event.
 */
export declare function writeItemOf(inputs: NewMessage[], options: { newId: () => string; at: number }): MailWriteItem;
