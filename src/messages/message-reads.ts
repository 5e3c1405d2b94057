/**
 * @module messages/message-reads
 * The message service's reads (./message-service.ts): list (Nylas filters, keyset pages that stay correct while mail
 * arrives), the list as JSON text from kept wire JSON, find, clean and raw MIME; the shapes `fields` and `select` ask for.
 */
import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import { readAll, readBlob, readMessageRaw, tables, type Executor } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import { readRawHeaders } from '../mime/index.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';
import type {
  CleanedMessage,
  CleanMessagesInput,
  GetMessageInput,
  ListMessagesInput,
  Message,
  MessageFields,
} from '../schemas/messages.js';
import type { TrustGrant } from '../trust/index.js';
import { renderBody } from '../reading/index.js';
import { presentMessages } from './mail-store.js';
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
import { requireMessage, type MessageState } from './message-state.js';

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

/** The raw message of a row. */
export async function loadRaw(db: Executor, row: Pick<MessageRow, 'id' | 'seq' | 'rawHash'>): Promise<Buffer> {
  const raw = row.rawHash === null ? await readMessageRaw(db, row.seq) : await readBlob(db, row.rawHash);
  if (!raw) throw new AppError('internal', `The raw message of ${row.id} is missing from the store.`);
  return raw;
}

/**
 * Rows → wire messages in the shape `fields` and `select` ask for; with `withTrust`, `trust` added to them (see
 * {@link addTrust}), made from the whole messages before `select` leaves out what the verdicts read.
 */
async function presentWithFields(
  state: MessageState,
  grant: TrustGrant,
  rows: PresentedMessageRow[],
  fields: MessageFields | undefined,
  select: string | undefined,
  withTrust = false,
): Promise<Message[]> {
  const db = state.db.orm;
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
  const selected =
    select === undefined ? messages : messages.map((message) => selectFields(message, select) as Message);
  return withTrust ? addTrust(state, grant, messages, selected, select) : selected;
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

/**
 * Adds `delivery_status` to sent messages, and `tracking_options` with fields=include_tracking_options (not to
 * the raw_mime form, nor when `select` leaves them out).
 */
export async function addDeliveryStatus(
  state: MessageState,
  messages: Message[],
  fields: MessageFields | undefined,
  select: string | undefined,
): Promise<Message[]> {
  if (!state.sentState || fields === 'raw_mime' || messages.length === 0) return messages;
  const wanted = select === undefined ? undefined : new Set(select.split(','));
  if (wanted && !wanted.has('delivery_status') && !wanted.has('tracking_options') && !wanted.has('provenance'))
    return messages;
  const states = await state.sentState(messages.map((message) => message.id));
  for (const message of messages) {
    const sent = states.get(message.id);
    if (!sent) continue;
    if (!wanted || wanted.has('delivery_status')) message.delivery_status = sent.deliveryStatus;
    if (fields === 'include_tracking_options' && sent.trackingOptions && (!wanted || wanted.has('tracking_options')))
      message.tracking_options = sent.trackingOptions;
    if (sent.provenance && (!wanted || wanted.has('provenance'))) message.provenance = sent.provenance;
  }
  return messages;
}

/** A page of messages, newest first. */
export async function listMessages(
  state: MessageState,
  principal: Principal,
  input: ListMessagesInput,
): Promise<{ data: Message[]; next_cursor?: string }> {
  const grant = await state.grants.require(principal, input.grant_id);
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const filters = input.in ? { ...input, in: await resolveFolderIds(state.db.orm, grant.id, input.in) } : input;
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
      ? await pageAfter(state.db.orm, { grant: grant.id, date: after[0], seq: after[1], limit: limit + 1 })
      : await firstPage(state.db.orm, { grant: grant.id, limit: limit + 1 })
    : await readAll(
        state.db.orm,
        state.db.orm
          .select(PRESENTED_COLUMNS)
          .from(tables.messages)
          .where(and(...conditions))
          .orderBy(desc(tables.messages.date), desc(tables.messages.seq))
          .limit(limit + 1),
      );
  let page = rows.slice(0, limit);
  if (input.fields === 'raw_mime') page = withinRawBudget(page, state.config.rawMimePageBytes);
  const last = page[page.length - 1];
  const data = await addDeliveryStatus(
    state,
    // `trust` on a list only when `select` names it: the list from kept JSON (listMessagesJson) answers the same bytes.
    await presentWithFields(state, grant, page, input.fields, input.select, input.select !== undefined),
    input.fields,
    input.select,
  );
  return {
    data,
    ...(rows.length > page.length && last ? { next_cursor: encodeCursor([last.date, last.seq]) } : {}),
  };
}

/**
 * The page `list` answers, as JSON text: `data` is the text of the array of messages (each the same bytes
 * `JSON.stringify` gives the message `list` returns), built from the kept wire JSON of each message at its current
 * revision (src/messages/message-json-cache.ts); only messages not kept, or changed since, are loaded and
 * serialised. Undefined when the cache is off or the request asks for another shape (`fields`, `select`): then
 * `list` answers.
 */
export async function listMessagesJson(
  state: MessageState,
  principal: Principal,
  input: ListMessagesInput,
): Promise<{ data: Uint8Array[]; next_cursor?: string } | undefined> {
  const { jsonCache } = state;
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
      ? await pageKeysAfter(state.db.orm, { ...owned, date: after[0], seq: after[1] })
      : await firstPageKeys(state.db.orm, owned);
    // No row: an empty page, or not the caller's grant (404).
    if (keys.length === 0) await state.grants.require(principal, ref);
  } else {
    const grant = await state.grants.require(principal, ref);
    grantId = grant.id;
    const filterConditions = messageConditions(
      grant.id,
      input.in ? { ...input, in: await resolveFolderIds(state.db.orm, grant.id, input.in) } : input,
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
      state.db.orm,
      state.db.orm
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
  const whole = state.pageBytes.get(keys);
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
    const rows = await messagesByIds(state.db.orm, { grant: grantId, ids: JSON.stringify(missing) });
    const messages = await presentMessages(state.db.orm, rows);
    rows.forEach((row, index) => {
      const bytes = Buffer.from(JSON.stringify(messages[index]));
      jsonCache.set(row.id, row.rev, bytes);
      json.set(row.id, bytes);
    });
  }
  // A message deleted between the two reads is left out; the cursor still follows the page as read.
  const present = page.filter((key) => json.has(key.id));
  const sent = present.filter((key) => key.sent);
  const states = state.sentState && sent.length > 0 ? await state.sentState(sent.map((key) => key.id)) : undefined;
  const parts: Uint8Array[] = [OPEN_BRACKET];
  present.forEach((key, index) => {
    if (index > 0) parts.push(COMMA);
    const bytes = json.get(key.id)!;
    const delivery = states?.get(key.id);
    // `delivery_status` (then `provenance`) are the last keys `list` gives a message: the same bytes as its
    // JSON.stringify.
    if (delivery) {
      const provenance = delivery.provenance ? `,"provenance":${JSON.stringify(delivery.provenance)}` : '';
      parts.push(
        bytes.subarray(0, -1),
        Buffer.from(`,"delivery_status":${JSON.stringify(delivery.deliveryStatus)}${provenance}}`),
      );
    } else parts.push(bytes);
  });
  parts.push(CLOSE_BRACKET);
  // A larger page is handed on in its pieces: the response joins them (one copy, not two).
  if (parts.reduce((total, part) => total + part.length, 0) > PAGE_BYTES_KEPT) return { data: parts, ...cursor };
  const bytes = Buffer.concat(parts);
  state.pageBytes.set(keys, bytes);
  return { data: [bytes], ...cursor };
}

/**
 * Adds `trust` to the received ones of `selected` (the raw_mime form has none; nor is it added when `select` leaves it
 * out). The verdicts are made from `whole`, the same messages before `select`: it may have left out what they read.
 */
async function addTrust(
  state: MessageState,
  grant: TrustGrant,
  whole: Message[],
  selected: Message[],
  select: string | undefined,
): Promise<Message[]> {
  if (whole.length === 0) return selected;
  if (select !== undefined && !select.split(',').includes('trust')) return selected;
  const verdicts = await state.trustReader.assess(grant, whole);
  for (const message of selected) {
    const trust = verdicts.get(message.id);
    if (trust) message.trust = trust;
  }
  return selected;
}

/** One message. */
export async function findMessage(state: MessageState, principal: Principal, input: GetMessageInput): Promise<Message> {
  const grant = await state.grants.require(principal, input.grant_id);
  const row = await requireMessage(state.db.orm, grant.id, input.message_id);
  const [message] = await addDeliveryStatus(
    state,
    await presentWithFields(state, grant, [row], input.fields, input.select, true),
    input.fields,
    input.select,
  );
  return message!;
}

/** The given messages with their cleaned `conversation` (in the order asked; 404 for an unknown id). */
export async function cleanMessages(
  state: MessageState,
  principal: Principal,
  input: CleanMessagesInput,
): Promise<{ data: CleanedMessage[] }> {
  const grant = await state.grants.require(principal, input.grant_id);
  const rows: MessageRow[] = [];
  for (const id of new Set(input.message_id)) rows.push(await requireMessage(state.db.orm, grant.id, id));
  const messages = await presentMessages(state.db.orm, rows);
  // Read by src/reading as agents' bodies are: plain text (Markdown with html_as_markdown), quoted history
  // removed but answers written between quoted lines kept, hidden text gone. Each option keeps Nylas' default.
  const options = {
    format: input.html_as_markdown === true ? ('markdown' as const) : ('text' as const),
    links: input.ignore_links === false ? ('keep' as const) : ('drop' as const),
    images: input.ignore_images !== false && input.images_as_markdown === false ? ('drop' as const) : ('alt' as const),
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
}

/** The stored raw message: as received, less the attachments a policy removed (src/mail/stages/policy-raw.ts). */
export async function rawMime(
  state: MessageState,
  principal: Principal,
  input: { grant_id: string; message_id: string },
): Promise<Buffer> {
  const grant = await state.grants.require(principal, input.grant_id);
  return loadRaw(state.db.orm, await requireMessage(state.db.orm, grant.id, input.message_id));
}
