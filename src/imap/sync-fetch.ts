/**
 * @module imap/sync-fetch
 * How a pass (./sync.ts) fetches messages and hands them to the store: newest first in chunks of {@link CHUNK}, the
 * next chunk fetched while the last one is written, {@link GROUP} at a time to the ingest path; drafts one by one (a
 * new version of a draft keeps its id); sent copies of ours linked instead of stored again.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { imapMessages } from '../../storage/schema/connected.js';
import { unixSeconds } from '../time.js';
import { MAX_MESSAGE_BYTES, type FetchedMessage, type ImapLinkRow } from '../mail/index.js';
import { bare, flagState, uidSet, type Fetched, type FolderRun, type SyncState } from './sync-state.js';
import { linkedAmong, unlinkedOwnMessage } from './sync-store.js';

/** UIDs fetched per FETCH command during the initial sync (and for a backlog of new mail). */
export const CHUNK = 500;

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

/** A chunk of the initial sync with at least this many messages to fetch goes through the fetch thread, when there is one. */
export const FETCH_THREAD_MIN = 64;

/** Stores a draft (or a new version of one) found in the Drafts folder, with its link, on this thread. */
async function storeDraft(state: SyncState, run: FolderRun, message: Fetched): Promise<void> {
  const { db, parts, newId, now } = state;
  const parsed = await parts.inbound.parse(message.raw);
  const value = parsed.ok ? parsed.value : (parsed.partial ?? undefined);
  if (!value) {
    await parts.inbound.storeFetched(fetchedMessage(state, run, message));
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

/** The ingest path's form of a fetched message of the folder, with its link. */
function fetchedMessage(state: SyncState, run: FolderRun, message: Fetched): FetchedMessage {
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
    ...(run.initial ? { history: !state.historyEvents && run.account.lastSyncAt === null, durable: false } : {}),
  };
}

/**
 * Stores fetched messages, each on its own (one failing does not stop the others): through the ingest path all
 * together, drafts one by one. Resolves how many were stored and the first failure.
 */
async function storeGroup(
  state: SyncState,
  run: FolderRun,
  messages: Fetched[],
  isDraftFolder: boolean,
): Promise<{ stored: number; failed?: { reason: unknown } }> {
  const outcomes = isDraftFolder
    ? await Promise.allSettled(messages.map((message) => storeDraft(state, run, message)))
    : await state.parts.inbound.storeFetchedMany(messages.map((message) => fetchedMessage(state, run, message)));
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
async function linkOwnCopies(state: SyncState, run: FolderRun, headers: Map<number, string>): Promise<Set<number>> {
  const linked = new Set<number>();
  if (headers.size === 0) return linked;
  const { grantId } = run.account;
  await state.db.write(async (tx) => {
    for (const [uid, headerId] of headers) {
      const own = await unlinkedOwnMessage(tx, grantId, headerId);
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
async function* fetchSources(state: SyncState, run: FolderRun, uids: number[]): AsyncIterable<Fetched> {
  const { clock } = state;
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
export async function fetchAndStore(
  state: SyncState,
  run: FolderRun,
  uids: readonly number[],
  afterChunk: (chunk: number[], stored: number) => Promise<void>,
): Promise<void> {
  const { db, logger } = state;
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
      const linked = await linkedAmong(db, run.account.grantId, run.folder.path, chunk);
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
        const write = storeGroup(state, run, messages, isDrafts).then(
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
          for await (const message of run.client.fetch(uidSet(wanted), { uid: true, envelope: true }, { uid: true })) {
            const id = bare(message.envelope?.messageId);
            if (id) headers.set(message.uid, id);
          }
          own = await linkOwnCopies(state, run, headers);
        }
        for await (const message of fetchSources(
          state,
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
