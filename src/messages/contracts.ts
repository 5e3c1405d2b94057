/**
 * @module messages/contracts
 * The messages area's declared interface (the mail store, the message, thread and attachment services) and its
 * shared types, as the store, the mail paths and the providers (src/providers/contracts.ts) exchange them.
 */
import type { MailWriteItem, StoredMessageVerdict, tables, Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { ParsedMessage } from '../mime/index.js';
import type {
  Attachment,
  AttachmentWithContent,
  CleanedMessage,
  CleanMessagesInput,
  DeleteMessageInput,
  DeliveryStatus,
  GetAttachmentInput,
  GetMessageInput,
  ListMessagesInput,
  Message,
  ReadAttachmentInput,
  UpdateMessageInput,
} from '../schemas/messages.js';
import type { AttachmentTextPage, ReadAttachmentTextInput } from '../schemas/attachment-text.js';
import type {
  DeleteThreadInput,
  GetThreadInput,
  ListThreadsInput,
  Thread,
  UpdateThreadInput,
} from '../schemas/threads.js';

/** A stored message (or draft), as the messages table holds it. */
export type MessageRow = typeof tables.messages.$inferSelect;

/** Flag and folder changes applied to one or more messages. */
export interface MessageChanges {
  unread?: boolean | undefined;
  starred?: boolean | undefined;
  folders?: string[] | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** What createThreadService() returns (src/messages/thread-service.ts). */
export interface ThreadService {
  /** A page of threads, the one with the newest message first. */
  list(
    principal: Principal,
    input: ListThreadsInput,
  ): Promise<{
    data: Thread[];
    next_cursor?: string;
  }>;
  /** One thread with its message ids and latest message. */
  find(principal: Principal, input: GetThreadInput): Promise<Thread>;
  /** Applies read, starred or folders to every message of the thread (its drafts stay as they are). */
  update(principal: Principal, input: UpdateThreadInput): Promise<Thread>;
  /**
   * Moves the thread's messages to trash (its drafts stay drafts); the thread is still found, with `trash` among its
   * folders. When all its messages already are in trash, deletes the thread for good (drafts included): then 404.
   */
  destroy(principal: Principal, input: DeleteThreadInput): Promise<void>;
}

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
  metadata?: Record<string, unknown> | undefined;
  /** Starred on arrival (a rule's `mark_as_starred`). */
  starred?: boolean | undefined;
  /**
   * Mail of a connected account's past, stored by its initial sync: no `message.created` (unless
   * `AGENTPOST_IMAP_HISTORY_EVENTS`); the account's history is announced once, by `grant.imap_sync_completed`.
   */
  history?: boolean | undefined;
  /** What the inbound mail stages decided (src/mail/stages), kept on the message. */
  verdict?: StoredMessageVerdict | undefined;
  /**
   * Store `raw` in `message_raw`, under the message's `seq`, instead of as a content-addressed blob (then the row's
   * `rawHash` is null): set by `asDelivery` (./mail-rows.ts) for received mail with one copy. Mail whose blob is shared (with
   * other copies, or with the outbound queue) leaves it unset.
   */
  rawInline?: boolean | undefined;
}

/** The stored row and its wire form (as recorded in the `message.created` event). */
export interface StoredMessage {
  row: MessageRow;
  message: Message;
}

/** An attachment's metadata and its bytes as a stream of chunks. */
export interface AttachmentDownload {
  attachment: Attachment;
  /** `attachment` or `inline`, for Content-Disposition. */
  disposition: 'attachment' | 'inline';
  chunks: AsyncIterable<Buffer>;
}

/**
 * What the outbound queue knows of sent messages, by message id: each recipient's delivery state, the tracking
 * options, who made the send.
 */
export type SentStateLookup = (messageIds: string[]) => Promise<
  Map<
    string,
    {
      deliveryStatus: DeliveryStatus[];
      trackingOptions: Message['tracking_options'];
      provenance?: Message['provenance'] | undefined;
    }
  >
>;

/** Deletes stored messages for good, with `message.deleted` for each that is not a draft (in the caller's transaction). */
export type DestroyForGood = (tx: Tx, applicationId: string, rows: MessageRow[]) => Promise<void>;

/** What createMailStore() returns (src/messages/mail-store.ts): the writes of stored mail, in the caller's transaction. */
export interface MailStore {
  /**
   * Stores messages (copies of one raw message, or unrelated ones): their threads (found or made, shared by copies
   * in the same call), the messages and their folders, attachments, search entries, thread aggregates and one
   * `message.created` outbox event each, all in the caller's transaction.
   */
  insertMany: (tx: Tx, inputs: NewMessage[]) => Promise<StoredMessage[]>;
  /**
   * One message for the mail writer thread (storage/engine/mail-writer.ts): the rows {@link insertMany} would write for
   * `inputs` (copies of one raw message, one per mailbox), with their ids and the `message.created` events.
   */
  toWriteItem: (inputs: NewMessage[]) => MailWriteItem;
  /** Stores one message (see {@link insertMany}). */
  insert(tx: Tx, input: NewMessage): Promise<StoredMessage>;
  /** Applies flag, folder and metadata changes to messages of one mailbox and refreshes their threads. */
  change(tx: Tx, rows: MessageRow[], changes: MessageChanges): Promise<MessageRow[]>;
  /** Deletes messages for good: rows, attachments, folder links, search entries, unshared blobs; threads refreshed. */
  destroy(tx: Tx, rows: MessageRow[]): Promise<void>;
  /** Recomputes a thread's aggregates from its messages; deletes the thread when none is left. */
  refreshThread: (tx: Tx, threadId: string) => Promise<void>;
}

/** What createAttachmentService() returns (src/messages/attachment-service.ts). */
export interface AttachmentService {
  /**
   * Metadata and content of one attachment, for agents: text types as text, anything else as Base64, at
   * most `max_bytes` (default 1 MB) read from the blob store.
   */
  read(principal: Principal, input: ReadAttachmentInput): Promise<AttachmentWithContent>;
  /** Metadata of one attachment of one message. */
  find(principal: Principal, input: GetAttachmentInput): Promise<Attachment>;
  /**
   * One page of the attachment's text, paged by `max_tokens` with a cursor; images and unknown types answer their
   * metadata. Throws an AttachmentTextError (422, or 400 for a cursor of another file) naming why a file cannot be read.
   */
  readText(principal: Principal, input: ReadAttachmentTextInput): Promise<AttachmentTextPage>;
  /** The attachment's exact bytes. */
  download(principal: Principal, input: GetAttachmentInput): Promise<AttachmentDownload>;
}

/** What createMessageService() returns (src/messages/message-service.ts). */
export interface MessageService {
  /** A page of messages, newest first. */
  list(principal: Principal, input: ListMessagesInput): Promise<{ data: Message[]; next_cursor?: string }>;
  /**
   * The page `list` answers, as JSON text: `data` is the text of the array of messages (each the same bytes
   * `JSON.stringify` gives the message `list` returns), built from the kept wire JSON of each message at its current
   * revision (src/messages/message-json-cache.ts); only messages not kept, or changed since, are loaded and
   * serialised. Undefined when the cache is off or the request asks for another shape (`fields`, `select`): then
   * `list` answers.
   */
  listJson(
    principal: Principal,
    input: ListMessagesInput,
  ): Promise<{ data: Uint8Array[]; next_cursor?: string } | undefined>;
  /** One message. */
  find(principal: Principal, input: GetMessageInput): Promise<Message>;
  /** The id of the grant's message with this Message-ID (a mail client's reply names it in In-Reply-To), if any. */
  idByHeaderMessageId(principal: Principal, grantRef: string, headerMessageId: string): Promise<string | undefined>;
  /** The given messages with their cleaned `conversation` (in the order asked; 404 for an unknown id). */
  clean(principal: Principal, input: CleanMessagesInput): Promise<{ data: CleanedMessage[] }>;
  /** The stored raw message: as received, less the attachments a policy removed (src/mail/stages/policy-raw.ts). */
  rawMime(principal: Principal, input: { grant_id: string; message_id: string }): Promise<Buffer>;
  /** Marks read/unread, stars, moves (folders replace the current set) or sets metadata. */
  update(principal: Principal, input: UpdateMessageInput): Promise<Message>;
  /** Moves the message to trash; a message already in trash (or `hard_delete`) is deleted for good. */
  destroy(principal: Principal, input: DeleteMessageInput): Promise<void>;
  /** Records `message.updated` for each changed message (in the caller's transaction); returns their wire form. */
  emitUpdated: (tx: Tx, applicationId: string, rows: MessageRow[]) => Promise<Message[]>;
  /** Deletes stored messages for good, with `message.deleted` for each that is not a draft. */
  destroyForGood: DestroyForGood;
}
