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
 *
 * The phases are plain functions over the state `createImapSync` makes (./sync-state.ts): the folders
 * (./sync-folders.ts), the fetch and store of messages (./sync-fetch.ts), the initial sync (./sync-initial.ts), the
 * changes (./sync-changes.ts), one pass and the wait in INBOX (./sync-pass.ts); their reads and writes past drizzle's
 * query builder in ./sync-store.ts.
 */
import type { ImapFlow } from 'imapflow';
import type { CoreDeps } from '../ports/index.js';
import type { ImapSync, PassOptions } from './contracts.js';
import { createSyncState, type ImapSyncParts } from './sync-state.js';
import { pass, watchInbox } from './sync-pass.js';

export { uidSet, type ImapSyncParts } from './sync-state.js';
export { CHUNK, FETCH_THREAD_MIN } from './sync-fetch.js';
export { UID_CHECK_INTERVAL_MS } from './sync-changes.js';

/** Creates the sync of connected accounts. */
export function createImapSync(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger' | 'config'>,
  parts: ImapSyncParts,
): ImapSync {
  const state = createSyncState(deps, parts);
  return {
    /**
     * One pass over the account on `client` (logged in). Returns whether the account's initial sync completed in
     * this pass (every folder's initial sync done, and no pass had completed before).
     */
    pass: (client: ImapFlow, grantId: string, options: PassOptions = {}) => pass(state, client, grantId, options),
    /** SELECTs INBOX on `client` to wait there (IDLE), with QRESYNC when the server has it. */
    watchInbox: (client: ImapFlow, grantId: string) => watchInbox(state, client, grantId),
  };
}

export type { ImapSync, PassOptions } from './contracts.js';
