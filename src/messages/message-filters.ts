/**
 * @module messages/message-filters
 * The Nylas list filters as SQL conditions on `messages` (threads reuse them: a thread matches when one of its
 * messages does).
 */
import { and, eq, gt, inArray, lt, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { matchesSearch, tables, toFtsQuery, type Executor } from '../../storage/index.js';

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
