/**
 * @module imap/sync-state
 * What the phases of an account's sync pass (./sync.ts) share: the state made once by `createImapSync`, the context
 * of one folder's sync, a fetched message, and the connection's log of expunges (QRESYNC) with the SELECT that keeps it.
 */
import type { ImapFlow, MailboxLockOptions } from 'imapflow';
import type { Tx } from '../../storage/index.js';
import type { imapAccounts, imapFolders } from '../../storage/schema/connected.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import type { FetchedMessage } from '../mail/index.js';
import type { ParsedMessage } from '../mime/index.js';
import type { MailStore, MessageRow } from '../messages/index.js';
import type { FetchSession } from './contracts.js';

export type AccountRow = typeof imapAccounts.$inferSelect;
export type FolderRow = typeof imapFolders.$inferSelect;

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

export type { PassOptions } from './contracts.js';

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
export const bare = (id: string | undefined) => (id ? id.trim().replace(/^<|>$/g, '') : undefined);

/** The flags a stored message shows. */
export function flagState(flags: Iterable<string>): { unread: boolean; starred: boolean } {
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
export interface ExpungeLog {
  complete: boolean;
  uids: Set<number>;
}

/** Each connection's expunge logs, by folder path. */
const expungeLogs = new WeakMap<ImapFlow, Map<string, ExpungeLog>>();

/** The expunge log of `path` on `client` (the connection is listened to from the first call on). */
export function expungeLogOf(client: ImapFlow, path: string): ExpungeLog {
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
export async function selectLogged<T>(
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

/** What the phases of a pass share, made once per `createImapSync`. */
export interface SyncState {
  db: CoreDeps['db'];
  clock: CoreDeps['clock'];
  newId: CoreDeps['newId'];
  logger: CoreDeps['logger'];
  /** `config.imap.historyEvents`: the account's past stored with `message.created` too. */
  historyEvents: boolean;
  parts: ImapSyncParts;
  /** When each folder's linked UIDs were last compared with the server's (or its initial sync ended), by {@link folderKey}. */
  uidsChecked: Map<string, number>;
  /** Records an outbox event in a write. */
  record: ReturnType<typeof eventRecorder>;
  /** The clock's time in unix seconds. */
  now: () => number;
}

/** The state of the sync of connected accounts. */
export function createSyncState(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger' | 'config'>,
  parts: ImapSyncParts,
): SyncState {
  const { db, clock, newId, logger } = deps;
  return {
    db,
    clock,
    newId,
    logger,
    historyEvents: deps.config.imap.historyEvents,
    parts,
    uidsChecked: new Map(),
    record: eventRecorder({ newId, clock }),
    now: () => unixSeconds(clock.now()),
  };
}

/** The key of a folder in {@link SyncState.uidsChecked}. */
export const folderKey = (grantId: string, path: string): string => `${grantId}\u0000${path}`;

/** Context of one folder's sync. */
export interface FolderRun {
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

/** A message as fetched: what the store needs of it. */
export interface Fetched {
  uid: number;
  raw: Buffer;
  flags: string[];
  modseq: string | null;
  date: number;
}
