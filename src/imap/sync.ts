/**
 * @module imap/sync
 * The sync in of a connected IMAP account: one pass over its mailbox on a logged-in imapflow connection.
 *
 * - **Folders.** LIST, mapped by ./folders.ts to `folders` rows (system roles, or an id made for the path) and kept in
 *   step in `imap_folders`: new folders added, a folder gone from the server removed with the links of its messages
 *   (a message left without a link is deleted), a folder renamed (a new path with the UIDVALIDITY of one gone) moved
 *   with its messages.
 * - **Initial sync**, per folder: the UIDs of the last `sync_days` days (UID SEARCH SINCE), newest first, fetched in
 *   chunks of {@link CHUNK} (UID, flags, INTERNALDATE, MODSEQ, source), so memory holds a chunk or two whatever the
 *   mailbox's size; messages are handed to the store as they arrive, {@link GROUP} at a time (pipelined: the next
 *   chunk is fetched while the last one is written). After each chunk, the folder's `initial_lowest_uid` and the
 *   account's `sync_done` move on; a pass that stopped (dropped connection, restart) resumes below that UID, and
 *   skips UIDs already linked.
 * - **Each message** goes through the store's ingest path (`inbound.storeFetchedMany`: parsed once, on the writer
 *   thread or the parser pool, stored with its thread, attachments, search entry, `message.created` event and its
 *   `imap_messages` link in one transaction, shared with the others of its group; one failing fails alone). `\Seen`
 *   is `unread: false`, `\Flagged` is `starred`.
 * - **Drafts folder.** A message there with the Message-ID of one of the grant's drafts is a new version of that
 *   draft (edited in another client): the draft keeps its id and now points to it. Any other is a new draft.
 * - **Changes** after the initial sync: new UIDs from the folder's `uid_next`; flags changed (with CONDSTORE: FETCH
 *   CHANGEDSINCE the stored HIGHESTMODSEQ, nothing at all when it has not moved; without: the flags of every linked
 *   UID) update the message (`message.updated`); UIDs gone from the server delete their link, and a message left
 *   without one (`message.deleted`): with QRESYNC those the server reports VANISHED (to a SELECT naming the folder's
 *   last state, or while the folder stays selected), else found by comparing UIDs. A new UIDVALIDITY drops the
 *   folder's links and syncs it again.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { and, eq, gte, inArray, sql } from 'drizzle-orm';
import type { ImapFlow, MailboxLockOptions, MailboxObject } from 'imapflow';
import { tables, type Tx } from '../../storage/index.js';
import { imapAccounts, imapFolders, imapMessages } from '../../storage/schema/connected.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { deletedEvent, eventRecorder } from '../outbox/index.js';
import { toFolder, grantOf } from '../grants/index.js';
import { MAX_MESSAGE_BYTES, type FetchedMessage, type ImapLinkRow } from '../mail/index.js';
import type { ParsedMessage } from '../mime/index.js';
import { presentMessages, type MailStore, type MessageRow } from '../messages/index.js';
import { mapFolders, ROLE_ORDER, type ListedFolder } from './folders.js';
import type { FetchSession } from './fetch-thread.js';

/** UIDs fetched per FETCH command during the initial sync (and for a backlog of new mail). */
export const CHUNK = 500;

/**
 * Least time between two progress records of an initial sync: each is a write on this thread, which takes the write
 * lock from the mail writer thread for a moment. The resume point is exact whatever the interval (UIDs already
 * linked are skipped).
 */
const PROGRESS_INTERVAL_MS = 1_000;

/** Messages being stored at once (the writer groups them into shared transactions), and their bytes at most. */
const IN_FLIGHT = 512;
const IN_FLIGHT_BYTES = 8 * 1024 * 1024;

/**
 * Fetched messages handed to the store together (or fewer, once they reach {@link GROUP_BYTES}): one read for the
 * replies to tracked sends among them, one pending write whose bytes move to the writer's prepare thread (not
 * copied: this sync does not read them again), and the writer thread stores as many in a transaction.
 */
const GROUP = 64;
const GROUP_BYTES = 4 * 1024 * 1024;

/**
 * Fetched messages between two turns of the event loop given to others: with more, an API request that arrived
 * during a sync waited up to a tenth of a second (bench/imap-sync.bench.ts, event loop delay p99 105–134 ms before, 20–30 ms with this).
 */
const YIELD_EVERY = 16;

type AccountRow = typeof imapAccounts.$inferSelect;
type FolderRow = typeof imapFolders.$inferSelect;

/** What the sync needs from the rest of the core. */
export interface ImapSyncParts {
  inbound: {
    storeFetched(message: FetchedMessage): Promise<unknown>;
    storeFetchedMany(messages: readonly FetchedMessage[]): Promise<PromiseSettledResult<unknown>[]>;
    warm(): Promise<void>;
    parse(
      raw: Buffer,
    ): Promise<
      | { ok: true; rawHash: string; value: ParsedMessage }
      | { ok: false; rawHash: string; error: string; partial: ParsedMessage | undefined }
    >;
  };
  store: MailStore;
  /** Deletes messages for good with `message.deleted` (the message service's; no push back to the server). */
  destroyForGood(tx: Tx, applicationId: string, rows: MessageRow[]): Promise<void>;
}

/**
 * With QRESYNC a folder's deletions come from the server's VANISHED answers; once in this long (and on a folder's
 * first pass in a process) the linked UIDs are still compared with the server's, which catches whatever those did
 * not say: deletions deferred on a connection that then closed, or a server that forgot some.
 */
export const UID_CHECK_INTERVAL_MS = 60 * 60_000;

/** Options of one pass. */
export interface PassOptions {
  /** Only INBOX (new mail seen by IDLE); default every folder. */
  inboxOnly?: boolean;
  signal?: AbortSignal | undefined;
  /**
   * The fetch thread of the initial sync's large FETCHes (./fetch-thread.ts), opened by the caller on first call
   * (and closed after the pass); undefined when there is none (no free connection slot): then they run on `client`.
   */
  fetchThread?: (() => Promise<FetchSession | undefined>) | undefined;
}

/** A chunk of the initial sync with at least this many messages to fetch goes through the fetch thread, when there is one. */
export const FETCH_THREAD_MIN = 64;

/** Compact UID set: `1:5,7,9:12` from ascending UIDs. */
export function uidSet(uids: readonly number[]): string {
  const parts: string[] = [];
  let start = uids[0];
  let end = start;
  for (let index = 1; index <= uids.length; index++) {
    const uid = uids[index];
    if (uid !== undefined && end !== undefined && uid === end + 1) {
      end = uid;
      continue;
    }
    if (start !== undefined) parts.push(start === end ? `${start}` : `${start}:${end}`);
    start = uid;
    end = uid;
  }
  return parts.join(',');
}

/** Without angle brackets. */
const bare = (id: string | undefined) => (id ? id.trim().replace(/^<|>$/g, '') : undefined);

/** The flags a stored message shows. */
function flagState(flags: Iterable<string>): { unread: boolean; starred: boolean } {
  const set = new Set([...flags].map((flag) => flag.toLowerCase()));
  return { unread: !set.has('\\seen'), starred: set.has('\\flagged') };
}

/**
 * What a connection learned of expunges in one folder (QRESYNC, RFC 7162): the UIDs the server reported VANISHED and
 * the sync has not yet deleted here (the `VANISHED (EARLIER)` answer to a SELECT naming the folder's last state, then
 * those sent while the folder stayed selected, under IDLE too). `complete` while that is everything since the
 * folder's stored HIGHESTMODSEQ: its last SELECT used QRESYNC, and no expunge came as a bare sequence number. UIDs
 * stay until deleted, also when another folder is selected meanwhile (a deletion deferred while a change of ours is
 * on its way to the server).
 */
interface ExpungeLog {
  complete: boolean;
  uids: Set<number>;
}

/** Each connection's expunge logs, by folder path. */
const expungeLogs = new WeakMap<ImapFlow, Map<string, ExpungeLog>>();

/** The expunge log of `path` on `client` (the connection is listened to from the first call on). */
function expungeLogOf(client: ImapFlow, path: string): ExpungeLog {
  let logs = expungeLogs.get(client);
  if (!logs) {
    const byPath = new Map<string, ExpungeLog>();
    client.on('expunge', (event: { path?: string; uid?: number; vanished?: boolean }) => {
      const log = event.path === undefined ? undefined : byPath.get(event.path);
      if (!log) return;
      if (event.vanished && typeof event.uid === 'number') log.uids.add(event.uid);
      else log.complete = false;
    });
    expungeLogs.set(client, (logs = byPath));
  }
  let log = logs.get(path);
  if (!log) logs.set(path, (log = { complete: false, uids: new Set() }));
  return log;
}

/**
 * SELECTs `path` with `open` (a mailbox lock, or a plain SELECT): with QRESYNC when the server has it and the folder's
 * last state is known (its initial sync done), so the folder's expunge log is complete from then on; without, the log
 * is not. Returns the log.
 */
async function selectLogged<T>(
  client: ImapFlow,
  path: string,
  folder: FolderRow | undefined,
  open: (options: MailboxLockOptions) => Promise<T>,
): Promise<{ opened: T; expunges: ExpungeLog }> {
  const expunges = expungeLogOf(client, path);
  const qresync =
    folder !== undefined &&
    client.enabled.has('QRESYNC') &&
    folder.initialDone &&
    folder.uidValidity !== null &&
    folder.highestModseq !== null;
  expunges.complete = false;
  const opened = await open(
    qresync
      ? ({
          changedSince: BigInt(folder.highestModseq!),
          uidValidity: BigInt(folder.uidValidity!),
        } as MailboxLockOptions)
      : {},
  );
  // imapflow marks the mailbox `qresync` once the server answered for the state named (same UIDVALIDITY).
  expunges.complete = client.mailbox !== false && (client.mailbox as { qresync?: boolean }).qresync === true;
  return { opened, expunges };
}

/** Creates the sync of connected accounts. */
export function createImapSync(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger' | 'config'>,
  parts: ImapSyncParts,
) {
  const { db, clock, newId, logger } = deps;
  const { historyEvents } = deps.config.imap;
  /** When each folder's linked UIDs were last compared with the server's (or its initial sync ended), by grant and path. */
  const uidsChecked = new Map<string, number>();
  const folderKey = (grantId: string, path: string) => `${grantId}\u0000${path}`;
  const record = eventRecorder({ newId, clock });
  const now = () => unixSeconds(clock.now());

  /** Deletes the links of (path, uids); a message left without a link is deleted for good. */
  async function unlinkAndPrune(
    tx: Tx,
    account: Pick<AccountRow, 'grantId'>,
    applicationId: string,
    path: string,
    uids: readonly number[] | 'all',
  ): Promise<void> {
    const where =
      uids === 'all'
        ? and(eq(imapMessages.grantId, account.grantId), eq(imapMessages.path, path))
        : and(
            eq(imapMessages.grantId, account.grantId),
            eq(imapMessages.path, path),
            inArray(imapMessages.uid, [...uids]),
          );
    const removed = await tx.delete(imapMessages).where(where).returning({ messageId: imapMessages.messageId });
    if (removed.length === 0) return;
    const ids = [...new Set(removed.map((row) => row.messageId))];
    for (let index = 0; index < ids.length; index += 200) {
      const slice = ids.slice(index, index + 200);
      const orphans = await tx
        .select()
        .from(tables.messages)
        .where(
          and(
            inArray(tables.messages.id, slice),
            sql`not exists (select 1 from imap_messages l where l.message_id = ${tables.messages.id})`,
          ),
        );
      if (orphans.length > 0) await parts.destroyForGood(tx, applicationId, orphans);
    }
  }

  /** LIST and keep `folders` / `imap_folders` in step; returns the folders to sync, INBOX and the system ones first. */
  async function syncFolders(client: ImapFlow, account: AccountRow, applicationId: string): Promise<FolderRow[]> {
    const listed = (await client.list()) as unknown as ListedFolder[];
    const mapped = mapFolders(listed);
    const known = await db.orm.select().from(imapFolders).where(eq(imapFolders.grantId, account.grantId));
    const knownByPath = new Map(known.map((row) => [row.path, row]));
    const gone = known.filter((row) => !mapped.some((folder) => folder.path === row.path));
    const added = mapped.filter((folder) => !knownByPath.has(folder.path));
    // A renamed folder keeps its UIDVALIDITY (RFC 3501 allows it, Dovecot and most servers do): one new path with the
    // UIDVALIDITY of exactly one folder gone is that folder.
    const renamed = new Map<string, FolderRow>();
    if (gone.length > 0 && added.length > 0) {
      for (const folder of added) {
        const status = await client.status(folder.path, { uidValidity: true }).catch(() => undefined);
        const validity = status ? status.uidValidity?.toString() : undefined;
        const matches = gone.filter(
          (row) =>
            row.uidValidity !== null &&
            row.uidValidity === validity &&
            !row.folderId.match(/^(inbox|sent|drafts|trash|junk|archive)$/),
        );
        if (validity && matches.length === 1 && ![...renamed.values()].includes(matches[0]!))
          renamed.set(folder.path, matches[0]!);
      }
    }
    const at = now();
    await db.write(async (tx) => {
      for (const row of gone) {
        const target = [...renamed.entries()].find(([, old]) => old === row)?.[0];
        if (target !== undefined) {
          await tx
            .update(imapMessages)
            .set({ path: target })
            .where(and(eq(imapMessages.grantId, account.grantId), eq(imapMessages.path, row.path)));
          await tx
            .update(imapFolders)
            .set({ path: target, updatedAt: at })
            .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, row.path)));
          const [updated] = await tx
            .update(tables.folders)
            .set({ name: target, updatedAt: at })
            .where(and(eq(tables.folders.grantId, account.grantId), eq(tables.folders.id, row.folderId)))
            .returning();
          if (updated)
            await record(tx, {
              applicationId,
              grantId: account.grantId,
              type: 'folder.updated',
              objectId: updated.id,
              object: toFolder(updated, undefined, 0),
              createdAt: at,
            });
          continue;
        }
        await unlinkAndPrune(tx, account, applicationId, row.path, 'all');
        await tx
          .delete(imapFolders)
          .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, row.path)));
        if (!ROLE_ORDER.includes(row.folderId as (typeof ROLE_ORDER)[number])) {
          await tx
            .delete(tables.folders)
            .where(and(eq(tables.folders.grantId, account.grantId), eq(tables.folders.id, row.folderId)));
          await record(tx, deletedEvent(applicationId, account.grantId, 'folder', row.folderId));
        }
      }
      const existingFolders = await tx
        .select({ id: tables.folders.id, name: tables.folders.name })
        .from(tables.folders)
        .where(eq(tables.folders.grantId, account.grantId));
      const folderIds = new Set(existingFolders.map((row) => row.id));
      const idOfPath = new Map<string, string>([...known.map((row): [string, string] => [row.path, row.folderId])]);
      for (const [path, old] of renamed) idOfPath.set(path, old.folderId);
      for (const folder of mapped) {
        if (!idOfPath.has(folder.path)) idOfPath.set(folder.path, folder.role ?? `f${newId()}`);
      }
      for (const folder of mapped) {
        const id = idOfPath.get(folder.path)!;
        if (!folderIds.has(id)) {
          // A name taken by a folder of another path (the API made it) gets the path's id appended.
          const taken = existingFolders.some((row) => row.name === folder.path);
          const [inserted] = await tx
            .insert(tables.folders)
            .values({
              id,
              grantId: account.grantId,
              name: taken ? `${folder.path} (${id})` : folder.path,
              systemRole: folder.role,
              parentId: folder.parentPath ? (idOfPath.get(folder.parentPath) ?? null) : null,
              sortOrder: folder.role ? ROLE_ORDER.indexOf(folder.role) : 1000,
              createdAt: at,
              updatedAt: at,
            })
            .onConflictDoNothing()
            .returning();
          folderIds.add(id);
          // A folder made on the server after the account was first mapped (those of the first mapping are the
          // mailbox as it was connected: `grant.imap_sync_completed` tells of them).
          if (inserted && known.length > 0)
            await record(tx, {
              applicationId,
              grantId: account.grantId,
              type: 'folder.created',
              objectId: inserted.id,
              object: toFolder(inserted, undefined, 0),
              createdAt: at,
            });
        }
        if (!knownByPath.has(folder.path) && !renamed.has(folder.path)) {
          await tx
            .insert(imapFolders)
            .values({
              grantId: account.grantId,
              path: folder.path,
              folderId: id,
              delimiter: folder.delimiter,
              specialUse: folder.specialUse,
              updatedAt: at,
            })
            .onConflictDoNothing();
        }
      }
    });
    const rows = await db.orm.select().from(imapFolders).where(eq(imapFolders.grantId, account.grantId));
    const rank = (row: FolderRow) => {
      const role = ROLE_ORDER.indexOf(row.folderId as (typeof ROLE_ORDER)[number]);
      return role >= 0 ? role : ROLE_ORDER.length;
    };
    return rows.sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
  }

  /** Whether changes made through the API still wait to reach the account's server (`imap.push` jobs). */
  async function pushPending(grantId: string): Promise<boolean> {
    const rows = await db.orm.all<{ one: number }>(
      sql`select 1 as one from jobs where order_key = ${`imap ${grantId}`} and dead_at is null limit 1`,
    );
    return rows.length > 0;
  }

  /** Context of one folder's sync. */
  interface FolderRun {
    client: ImapFlow;
    account: AccountRow;
    applicationId: string;
    /** The grant's address and provider, for what the store asks of each message (replies, reports). */
    grant: { email: string; provider: string };
    folder: FolderRow;
    signal: AbortSignal | undefined;
    /**
     * The folder's initial sync (its past): messages are stored without `message.created` (unless
     * `config.imap.historyEvents`) and without waiting for the log's sync (the progress record syncs them).
     */
    initial?: boolean;
    /** The folder's expunges since its last pass, when the connection knows them all (QRESYNC); else the sync compares UIDs. */
    expunges?: ExpungeLog | undefined;
    /** See {@link PassOptions.fetchThread}. */
    fetchThread?: (() => Promise<FetchSession | undefined>) | undefined;
  }

  /** UIDs of `uids` already linked in the folder. */
  async function linkedAmong(run: FolderRun, uids: readonly number[]): Promise<Set<number>> {
    const found = new Set<number>();
    for (let index = 0; index < uids.length; index += 500) {
      const rows = await db.orm
        .select({ uid: imapMessages.uid })
        .from(imapMessages)
        .where(
          and(
            eq(imapMessages.grantId, run.account.grantId),
            eq(imapMessages.path, run.folder.path),
            inArray(imapMessages.uid, uids.slice(index, index + 500)),
          ),
        );
      for (const row of rows) found.add(row.uid);
    }
    return found;
  }

  /** Stores a draft (or a new version of one) found in the Drafts folder, with its link, on this thread. */
  async function storeDraft(run: FolderRun, message: Fetched): Promise<void> {
    const parsed = await parts.inbound.parse(message.raw);
    const value = parsed.ok ? parsed.value : (parsed.partial ?? undefined);
    if (!value) {
      await storeOne(run, message, false);
      return;
    }
    const headerMessageId = bare(value.messageId);
    const { grantId } = run.account;
    const flags = flagState(message.flags);
    await db.write(async (tx) => {
      const [taken] = await tx
        .select({ uid: imapMessages.uid })
        .from(imapMessages)
        .where(
          and(
            eq(imapMessages.grantId, grantId),
            eq(imapMessages.path, run.folder.path),
            eq(imapMessages.uid, message.uid),
          ),
        );
      if (taken) return;
      const [draft] = headerMessageId
        ? await tx
            .select({ details: tables.draftDetails, row: tables.messages })
            .from(tables.draftDetails)
            .innerJoin(tables.messages, eq(tables.messages.id, tables.draftDetails.messageId))
            .where(
              and(eq(tables.draftDetails.grantId, grantId), eq(tables.draftDetails.headerMessageId, headerMessageId)),
            )
            .limit(1)
        : [];
      if (draft) {
        const [linked] = await tx
          .select({ uid: imapMessages.uid })
          .from(imapMessages)
          .where(eq(imapMessages.messageId, draft.row.id))
          .limit(1);
        if (!linked) {
          // The draft's current version is not on the server yet as far as we know: this is our own APPEND, seen
          // before the outgoing side linked it.
          await tx.insert(imapMessages).values({
            grantId,
            path: run.folder.path,
            uid: message.uid,
            messageId: draft.row.id,
            flags: message.flags,
            modseq: message.modseq,
          });
          return;
        }
      }
      const stored = await parts.store.insert(tx, {
        applicationId: run.applicationId,
        grantId,
        parsed: value,
        raw: message.raw,
        rawHash: parsed.rawHash,
        folders: [run.folder.folderId],
        unread: false,
        starred: flags.starred,
        date: message.date,
        envelopeFrom: null,
        envelopeTo: null,
        parseError: parsed.ok ? null : parsed.error,
      });
      // A draft is not mail that arrived (as for drafts made through the API).
      await tx
        .delete(tables.outboxEvents)
        .where(and(eq(tables.outboxEvents.type, 'message.created'), eq(tables.outboxEvents.objectId, stored.row.id)));
      if (draft) {
        // Edited in another client: the same draft, now this version.
        await tx
          .update(tables.draftDetails)
          .set({ messageId: stored.row.id, isPlaintext: false, plainBody: null })
          .where(eq(tables.draftDetails.id, draft.details.id));
        await parts.store.destroy(tx, [draft.row]);
      } else if (headerMessageId) {
        await tx
          .insert(tables.draftDetails)
          .values({ id: newId(), messageId: stored.row.id, grantId, headerMessageId, createdAt: now() });
      }
      await tx.insert(imapMessages).values({
        grantId,
        path: run.folder.path,
        uid: message.uid,
        messageId: stored.row.id,
        flags: message.flags,
        modseq: message.modseq,
      });
    });
  }

  /** A message as fetched: what the store needs of it. */
  interface Fetched {
    uid: number;
    raw: Buffer;
    flags: string[];
    modseq: string | null;
    date: number;
  }

  /** The ingest path's form of a fetched message of the folder, with its link. */
  function fetchedMessage(run: FolderRun, message: Fetched): FetchedMessage {
    const { grantId } = run.account;
    const flags = flagState(message.flags);
    return {
      raw: message.raw,
      applicationId: run.applicationId,
      grantId,
      grant: run.grant,
      folders: [run.folder.folderId],
      unread: flags.unread,
      starred: flags.starred,
      date: message.date,
      links: (messageId): ImapLinkRow[] => [
        { grantId, path: run.folder.path, uid: message.uid, messageId, flags: message.flags, modseq: message.modseq },
      ],
      // The account's past is what its first complete pass finds; a folder synced later (made, or its UIDVALIDITY
      // changed) brings mail that shows up now, with `message.created` as any.
      ...(run.initial ? { history: !historyEvents && run.account.lastSyncAt === null, durable: false } : {}),
    };
  }

  /** Stores one fetched message through the ingest path (a draft: see {@link storeDraft}). */
  async function storeOne(run: FolderRun, message: Fetched, isDraftFolder: boolean): Promise<void> {
    if (isDraftFolder) return storeDraft(run, message);
    await parts.inbound.storeFetched(fetchedMessage(run, message));
  }

  /**
   * Stores fetched messages, each on its own (one failing does not stop the others): through the ingest path all
   * together, drafts one by one. Resolves how many were stored and the first failure.
   */
  async function storeGroup(
    run: FolderRun,
    messages: Fetched[],
    isDraftFolder: boolean,
  ): Promise<{ stored: number; failed?: { reason: unknown } }> {
    const outcomes = isDraftFolder
      ? await Promise.allSettled(messages.map((message) => storeDraft(run, message)))
      : await parts.inbound.storeFetchedMany(messages.map((message) => fetchedMessage(run, message)));
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    return {
      stored: outcomes.filter((outcome) => outcome.status === 'fulfilled').length,
      ...(failed ? { failed: { reason: failed.reason as unknown } } : {}),
    };
  }

  /**
   * A sent copy of ours that the server got by our APPEND (or an SMTP server that files it) may be seen before the
   * outgoing side links it: a message of the grant with that Message-ID and no link is linked to this UID instead of
   * stored again. Returns the UIDs so linked.
   */
  async function linkOwnCopies(run: FolderRun, headers: Map<number, string>): Promise<Set<number>> {
    const linked = new Set<number>();
    if (headers.size === 0) return linked;
    const { grantId } = run.account;
    await db.write(async (tx) => {
      for (const [uid, headerId] of headers) {
        const [own] = await tx
          .select({ id: tables.messages.id })
          .from(tables.messages)
          .where(
            and(
              eq(tables.messages.grantId, grantId),
              eq(tables.messages.headerMessageId, headerId),
              sql`not exists (select 1 from imap_messages l where l.message_id = ${tables.messages.id})`,
            ),
          )
          .limit(1);
        if (!own) continue;
        await tx
          .insert(imapMessages)
          .values({ grantId, path: run.folder.path, uid, messageId: own.id, flags: [] })
          .onConflictDoNothing();
        linked.add(uid);
      }
    });
    return linked;
  }

  /**
   * The messages of `uids` of the folder as fetched (at most one byte over the size limit read of each: larger ones
   * are left on the server): through the fetch thread for a large chunk of the initial sync when there is one, else
   * on the folder's connection.
   */
  async function* fetchSources(run: FolderRun, uids: number[]): AsyncIterable<Fetched> {
    if (uids.length === 0) return;
    const thread = run.initial && uids.length >= FETCH_THREAD_MIN ? await run.fetchThread?.() : undefined;
    if (thread) {
      for await (const group of thread.fetch(run.folder.path, uidSet(uids), MAX_MESSAGE_BYTES + 1)) {
        for (const message of group) {
          const { raw } = message;
          const internal = message.internalDate === null ? clock.now() : new Date(message.internalDate);
          yield {
            uid: message.uid,
            raw: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength),
            flags: message.flags,
            modseq: message.modseq,
            date: unixSeconds(internal),
          };
        }
      }
      return;
    }
    const query = { uid: true, flags: true, internalDate: true, source: { maxLength: MAX_MESSAGE_BYTES + 1 } } as const;
    for await (const message of run.client.fetch(uidSet(uids), query, { uid: true })) {
      if (!message.source) continue;
      const internal = message.internalDate ? new Date(message.internalDate) : clock.now();
      yield {
        uid: message.uid,
        raw: message.source,
        flags: [...(message.flags ?? [])],
        modseq: message.modseq !== undefined ? String(message.modseq) : null,
        date: unixSeconds(internal),
      };
    }
  }

  /**
   * Fetches and stores the messages of `uids` (ascending or not), newest first in chunks; `afterChunk` runs once a
   * chunk is stored. The next chunk is fetched while the last one is written.
   */
  async function fetchAndStore(
    run: FolderRun,
    uids: readonly number[],
    afterChunk: (chunk: number[], stored: number) => Promise<void>,
  ): Promise<void> {
    const descending = [...uids].sort((a, b) => b - a);
    const isDrafts = run.folder.folderId === 'drafts';
    const mayHoldOwn = run.folder.folderId === 'sent' || isDrafts;
    let previous: { chunk: number[]; writes: Promise<number> } | undefined;
    /** The writes of the chunk being fetched. */
    let current: Promise<void>[] = [];
    let inFlight = 0;
    let inFlightBytes = 0;
    let fetched = 0;
    const settle = async () => {
      if (!previous) return;
      const { chunk, writes } = previous;
      previous = undefined;
      await afterChunk(chunk, await writes);
    };
    try {
      for (let index = 0; index < descending.length; index += CHUNK) {
        if (run.signal?.aborted) throw new Error('the sync was stopped');
        const chunk = descending.slice(index, index + CHUNK);
        const linked = await linkedAmong(run, chunk);
        const wanted = chunk.filter((uid) => !linked.has(uid)).sort((a, b) => a - b);
        const pending: Promise<void>[] = [];
        current = pending;
        let stored = 0;
        let failure: unknown;
        /** Messages fetched and not yet handed to the store, and their bytes. */
        let group: Fetched[] = [];
        let groupBytes = 0;
        const flush = () => {
          if (group.length === 0) return;
          const messages = group;
          const bytes = groupBytes;
          group = [];
          groupBytes = 0;
          inFlight += messages.length;
          inFlightBytes += bytes;
          const write = storeGroup(run, messages, isDrafts).then(
            (outcome) => {
              stored += outcome.stored;
              if (outcome.failed) failure ??= outcome.failed.reason;
            },
            (error: unknown) => {
              failure ??= error;
            },
          );
          pending.push(
            write.finally(() => {
              inFlight -= messages.length;
              inFlightBytes -= bytes;
            }),
          );
        };
        if (wanted.length > 0) {
          let own = new Set<number>();
          if (mayHoldOwn && !isDrafts) {
            const headers = new Map<number, string>();
            for await (const message of run.client.fetch(
              uidSet(wanted),
              { uid: true, envelope: true },
              { uid: true },
            )) {
              const id = bare(message.envelope?.messageId);
              if (id) headers.set(message.uid, id);
            }
            own = await linkOwnCopies(run, headers);
          }
          for await (const message of fetchSources(
            run,
            wanted.filter((uid) => !own.has(uid)),
          )) {
            if (message.raw.length > MAX_MESSAGE_BYTES) {
              logger.warn('imap: a message over the size limit is not synced', {
                grant_id: run.account.grantId,
                path: run.folder.path,
                uid: message.uid,
                limit_bytes: MAX_MESSAGE_BYTES,
              });
              continue;
            }
            group.push(message);
            groupBytes += message.raw.length;
            // imapflow hands over the messages of a read from the socket in one chain of microtasks, which would hold
            // the event loop (API requests, timers) for as long as it takes to store them all.
            if (++fetched % YIELD_EVERY === 0) await nextTurn();
            if (group.length < GROUP && groupBytes < GROUP_BYTES) continue;
            flush();
            while (inFlight >= IN_FLIGHT || (inFlightBytes > IN_FLIGHT_BYTES && pending.length > 1))
              await pending.shift();
          }
          flush();
        }
        // The last chunk's writes are done before this chunk's progress is recorded (and before a failure stops it).
        await settle();
        const writes = Promise.all(pending).then(() => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the write's own failure, whatever it threw
          if (failure) throw failure;
          return stored;
        });
        writes.catch(() => undefined);
        previous = { chunk, writes };
        current = [];
      }
      await settle();
    } finally {
      // The pass failed (the next chunk's fetch, say): the writes under way finish first (a pass that follows must
      // not fetch what they are storing), and the last whole chunk counts if it all stored.
      await Promise.allSettled(current);
      if (previous) {
        const { chunk, writes } = previous;
        previous = undefined;
        const stored = await writes.catch(() => undefined);
        if (stored !== undefined) await afterChunk(chunk, stored).catch(() => undefined);
      }
    }
  }

  /** The initial sync of a folder (or its rest, after a stop): the window's messages, newest first. */
  async function initialSync(
    run: FolderRun,
    mailbox: { uidNext: number; highestModseq: string | null },
  ): Promise<void> {
    const { account, folder } = run;
    const since = new Date(clock.now().getTime() - account.syncDays * 86_400_000);
    const found = (await run.client.search({ since }, { uid: true })) || [];
    let floor = folder.initialFloorUid;
    let lowest = folder.initialLowestUid;
    if (floor === null || lowest === null) {
      // First time: the window, and where new mail starts (UIDs from here are the incremental sync's).
      floor = found.length > 0 ? Math.min(...found) : mailbox.uidNext;
      lowest = mailbox.uidNext;
      const todo = found.filter((uid) => uid < mailbox.uidNext).length;
      await db.write(async (tx) => {
        await tx
          .update(imapFolders)
          .set({
            initialFloorUid: floor,
            initialLowestUid: lowest,
            uidNext: mailbox.uidNext,
            highestModseq: mailbox.highestModseq,
            updatedAt: now(),
          })
          .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, folder.path)));
        await tx
          .update(imapAccounts)
          .set({ syncTotal: sql`${imapAccounts.syncTotal} + ${todo}`, updatedAt: clock.now().getTime() })
          .where(eq(imapAccounts.grantId, account.grantId));
      });
      folder.initialFloorUid = floor;
      folder.initialLowestUid = lowest;
      folder.uidNext = mailbox.uidNext;
      folder.highestModseq = mailbox.highestModseq;
    }
    const rest = found.filter((uid) => uid >= floor && uid < lowest);
    // Chunks stored (or skipped: already linked) and not yet recorded; the lowest UID they reach.
    let unrecorded = 0;
    let low = lowest;
    let recordedAt = performance.now();
    const recordProgress = async (done: boolean) => {
      const count = unrecorded;
      unrecorded = 0;
      recordedAt = performance.now();
      // Counted when the window was found: every UID of a stored chunk is done, stored now or before. Durable (the
      // writes it covers committed without a sync of the log, and this syncs it), but synced off the event loop: with
      // a second of bulk writes in the log, a COMMIT that synced it here held the event loop for tens of ms.
      await db.durableWrite(async (tx) => {
        await tx
          .update(imapFolders)
          .set({ initialLowestUid: done ? floor : low, ...(done ? { initialDone: true } : {}), updatedAt: now() })
          .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, folder.path)));
        if (count > 0)
          await tx
            .update(imapAccounts)
            .set({
              syncDone: sql`min(${imapAccounts.syncTotal}, ${imapAccounts.syncDone} + ${count})`,
              updatedAt: clock.now().getTime(),
            })
            .where(eq(imapAccounts.grantId, account.grantId));
      });
    };
    try {
      await fetchAndStore({ ...run, initial: true }, rest, async (chunk) => {
        unrecorded += chunk.length;
        low = Math.min(low, ...chunk);
        if (performance.now() - recordedAt >= PROGRESS_INTERVAL_MS) await recordProgress(false);
      });
    } finally {
      // What was stored before a failure is recorded too (the resume point moves down as far as it is true).
      if (unrecorded > 0) await recordProgress(false).catch(() => undefined);
    }
    await recordProgress(true);
    folder.initialDone = true;
    uidsChecked.set(folderKey(account.grantId, folder.path), clock.now().getTime());
  }

  /** Applies server flags to linked messages that differ; returns how many changed. */
  async function applyFlags(
    run: FolderRun,
    seen: Map<number, { flags: string[]; modseq: string | null }>,
  ): Promise<void> {
    if (seen.size === 0) return;
    const { grantId } = run.account;
    const uids = [...seen.keys()];
    for (let index = 0; index < uids.length; index += 500) {
      const slice = uids.slice(index, index + 500);
      await db.write(async (tx) => {
        const links = await tx
          .select({ link: imapMessages, row: tables.messages })
          .from(imapMessages)
          .innerJoin(tables.messages, eq(tables.messages.id, imapMessages.messageId))
          .where(
            and(
              eq(imapMessages.grantId, grantId),
              eq(imapMessages.path, run.folder.path),
              inArray(imapMessages.uid, slice),
            ),
          );
        const changedRows: MessageRow[] = [];
        for (const { link, row } of links) {
          const server = seen.get(link.uid)!;
          const same =
            server.flags.length === link.flags.length && server.flags.every((flag) => link.flags.includes(flag));
          if (same && server.modseq === link.modseq) continue;
          await tx
            .update(imapMessages)
            .set({ flags: server.flags, modseq: server.modseq })
            .where(
              and(eq(imapMessages.grantId, grantId), eq(imapMessages.path, link.path), eq(imapMessages.uid, link.uid)),
            );
          if (same) continue;
          const state = flagState(server.flags);
          const changes: { unread?: boolean; starred?: boolean } = {};
          if (state.unread !== row.unread) changes.unread = state.unread;
          if (state.starred !== row.starred) changes.starred = state.starred;
          if (Object.keys(changes).length === 0) continue;
          const [updated] = await parts.store.change(tx, [row], changes);
          if (updated) changedRows.push(updated);
        }
        const isDraft = new Set(
          changedRows.length === 0
            ? []
            : (
                await tx
                  .select({ id: tables.draftDetails.messageId })
                  .from(tables.draftDetails)
                  .where(
                    inArray(
                      tables.draftDetails.messageId,
                      changedRows.map((row) => row.id),
                    ),
                  )
              ).map((row) => row.id),
        );
        const shown = changedRows.filter((row) => !isDraft.has(row.id));
        if (shown.length === 0) return;
        const at = now();
        for (const message of await presentMessages(tx, shown)) {
          await record(tx, {
            applicationId: run.applicationId,
            grantId,
            type: 'message.updated',
            objectId: message.id,
            object: message,
            createdAt: at,
          });
        }
      });
    }
  }

  /** Changes since the last pass of a folder whose initial sync is done: new mail, flags, deletions. */
  async function incremental(
    run: FolderRun,
    mailbox: { uidNext: number; highestModseq: string | null; exists: number },
  ): Promise<void> {
    const { account, folder, client } = run;
    const from = folder.uidNext ?? 1;
    // New mail.
    if (mailbox.uidNext > from) {
      const fresh = ((await client.search({ uid: `${from}:*` }, { uid: true })) || []).filter((uid) => uid >= from);
      await fetchAndStore(run, fresh, async () => undefined);
    }
    const [bounds] = await db.orm
      .select({ low: sql<number | null>`min(${imapMessages.uid})` })
      .from(imapMessages)
      .where(and(eq(imapMessages.grantId, account.grantId), eq(imapMessages.path, folder.path)));
    const low = bounds?.low ?? null;
    if (low !== null) {
      // Flags: nothing to fetch when HIGHESTMODSEQ has not moved; with CONDSTORE only what changed since.
      const condstore = mailbox.highestModseq !== null && folder.highestModseq !== null;
      if (!condstore || mailbox.highestModseq !== folder.highestModseq) {
        const seen = new Map<number, { flags: string[]; modseq: string | null }>();
        const options = condstore ? { uid: true, changedSince: BigInt(folder.highestModseq!) } : { uid: true };
        for await (const message of client.fetch(`${low}:*`, { uid: true, flags: true }, options)) {
          if (message.uid >= low)
            seen.set(message.uid, {
              flags: [...(message.flags ?? [])],
              modseq: message.modseq !== undefined ? String(message.modseq) : null,
            });
        }
        await applyFlags(run, seen);
      }
      // Deletions: the linked UIDs the server no longer has (an expunge need not move HIGHESTMODSEQ without QRESYNC).
      // Not while a change of ours is on its way to the server: a MOVE there relinks its message only once it is done
      // (what VANISHED said stays in the connection's log meanwhile).
      if (!(await pushPending(account.grantId))) {
        const key = folderKey(account.grantId, folder.path);
        const checked = uidsChecked.get(key);
        const compare =
          !run.expunges || checked === undefined || clock.now().getTime() - checked >= UID_CHECK_INTERVAL_MS;
        /** What the log held before the server was asked: a comparison covers these. */
        const logged = run.expunges ? [...run.expunges.uids] : [];
        let vanished: number[];
        if (compare) {
          const onServer = new Set((await client.search({ uid: `${low}:*` }, { uid: true })) || []);
          const linked = await db.orm
            .select({ uid: imapMessages.uid })
            .from(imapMessages)
            .where(
              and(
                eq(imapMessages.grantId, account.grantId),
                eq(imapMessages.path, folder.path),
                gte(imapMessages.uid, low),
              ),
            );
          vanished = linked.map((row) => row.uid).filter((uid) => !onServer.has(uid));
          uidsChecked.set(key, clock.now().getTime());
        } else {
          // QRESYNC: the server said which UIDs went; nothing to compare.
          vanished = logged;
        }
        for (let index = 0; index < vanished.length; index += 500) {
          const slice = vanished.slice(index, index + 500);
          await db.write((tx) => unlinkAndPrune(tx, account, run.applicationId, folder.path, slice));
        }
        // Forgotten once deleted here; a VANISHED that came meanwhile stays for the next pass.
        for (const uid of logged) run.expunges?.uids.delete(uid);
      }
    }
    await db.write((tx) =>
      tx
        .update(imapFolders)
        .set({ uidNext: mailbox.uidNext, highestModseq: mailbox.highestModseq, updatedAt: now() })
        .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, folder.path))),
    );
  }

  /** One folder: selected, UIDVALIDITY checked, then its initial sync or its changes. */
  async function syncFolder(run: FolderRun): Promise<void> {
    const { client, folder, account } = run;
    // With QRESYNC the SELECT names the folder's last known state, and the server answers with what was expunged
    // since (VANISHED (EARLIER)); a folder that stays selected (INBOX under IDLE) keeps being told of expunges.
    const selecting = !client.mailbox || client.mailbox.path !== folder.path;
    // Selected already (INBOX under IDLE): the lock sends no SELECT, and the log goes on as it is.
    const { opened: lock, expunges } = selecting
      ? await selectLogged(client, folder.path, folder, (options) => client.getMailboxLock(folder.path, options))
      : { opened: await client.getMailboxLock(folder.path), expunges: expungeLogOf(client, folder.path) };
    try {
      const box = client.mailbox;
      if (!box) return;
      run.expunges = expunges.complete ? expunges : undefined;
      // Selected already: a server that holds its expunge news until a command allows it (not every one does) tells it now.
      if (!selecting && run.expunges) await client.noop();
      const validity = box.uidValidity.toString();
      const mailbox = {
        uidNext: box.uidNext,
        highestModseq: box.highestModseq !== undefined && !box.noModseq ? box.highestModseq.toString() : null,
        exists: box.exists,
      };
      // A folder that stayed selected (INBOX under IDLE) has UIDNEXT and HIGHESTMODSEQ as of its SELECT: ask again.
      const status = await client
        .status(folder.path, { uidNext: true, ...(mailbox.highestModseq !== null ? { highestModseq: true } : {}) })
        .catch(() => false as const);
      if (status) {
        if (status.uidNext !== undefined) mailbox.uidNext = Math.max(mailbox.uidNext, status.uidNext);
        if (status.highestModseq !== undefined && mailbox.highestModseq !== null)
          mailbox.highestModseq = status.highestModseq.toString();
      }
      if (folder.uidValidity !== null && folder.uidValidity !== validity) {
        // Every UID of the folder changed meaning: its links go, and it is synced again (messages matched anew).
        logger.warn('imap: UIDVALIDITY changed; the folder is synced again', {
          grant_id: account.grantId,
          path: folder.path,
        });
        // The UIDs of the log were of the folder's earlier UIDVALIDITY.
        expunges.uids.clear();
        expunges.complete = false;
        run.expunges = undefined;
        await db.write(async (tx) => {
          await unlinkAndPrune(tx, account, run.applicationId, folder.path, 'all');
          await tx
            .update(imapFolders)
            .set({
              uidValidity: validity,
              uidNext: null,
              highestModseq: null,
              initialDone: false,
              initialLowestUid: null,
              initialFloorUid: null,
              updatedAt: now(),
            })
            .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, folder.path)));
        });
        Object.assign(folder, {
          uidValidity: validity,
          uidNext: null,
          highestModseq: null,
          initialDone: false,
          initialLowestUid: null,
          initialFloorUid: null,
        });
      } else if (folder.uidValidity === null) {
        await db.write((tx) =>
          tx
            .update(imapFolders)
            .set({ uidValidity: validity, updatedAt: now() })
            .where(and(eq(imapFolders.grantId, account.grantId), eq(imapFolders.path, folder.path))),
        );
        folder.uidValidity = validity;
      }
      if (!folder.initialDone) await initialSync(run, mailbox);
      else await incremental(run, mailbox);
    } finally {
      lock.release();
    }
  }

  /**
   * One pass over the account on `client` (logged in). Returns whether the account's initial sync completed in this
   * pass (every folder's initial sync done, and no pass had completed before).
   */
  async function pass(
    client: ImapFlow,
    grantId: string,
    options: PassOptions = {},
  ): Promise<{ initialCompleted: boolean }> {
    const [found] = await db.orm
      .select({
        account: imapAccounts,
        applicationId: tables.grants.applicationId,
        email: tables.grants.email,
        provider: tables.grants.provider,
      })
      .from(imapAccounts)
      .innerJoin(tables.grants, eq(tables.grants.id, imapAccounts.grantId))
      .where(eq(imapAccounts.grantId, grantId))
      .limit(1);
    if (!found) return { initialCompleted: false };
    const { account, applicationId } = found;
    const grant = { email: found.email, provider: found.provider };
    let folders: FolderRow[];
    // An initial sync ahead: the writer thread starts loading while the folders are listed.
    if (account.lastSyncAt === null) void parts.inbound.warm();
    if (options.inboxOnly)
      folders = await db.orm
        .select()
        .from(imapFolders)
        .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.folderId, 'inbox')));
    else folders = await syncFolders(client, account, applicationId);
    for (const folder of folders) {
      if (options.signal?.aborted) throw new Error('the sync was stopped');
      await syncFolder({
        client,
        account,
        applicationId,
        grant,
        folder,
        signal: options.signal,
        fetchThread: options.fetchThread,
      });
    }
    if (options.inboxOnly) return { initialCompleted: false };
    // The initial sync completes once: the first pass to end with every folder done.
    const completed = await db.write(async (tx) => {
      const [fresh] = await tx
        .select({ lastSyncAt: imapAccounts.lastSyncAt })
        .from(imapAccounts)
        .where(eq(imapAccounts.grantId, grantId));
      const [open] = await tx
        .select({ path: imapFolders.path })
        .from(imapFolders)
        .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.initialDone, false)))
        .limit(1);
      if (!fresh || open || fresh.lastSyncAt !== null) return false;
      const [grant] = await tx.select().from(tables.grants).where(eq(tables.grants.id, grantId));
      if (grant)
        await record(tx, {
          applicationId,
          grantId,
          type: 'grant.imap_sync_completed',
          objectId: grantId,
          object: await grantOf(tx, grant),
        });
      await tx
        .update(imapAccounts)
        .set({ syncDone: sql`${imapAccounts.syncTotal}` })
        .where(eq(imapAccounts.grantId, grantId));
      return true;
    });
    return { initialCompleted: completed };
  }

  /**
   * SELECTs INBOX on `client` to wait there (IDLE): with QRESYNC when the server has it, so the connection learns of
   * every expunge there from INBOX's last pass on (VANISHED (EARLIER) now, VANISHED while it idles), and the next
   * INBOX pass needs no comparison of UIDs.
   */
  async function watchInbox(client: ImapFlow, grantId: string): Promise<MailboxObject> {
    const [inbox] = await db.orm
      .select()
      .from(imapFolders)
      .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.folderId, 'inbox')))
      .limit(1);
    const path = inbox?.path ?? 'INBOX';
    return (await selectLogged(client, path, inbox, (options) => client.mailboxOpen(path, options))).opened;
  }

  return { pass, watchInbox };
}

export type ImapSync = ReturnType<typeof createImapSync>;
