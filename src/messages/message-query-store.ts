/**
 * @module messages/message-query-store
 * The SQL of reading messages and threads: the Nylas list filters as SQL conditions on `messages` (threads reuse
 * them: a thread matches when one of its messages does), a thread's folders, and the prepared reads of a mailbox's
 * pages and of messages by id.
 */
import { and, desc, eq, gt, inArray, lt, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { matchesSearch, preparedRead, tables, toFtsQuery, type Executor, type Orm } from '../../storage/index.js';
import type { PresentedMessageRow } from './message-mapper.js';

/** Filters that apply to messages. */
export interface MessageFilterInput {
  subject?: string | undefined;
  any_email?: string[] | undefined;
  from?: string[] | undefined;
  to?: string[] | undefined;
  cc?: string[] | undefined;
  bcc?: string[] | undefined;
  in?: string[] | undefined;
  unread?: boolean | undefined;
  starred?: boolean | undefined;
  thread_id?: string | undefined;
  received_before?: number | undefined;
  received_after?: number | undefined;
  has_attachment?: boolean | undefined;
  search_query_native?: string | undefined;
}

const messages = tables.messages;

/** `column` (a JSON array of `{name, email}`) holds one of `emails` (case-insensitive). */
function hasAddress(column: SQLWrapper, emails: string[]): SQL {
  const list = sql.join(
    emails.map((email) => sql`${email.trim().toLowerCase()}`),
    sql`, `,
  );
  return sql`EXISTS (SELECT 1 FROM json_each(${column}) WHERE lower(json_extract(json_each.value, '$.email')) IN (${list}))`;
}

/** Folder references → folder ids of the grant: ids pass through, folder names are accepted too. */
export async function resolveFolderIds(db: Executor, grantId: string, references: string[]): Promise<string[]> {
  const rows = await db
    .select({ id: tables.folders.id, name: tables.folders.name })
    .from(tables.folders)
    .where(
      and(
        eq(tables.folders.grantId, grantId),
        or(inArray(tables.folders.id, references), inArray(tables.folders.name, references)),
      ),
    );
  const ids = new Set(references.filter((reference) => rows.some((row) => row.id === reference)));
  for (const row of rows) if (references.includes(row.name)) ids.add(row.id);
  // Unknown references stay as they are, so they match nothing rather than everything.
  return ids.size > 0 ? [...ids] : references;
}

/**
 * Rows that are messages, not drafts: a draft is stored as a row of `messages` (its current version) with a
 * `draft_details` row, and is answered only as a Draft (drafts API, a thread's draft_ids), never as a message.
 */
export function notDraft(): SQL {
  return sql`NOT EXISTS (SELECT 1 FROM ${tables.draftDetails} WHERE ${tables.draftDetails.messageId} = ${messages.id})`;
}

/** Messages in one of the folders. */
export function inFolders(folderIds: string[]): SQL {
  return sql`EXISTS (SELECT 1 FROM ${tables.messageFolders} WHERE ${tables.messageFolders.messageId} = ${messages.id} AND ${inArray(tables.messageFolders.folderId, folderIds)})`;
}

/**
 * The conditions of the message filters (the grant condition included). `in` must already be resolved to ids.
 * Conditions that `skip` names are left out (threads apply those on their own columns).
 */
export function messageConditions(
  grantId: string,
  filters: MessageFilterInput,
  skip: ReadonlySet<keyof MessageFilterInput> = new Set(),
): SQL[] {
  const use = (key: keyof MessageFilterInput) => filters[key] !== undefined && !skip.has(key);
  const conditions: SQL[] = [eq(messages.grantId, grantId)];
  if (use('subject') && filters.subject)
    conditions.push(sql`instr(lower(${messages.subject}), ${filters.subject.toLowerCase()}) > 0`);
  if (use('from') && filters.from!.length > 0) conditions.push(hasAddress(messages.fromAddresses, filters.from!));
  if (use('to') && filters.to!.length > 0) conditions.push(hasAddress(messages.toAddresses, filters.to!));
  if (use('cc') && filters.cc!.length > 0) conditions.push(hasAddress(messages.ccAddresses, filters.cc!));
  if (use('bcc') && filters.bcc!.length > 0) conditions.push(hasAddress(messages.bccAddresses, filters.bcc!));
  if (use('any_email') && filters.any_email!.length > 0) {
    const emails = filters.any_email!;
    conditions.push(
      or(
        hasAddress(messages.fromAddresses, emails),
        hasAddress(messages.toAddresses, emails),
        hasAddress(messages.ccAddresses, emails),
        hasAddress(messages.bccAddresses, emails),
      )!,
    );
  }
  if (use('in') && filters.in!.length > 0) conditions.push(inFolders(filters.in!));
  if (use('unread')) conditions.push(eq(messages.unread, filters.unread!));
  if (use('starred')) conditions.push(eq(messages.starred, filters.starred!));
  if (use('thread_id')) conditions.push(eq(messages.threadId, filters.thread_id!));
  if (use('received_before')) conditions.push(lt(messages.date, filters.received_before!));
  if (use('received_after')) conditions.push(gt(messages.date, filters.received_after!));
  if (use('has_attachment')) conditions.push(eq(messages.hasAttachments, filters.has_attachment!));
  if (use('search_query_native')) {
    const query = toFtsQuery(filters.search_query_native!);
    // A query with no searchable word matches nothing.
    conditions.push(query === undefined ? sql`0` : matchesSearch(messages.seq, query));
  }
  return conditions;
}

/** Threads in one of the folders (ids), by the thread's own list of folders. */
export function threadInFolders(folderIds: string[]): SQL {
  const list = sql.join(
    folderIds.map((id) => sql`${id}`),
    sql`, `,
  );
  return sql`EXISTS (SELECT 1 FROM json_each(${tables.threads.folders}) WHERE json_each.value IN (${list}))`;
}

/** The columns of {@link PresentedMessageRow}, selected by lists of messages. */
export const PRESENTED_COLUMNS = {
  id: tables.messages.id,
  grantId: tables.messages.grantId,
  threadId: tables.messages.threadId,
  seq: tables.messages.seq,
  date: tables.messages.date,
  subject: tables.messages.subject,
  fromAddresses: tables.messages.fromAddresses,
  toAddresses: tables.messages.toAddresses,
  ccAddresses: tables.messages.ccAddresses,
  bccAddresses: tables.messages.bccAddresses,
  replyToAddresses: tables.messages.replyToAddresses,
  snippet: tables.messages.snippet,
  body: tables.messages.body,
  bodyHash: tables.messages.bodyHash,
  folders: tables.messages.folders,
  unread: tables.messages.unread,
  starred: tables.messages.starred,
  metadata: tables.messages.metadata,
  rawHash: tables.messages.rawHash,
  rawSize: tables.messages.rawSize,
  verdict: tables.messages.verdict,
} satisfies { [Key in keyof PresentedMessageRow]: (typeof tables.messages)[Key] };

/** The condition of a page of a mailbox with no filter (the usual list): the first, or the one after a cursor. */
const pageWhere = (after: boolean) =>
  and(
    eq(tables.messages.grantId, sql.placeholder('grant')),
    notDraft(),
    after
      ? or(
          lt(tables.messages.date, sql.placeholder('date')),
          and(eq(tables.messages.date, sql.placeholder('date')), lt(tables.messages.seq, sql.placeholder('seq'))),
        )
      : undefined,
  );
/** Newest first; `seq` breaks ties of one date. */
const pageOrder = () => [desc(tables.messages.date), desc(tables.messages.seq)] as const;

/** Such a page, as `list` below reads it for that case, its SQL built once. */
export const firstPage = preparedRead((orm: Orm) =>
  orm
    .select(PRESENTED_COLUMNS)
    .from(tables.messages)
    .where(pageWhere(false))
    .orderBy(...pageOrder())
    .limit(sql.placeholder('limit')),
);
export const pageAfter = preparedRead((orm: Orm) =>
  orm
    .select(PRESENTED_COLUMNS)
    .from(tables.messages)
    .where(pageWhere(true))
    .orderBy(...pageOrder())
    .limit(sql.placeholder('limit')),
);

/**
 * What a list's JSON form reads first: a page's order, cursor and revisions, and no message content; `sent` says the
 * message is a copy this mailbox sent (only those have a delivery status to look up).
 */
export const PAGE_KEYS = {
  id: tables.messages.id,
  rev: tables.messages.rev,
  date: tables.messages.date,
  seq: tables.messages.seq,
  // Spelled out: in a select list drizzle names columns without their table, and `"id"` would be the subquery's own.
  sent: sql<number>`EXISTS (SELECT 1 FROM "outbound_messages" WHERE "outbound_messages"."message_id" = "messages"."id")`,
};
/**
 * The keys of a page of a mailbox named by its id, in one statement with the check that the grant is the caller's
 * (`app`): no row when it is not (the caller then tells a missing grant from an empty page).
 */
const ownedPage = (after: boolean) =>
  and(
    pageWhere(after),
    sql`EXISTS (SELECT 1 FROM ${tables.grants} WHERE ${tables.grants.id} = ${sql.placeholder('grant')} AND ${tables.grants.applicationId} = ${sql.placeholder('app')})`,
  );
// Kept while the database is unchanged: a mailbox polled between two arrivals is answered without a query.
export const firstPageKeys = preparedRead(
  (orm: Orm) =>
    orm
      .select(PAGE_KEYS)
      .from(tables.messages)
      .where(ownedPage(false))
      .orderBy(...pageOrder())
      .limit(sql.placeholder('limit')),
  { memo: 256 },
);
export const pageKeysAfter = preparedRead(
  (orm: Orm) =>
    orm
      .select(PAGE_KEYS)
      .from(tables.messages)
      .where(ownedPage(true))
      .orderBy(...pageOrder())
      .limit(sql.placeholder('limit')),
  { memo: 256 },
);
/** Messages of a mailbox by id (ids as one JSON array), with their revision. */
export const messagesByIds = preparedRead((orm: Orm) =>
  orm
    .select({ ...PRESENTED_COLUMNS, rev: tables.messages.rev })
    .from(tables.messages)
    .where(
      and(
        eq(tables.messages.grantId, sql.placeholder('grant')),
        sql`${tables.messages.id} IN (SELECT value FROM json_each(${sql.placeholder('ids')}))`,
        notDraft(),
      ),
    ),
);

/** The id of a grant's message (not a draft) with this Message-ID (as stored: no angle brackets), if any. */
export async function messageIdByHeader(
  db: Executor,
  grantId: string,
  headerMessageId: string,
): Promise<string | undefined> {
  const [row] = await db
    .select({ id: tables.messages.id })
    .from(tables.messages)
    .where(
      and(
        eq(tables.messages.grantId, grantId),
        eq(tables.messages.headerMessageId, headerMessageId.replace(/^<|>$/g, '').trim()),
        notDraft(),
      ),
    )
    .limit(1);
  return row?.id;
}
