/**
 * @module messages/message-service
 * Messages of a mailbox: list (Nylas filters, keyset pages that stay correct while mail arrives), find, raw
 * MIME, update (read, starred, folders, metadata) and delete (to trash; from trash, for good).
 */
import { and, desc, eq, inArray, lt, or, type SQL } from 'drizzle-orm';
import { readAll, readBlob, readMessageRaw, tables, type Executor, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import { eventRecorder } from '../outbox/index.js';
import type { GrantService } from '../grants/contracts.js';
import { readRawHeaders } from '../mime/index.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';
import type {
  CleanedMessage,
  CleanMessagesInput,
  DeleteMessageInput,
  GetMessageInput,
  ListMessagesInput,
  Message,
  MessageFields,
  UpdateMessageInput,
} from '../schemas/messages.js';
import { createProviders, type Providers } from '../providers/index.js';
import { renderBody } from '../reading/index.js';
import type { DestroyForGood, MessageService, SentStateLookup } from './contracts.js';
import { createMessageJsonCache } from './message-json-cache.js';
import { presentMessages, type MailStore } from './mail-store.js';
import {
  firstPage,
  firstPageKeys,
  messageConditions,
  messagesByIds,
  notDraft,
  PAGE_KEYS,
  pageAfter,
  pageKeysAfter,
  PRESENTED_COLUMNS,
  resolveFolderIds,
} from './message-query-store.js';
import { selectFields, toRawMimeMessage, type MessageRow, type PresentedMessageRow } from './message-mapper.js';

/** Headers returned by `fields=include_basic_headers`. */
const BASIC_HEADERS = new Set([
  'message-id',
  'in-reply-to',
  'references',
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
]);

/** A page's JSON array is kept with its keys up to this size (256 of them at most: 16 MB). */
const PAGE_BYTES_KEPT = 64 * 1024;
/** Pieces of a list's JSON array. */
const OPEN_BRACKET = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE_BRACKET = Buffer.from(']');

/** The trash folder: deleting a message moves it here; deleting it here removes it for good. */
export const TRASH_FOLDER = 'trash';

/** The raw message of a row. */
export async function loadRaw(db: Executor, row: Pick<MessageRow, 'id' | 'seq' | 'rawHash'>): Promise<Buffer> {
  const raw = row.rawHash === null ? await readMessageRaw(db, row.seq) : await readBlob(db, row.rawHash);
  if (!raw) throw new AppError('internal', `The raw message of ${row.id} is missing from the store.`);
  return raw;
}

/** Rows → wire messages in the shape `fields` and `select` ask for. */
export async function presentWithFields(
  db: Executor,
  rows: PresentedMessageRow[],
  fields: MessageFields | undefined,
  select: string | undefined,
): Promise<Message[]> {
  if (fields === 'raw_mime') {
    const out: Message[] = [];
    for (const row of rows) out.push(toRawMimeMessage(row, await loadRaw(db, row)));
    return out;
  }
  const messages = await presentMessages(db, rows);
  if (fields === 'include_headers' || fields === 'include_basic_headers') {
    for (const [index, row] of rows.entries()) {
      const headers = readRawHeaders(await loadRaw(db, row));
      messages[index]!.headers =
        fields === 'include_headers'
          ? headers
          : headers.filter((header) => BASIC_HEADERS.has(header.name.toLowerCase()));
    }
  }
  return select === undefined ? messages : messages.map((message) => selectFields(message, select) as Message);
}

/**
 * The leading rows of a `fields=raw_mime` page whose raw messages fit in `budget` bytes, and always the first: 200
 * messages of 40 MB would otherwise be one 10 GB answer. The page ends early and its cursor continues after it.
 */
export function withinRawBudget<Row extends Pick<MessageRow, 'rawSize'>>(rows: Row[], budget: number): Row[] {
  let total = 0;
  for (const [index, row] of rows.entries()) {
    total += row.rawSize;
    if (total > budget && index > 0) return rows.slice(0, index);
  }
  return rows;
}

/** Validates folder ids against the mailbox (400 naming the unknown one). */
export async function checkFolders(db: Executor, grantId: string, folderIds: string[]): Promise<string[]> {
  const unique = [...new Set(folderIds)];
  const rows = await db
    .select({ id: tables.folders.id })
    .from(tables.folders)
    .where(and(eq(tables.folders.grantId, grantId), inArray(tables.folders.id, unique)));
  const known = new Set(rows.map((row) => row.id));
  const missing = unique.find((id) => !known.has(id));
  if (missing !== undefined) {
    throw new AppError(
      'invalid_request',
      `folders: there is no folder ${JSON.stringify(missing)} in this mailbox; list folders with GET /v3/grants/{grant_id}/folders.`,
      { field: 'folders' },
    );
  }
  return unique;
}

/**
 * Creates the delete for good of stored messages (thread aggregates, attachments, raw MIME) with `message.deleted`
 * recorded for each. Draft rows (a thread deleted with its drafts) go too, but silently: a draft is never a message,
 * not even in a notification. The message service uses it, and so do parts built before it (the sync of connected
 * accounts, policy upkeep).
 */
export function createMessageDestroyer(
  { newId, clock }: Pick<CoreDeps, 'newId' | 'clock'>,
  store: Pick<MailStore, 'destroy'>,
): DestroyForGood {
  const record = eventRecorder({ newId, clock });
  return async function destroyForGood(tx: Tx, applicationId: string, rows: MessageRow[]): Promise<void> {
    const ids = rows.map((row) => row.id);
    const drafts = new Set(
      ids.length === 0
        ? []
        : (
            await tx
              .select({ id: tables.draftDetails.messageId })
              .from(tables.draftDetails)
              .where(inArray(tables.draftDetails.messageId, ids))
          ).map((row) => row.id),
    );
    await store.destroy(tx, rows);
    const at = unixSeconds(clock.now());
    for (const row of rows) {
      if (drafts.has(row.id)) continue;
      await record(tx, {
        applicationId,
        grantId: row.grantId,
        type: 'message.deleted',
        objectId: row.id,
        object: { id: row.id, grant_id: row.grantId, object: 'message', thread_id: row.threadId },
        createdAt: at,
      });
    }
  };
}

/**
 * Creates the message service. `sentState` adds `delivery_status` (and tracking options) to the messages this mailbox
 * sent; `providers` pushes changes of a connected account's messages to its server (default: all hosted).
 */
export function createMessageService(
  { db, newId, clock, config }: CoreDeps,
  grants: GrantService,
  store: MailStore,
  sentState?: SentStateLookup,
  providers: Providers = createProviders(),
): MessageService {
  const record = eventRecorder({ newId, clock });
  const destroyForGood = createMessageDestroyer({ newId, clock }, store);
  const jsonCache = config.messageJsonCacheBytes > 0 ? createMessageJsonCache(config.messageJsonCacheBytes) : undefined;
  /**
   * A page's JSON array by the very keys it was made from. Keys of the usual list are kept while the database is
   * unchanged (`firstPageKeys`, `pageKeysAfter`): the same array means no commit anywhere since, so neither the
   * messages nor their delivery status changed. Lives as long as those keys are kept (at most 256 sets).
   */
  const pageBytes = new WeakMap<object, Buffer>();
  /**
   * Adds `delivery_status` to sent messages, and `tracking_options` with fields=include_tracking_options (not to
   * the raw_mime form, nor when `select` leaves them out).
   */
  async function addDeliveryStatus(
    messages: Message[],
    fields: MessageFields | undefined,
    select: string | undefined,
  ): Promise<Message[]> {
    if (!sentState || fields === 'raw_mime' || messages.length === 0) return messages;
    const wanted = select === undefined ? undefined : new Set(select.split(','));
    if (wanted && !wanted.has('delivery_status') && !wanted.has('tracking_options')) return messages;
    const states = await sentState(messages.map((message) => message.id));
    for (const message of messages) {
      const state = states.get(message.id);
      if (!state) continue;
      if (!wanted || wanted.has('delivery_status')) message.delivery_status = state.deliveryStatus;
      if (fields === 'include_tracking_options' && state.trackingOptions && (!wanted || wanted.has('tracking_options')))
        message.tracking_options = state.trackingOptions;
    }
    return messages;
  }

  async function requireMessage(executor: Executor, grantId: string, messageId: string): Promise<MessageRow> {
    const rows = await executor
      .select()
      .from(tables.messages)
      .where(and(eq(tables.messages.grantId, grantId), eq(tables.messages.id, messageId), notDraft()))
      .limit(1);
    if (!rows[0]) throw notFound('Message', messageId);
    return rows[0];
  }

  /** Records `message.updated` for each changed message; returns their wire form. */
  async function emitUpdated(tx: Tx, applicationId: string, rows: MessageRow[]): Promise<Message[]> {
    const messages = await presentMessages(tx, rows);
    const at = unixSeconds(clock.now());
    for (const message of messages) {
      await record(tx, {
        applicationId,
        grantId: message.grant_id,
        type: 'message.updated',
        objectId: message.id,
        object: message,
        createdAt: at,
      });
    }
    return messages;
  }

  return {
    /** A page of messages, newest first. */
    async list(principal: Principal, input: ListMessagesInput): Promise<{ data: Message[]; next_cursor?: string }> {
      const grant = await grants.require(principal, input.grant_id);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const filters = input.in ? { ...input, in: await resolveFolderIds(db.orm, grant.id, input.in) } : input;
      const filterConditions = messageConditions(grant.id, filters);
      const conditions: (SQL | undefined)[] = [...filterConditions, notDraft()];
      const after = decodeCursor(input.page_token, 2) as [number, number] | undefined;
      if (after) {
        const [date, seq] = after;
        conditions.push(
          or(lt(tables.messages.date, date), and(eq(tables.messages.date, date), lt(tables.messages.seq, seq))),
        );
      }
      // No filter but the mailbox's own: the same query, prepared once.
      const unfiltered = filterConditions.length === 1;
      const rows = unfiltered
        ? after
          ? await pageAfter(db.orm, { grant: grant.id, date: after[0], seq: after[1], limit: limit + 1 })
          : await firstPage(db.orm, { grant: grant.id, limit: limit + 1 })
        : await readAll(
            db.orm,
            db.orm
              .select(PRESENTED_COLUMNS)
              .from(tables.messages)
              .where(and(...conditions))
              .orderBy(desc(tables.messages.date), desc(tables.messages.seq))
              .limit(limit + 1),
          );
      let page = rows.slice(0, limit);
      if (input.fields === 'raw_mime') page = withinRawBudget(page, config.rawMimePageBytes);
      const last = page[page.length - 1];
      const data = await addDeliveryStatus(
        await presentWithFields(db.orm, page, input.fields, input.select),
        input.fields,
        input.select,
      );
      return {
        data,
        ...(rows.length > page.length && last ? { next_cursor: encodeCursor([last.date, last.seq]) } : {}),
      };
    },

    /**
     * The page `list` answers, as JSON text: `data` is the text of the array of messages (each the same bytes
     * `JSON.stringify` gives the message `list` returns), built from the kept wire JSON of each message at its current
     * revision (src/messages/message-json-cache.ts); only messages not kept, or changed since, are loaded and
     * serialised. Undefined when the cache is off or the request asks for another shape (`fields`, `select`): then
     * `list` answers.
     */
    async listJson(
      principal: Principal,
      input: ListMessagesInput,
    ): Promise<{ data: Uint8Array[]; next_cursor?: string } | undefined> {
      if (!jsonCache || input.fields !== undefined || input.select !== undefined) return undefined;
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 2) as [number, number] | undefined;
      let keys: { id: string; rev: number; date: number; seq: number; sent: number }[];
      const ref = input.grant_id;
      let grantId = ref;
      // The usual list (no filter, the grant named by its id): the grant's check and the page in one read.
      if (
        input.in === undefined &&
        messageConditions(ref, input).length === 1 &&
        ref === ref.trim() &&
        !ref.includes('@') &&
        !ref.includes(':')
      ) {
        const owned = { grant: ref, app: principal.applicationId, limit: limit + 1 };
        keys = after
          ? await pageKeysAfter(db.orm, { ...owned, date: after[0], seq: after[1] })
          : await firstPageKeys(db.orm, owned);
        // No row: an empty page, or not the caller's grant (404).
        if (keys.length === 0) await grants.require(principal, ref);
      } else {
        const grant = await grants.require(principal, ref);
        grantId = grant.id;
        const filterConditions = messageConditions(
          grant.id,
          input.in ? { ...input, in: await resolveFolderIds(db.orm, grant.id, input.in) } : input,
        );
        const conditions: (SQL | undefined)[] = [...filterConditions, notDraft()];
        if (after)
          conditions.push(
            or(
              lt(tables.messages.date, after[0]),
              and(eq(tables.messages.date, after[0]), lt(tables.messages.seq, after[1])),
            ),
          );
        keys = await readAll(
          db.orm,
          db.orm
            .select(PAGE_KEYS)
            .from(tables.messages)
            .where(and(...conditions))
            .orderBy(desc(tables.messages.date), desc(tables.messages.seq))
            .limit(limit + 1),
        );
      }
      const page = keys.slice(0, limit);
      const last = page[page.length - 1];
      const cursor = keys.length > page.length && last ? { next_cursor: encodeCursor([last.date, last.seq]) } : {};
      // The same keys (rows kept while the database is unchanged): the same page as last time, nothing to join.
      const whole = pageBytes.get(keys);
      if (whole) return { data: [whole], ...cursor };
      const json = new Map<string, Buffer>();
      const missing: string[] = [];
      for (const key of page) {
        const kept = jsonCache.get(key.id, key.rev);
        if (kept === undefined) missing.push(key.id);
        else json.set(key.id, kept);
      }
      if (missing.length > 0) {
        // Each row is read with its revision: what is kept is never newer than the revision it is kept for (a
        // change after this read raises the revision, and the entry is not used again).
        const rows = await messagesByIds(db.orm, { grant: grantId, ids: JSON.stringify(missing) });
        const messages = await presentMessages(db.orm, rows);
        rows.forEach((row, index) => {
          const bytes = Buffer.from(JSON.stringify(messages[index]));
          jsonCache.set(row.id, row.rev, bytes);
          json.set(row.id, bytes);
        });
      }
      // A message deleted between the two reads is left out; the cursor still follows the page as read.
      const present = page.filter((key) => json.has(key.id));
      const sent = present.filter((key) => key.sent);
      const states = sentState && sent.length > 0 ? await sentState(sent.map((key) => key.id)) : undefined;
      const parts: Uint8Array[] = [OPEN_BRACKET];
      present.forEach((key, index) => {
        if (index > 0) parts.push(COMMA);
        const bytes = json.get(key.id)!;
        const state = states?.get(key.id);
        // `delivery_status` is the last key `list` gives a message: the same bytes as its JSON.stringify.
        if (state)
          parts.push(bytes.subarray(0, -1), Buffer.from(`,"delivery_status":${JSON.stringify(state.deliveryStatus)}}`));
        else parts.push(bytes);
      });
      parts.push(CLOSE_BRACKET);
      // A larger page is handed on in its pieces: the response joins them (one copy, not two).
      if (parts.reduce((total, part) => total + part.length, 0) > PAGE_BYTES_KEPT) return { data: parts, ...cursor };
      const bytes = Buffer.concat(parts);
      pageBytes.set(keys, bytes);
      return { data: [bytes], ...cursor };
    },

    /** One message. */
    async find(principal: Principal, input: GetMessageInput): Promise<Message> {
      const grant = await grants.require(principal, input.grant_id);
      const row = await requireMessage(db.orm, grant.id, input.message_id);
      const [message] = await addDeliveryStatus(
        await presentWithFields(db.orm, [row], input.fields, input.select),
        input.fields,
        input.select,
      );
      return message!;
    },

    /** The given messages with their cleaned `conversation` (in the order asked; 404 for an unknown id). */
    async clean(principal: Principal, input: CleanMessagesInput): Promise<{ data: CleanedMessage[] }> {
      const grant = await grants.require(principal, input.grant_id);
      const rows: MessageRow[] = [];
      for (const id of new Set(input.message_id)) rows.push(await requireMessage(db.orm, grant.id, id));
      const messages = await presentMessages(db.orm, rows);
      // Read by src/reading as agents' bodies are: plain text (Markdown with html_as_markdown), quoted history
      // removed but answers written between quoted lines kept, hidden text gone. Each option keeps Nylas' default.
      const options = {
        format: input.html_as_markdown === true ? ('markdown' as const) : ('text' as const),
        links: input.ignore_links === false ? ('keep' as const) : ('drop' as const),
        images:
          input.ignore_images !== false && input.images_as_markdown === false ? ('drop' as const) : ('alt' as const),
        tables: input.ignore_tables === false ? ('markdown' as const) : ('flatten' as const),
        quoted: 'remove' as const,
        signatures: input.remove_conclusion_phrases === false ? ('keep' as const) : ('remove' as const),
        signOff: 'remove' as const,
        disclaimers: input.remove_conclusion_phrases === false ? ('keep' as const) : ('remove' as const),
      };
      return {
        data: messages.map((message) => ({
          ...message,
          conversation: renderBody({ html: message.body ?? '' }, options).body,
        })),
      };
    },

    /** The message exactly as received. */
    async rawMime(principal: Principal, input: { grant_id: string; message_id: string }): Promise<Buffer> {
      const grant = await grants.require(principal, input.grant_id);
      return loadRaw(db.orm, await requireMessage(db.orm, grant.id, input.message_id));
    },

    /** Marks read/unread, stars, moves (folders replace the current set) or sets metadata. */
    async update(principal: Principal, input: UpdateMessageInput): Promise<Message> {
      const grant = await grants.require(principal, input.grant_id);
      return db.write(async (tx) => {
        const row = await requireMessage(tx, grant.id, input.message_id);
        const folders = input.folders ? await checkFolders(tx, grant.id, input.folders) : undefined;
        const changes = { unread: input.unread, starred: input.starred, folders, metadata: input.metadata };
        const [updated] = await store.change(tx, [row], changes);
        await providers.of(grant).changed(tx, grant, [updated!], changes);
        const [message] = await emitUpdated(tx, principal.applicationId, [updated!]);
        return message!;
      });
    },

    /** Moves the message to trash; a message already in trash (or `hard_delete`) is deleted for good. */
    async destroy(principal: Principal, input: DeleteMessageInput): Promise<void> {
      const grant = await grants.require(principal, input.grant_id);
      await db.write(async (tx) => {
        const row = await requireMessage(tx, grant.id, input.message_id);
        if (input.hard_delete === true || row.folders.includes(TRASH_FOLDER)) {
          await providers.of(grant).destroying(tx, grant, [row]);
          await destroyForGood(tx, principal.applicationId, [row]);
          return;
        }
        const [updated] = await store.change(tx, [row], { folders: [TRASH_FOLDER] });
        await providers.of(grant).changed(tx, grant, [updated!], { folders: [TRASH_FOLDER] });
        await emitUpdated(tx, principal.applicationId, [updated!]);
      });
    },

    emitUpdated,
    destroyForGood,
  };
}

export type { DestroyForGood, MessageService, SentStateLookup } from './contracts.js';
