/**
 * @module messages/thread-service
 * Threads (conversations) of a mailbox: list with the Nylas filters, find, update every message of a thread,
 * delete (to trash; a thread whose messages are all in trash is deleted for good).
 */
import { and, asc, desc, eq, gt, inArray, lt, or, type SQL } from 'drizzle-orm';
import { tables, type Executor } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { notFound } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';
import type { Draft } from '../schemas/drafts.js';
import type { Message } from '../schemas/messages.js';
import type {
  DeleteThreadInput,
  GetThreadInput,
  ListThreadsInput,
  Thread,
  UpdateThreadInput,
} from '../schemas/threads.js';
import type { MailStore, MessageService, ThreadService } from './contracts.js';
import { presentMessages } from './mail-store.js';
import {
  messageConditions,
  notDraft,
  resolveFolderIds,
  threadInFolders,
  type MessageFilterInput,
} from './message-query-store.js';
import { selectFields, toThread, type ThreadRow } from './message-mapper.js';
import { checkFolders, TRASH_FOLDER } from './message-writes.js';
import { createProviders, type Providers } from '../providers/index.js';

/** Filters a thread answers from its own columns; the rest look at its messages. */
const THREAD_LEVEL = new Set<keyof MessageFilterInput>([
  'unread',
  'starred',
  'in',
  'has_attachment',
  'received_before',
  'received_after',
  'thread_id',
]);

/**
 * What threads ask of the drafts (drafts are rows of `messages` in the `drafts` folder with a draft id of their own):
 * `draftIdsOf` the draft ids of the given rows, for `draft_ids` / `message_ids`; `draftsOf` the wire drafts of the given
 * rows, for a thread whose newest entry is a draft (its `latest_draft_or_message` is then the Draft).
 */
export interface DraftLookup {
  draftIdsOf(messageIds: string[]): Promise<Map<string, string>>;
  draftsOf(messageIds: string[]): Promise<Map<string, Draft>>;
}

/**
 * Creates the thread service; without `drafts`, every row counts as a message. `providers` pushes changes of a
 * connected account's threads to its server (default: all hosted).
 */
export function createThreadService(
  { db }: CoreDeps,
  grants: GrantService,
  store: MailStore,
  messages: MessageService,
  drafts?: DraftLookup,
  providers: Providers = createProviders(),
): ThreadService {
  const threads = tables.threads;

  async function requireThread(executor: Executor, grantId: string, threadId: string): Promise<ThreadRow> {
    const rows = await executor
      .select()
      .from(threads)
      .where(and(eq(threads.grantId, grantId), eq(threads.id, threadId)))
      .limit(1);
    if (!rows[0]) throw notFound('Thread', threadId);
    return rows[0];
  }

  async function present(executor: Executor, rows: ThreadRow[], select: string | undefined): Promise<Thread[]> {
    if (rows.length === 0) return [];
    const ids = rows.map((row) => row.id);
    const members = await executor
      .select({ id: tables.messages.id, threadId: tables.messages.threadId })
      .from(tables.messages)
      .where(inArray(tables.messages.threadId, ids))
      .orderBy(asc(tables.messages.date), asc(tables.messages.seq));
    const draftIdOf = drafts ? await drafts.draftIdsOf(members.map((member) => member.id)) : new Map<string, string>();
    const messageIds = new Map<string, string[]>();
    const draftIds = new Map<string, string[]>();
    for (const member of members) {
      const draftId = draftIdOf.get(member.id);
      if (draftId !== undefined) draftIds.set(member.threadId, [...(draftIds.get(member.threadId) ?? []), draftId]);
      else messageIds.set(member.threadId, [...(messageIds.get(member.threadId) ?? []), member.id]);
    }
    const latestIds = rows.map((row) => row.latestMessageId);
    const latestDrafts = drafts
      ? await drafts.draftsOf(latestIds.filter((id) => draftIdOf.has(id)))
      : new Map<string, Draft>();
    const latestRows = await executor
      .select()
      .from(tables.messages)
      .where(
        inArray(
          tables.messages.id,
          latestIds.filter((id) => !latestDrafts.has(id)),
        ),
      );
    const latest = new Map<string, Message | Draft>(
      (await presentMessages(executor, latestRows)).map((message) => [message.id, message]),
    );
    for (const [rowId, draft] of latestDrafts) latest.set(rowId, draft);
    return rows.map((row) => {
      const thread = toThread(
        row,
        messageIds.get(row.id) ?? [],
        latest.get(row.latestMessageId),
        draftIds.get(row.id) ?? [],
      );
      return select === undefined ? thread : (selectFields(thread, select) as Thread);
    });
  }

  /** The thread's rows, oldest first: its messages only, or (`withDrafts`) its drafts' rows too. */
  async function messagesOf(executor: Executor, threadId: string, withDrafts = false) {
    return executor
      .select()
      .from(tables.messages)
      .where(and(eq(tables.messages.threadId, threadId), withDrafts ? undefined : notDraft()))
      .orderBy(asc(tables.messages.date), asc(tables.messages.seq));
  }

  return {
    /** A page of threads, the one with the newest message first. */
    async list(principal: Principal, input: ListThreadsInput): Promise<{ data: Thread[]; next_cursor?: string }> {
      const grant = await grants.require(principal, input.grant_id);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const conditions: (SQL | undefined)[] = [eq(threads.grantId, grant.id)];
      if (input.unread !== undefined) conditions.push(eq(threads.unread, input.unread));
      if (input.starred !== undefined) conditions.push(eq(threads.starred, input.starred));
      if (input.has_attachment !== undefined) conditions.push(eq(threads.hasAttachments, input.has_attachment));
      if (input.latest_message_before !== undefined)
        conditions.push(lt(threads.latestMessageDate, input.latest_message_before));
      if (input.latest_message_after !== undefined)
        conditions.push(gt(threads.latestMessageDate, input.latest_message_after));
      if (input.in && input.in.length > 0) {
        const folderIds = await resolveFolderIds(db.orm, grant.id, input.in);
        conditions.push(threadInFolders(folderIds));
      }
      const messageLevel = messageConditions(grant.id, input, THREAD_LEVEL);
      if (messageLevel.length > 1) {
        // A thread matches through its messages, never through a draft's text or addresses.
        conditions.push(
          inArray(
            threads.id,
            db.orm
              .select({ id: tables.messages.threadId })
              .from(tables.messages)
              .where(and(...messageLevel, notDraft())),
          ),
        );
      }
      const after = decodeCursor(input.page_token, 2) as [number, number] | undefined;
      if (after) {
        const [date, seq] = after;
        conditions.push(
          or(lt(threads.latestMessageDate, date), and(eq(threads.latestMessageDate, date), lt(threads.latestSeq, seq))),
        );
      }
      const rows = await db.orm
        .select()
        .from(threads)
        .where(and(...conditions))
        .orderBy(desc(threads.latestMessageDate), desc(threads.latestSeq))
        .limit(limit + 1);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        data: await present(db.orm, page, input.select),
        ...(rows.length > limit && last ? { next_cursor: encodeCursor([last.latestMessageDate, last.latestSeq]) } : {}),
      };
    },

    /** One thread with its message ids and latest message. */
    async find(principal: Principal, input: GetThreadInput): Promise<Thread> {
      const grant = await grants.require(principal, input.grant_id);
      const [thread] = await present(db.orm, [await requireThread(db.orm, grant.id, input.thread_id)], input.select);
      return thread!;
    },

    /** Applies read, starred or folders to every message of the thread (its drafts stay as they are). */
    async update(principal: Principal, input: UpdateThreadInput): Promise<Thread> {
      const grant = await grants.require(principal, input.grant_id);
      return db.write(async (tx) => {
        await requireThread(tx, grant.id, input.thread_id);
        const folders = input.folders ? await checkFolders(tx, grant.id, input.folders) : undefined;
        const changes = { unread: input.unread, starred: input.starred, folders };
        const changed = await store.change(tx, await messagesOf(tx, input.thread_id), changes);
        await providers.of(grant).changed(tx, grant, changed, changes);
        await messages.emitUpdated(tx, principal.applicationId, changed);
        const [thread] = await present(tx, [await requireThread(tx, grant.id, input.thread_id)], undefined);
        return thread!;
      });
    },

    /**
     * Moves the thread's messages to trash (its drafts stay drafts); the thread is still found, with `trash` among its
     * folders. When all its messages already are in trash, deletes the thread for good (drafts included): then 404.
     */
    async destroy(principal: Principal, input: DeleteThreadInput): Promise<void> {
      const grant = await grants.require(principal, input.grant_id);
      await db.write(async (tx) => {
        await requireThread(tx, grant.id, input.thread_id);
        const rows = await messagesOf(tx, input.thread_id);
        if (rows.every((row) => row.folders.includes(TRASH_FOLDER))) {
          // For good: the thread goes, with the drafts written in it.
          const all = await messagesOf(tx, input.thread_id, true);
          await providers.of(grant).destroying(tx, grant, all);
          await messages.destroyForGood(tx, principal.applicationId, all);
          return;
        }
        const changed = await store.change(tx, rows, { folders: [TRASH_FOLDER] });
        await providers.of(grant).changed(tx, grant, changed, { folders: [TRASH_FOLDER] });
        await messages.emitUpdated(tx, principal.applicationId, changed);
      });
    },
  };
}
