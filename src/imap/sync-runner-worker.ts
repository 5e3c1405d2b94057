/**
 * @module imap/sync-runner-worker
 * The account workers of the runner (./sync-runner.ts): finding the accounts that are due, one account's loop of
 * passes and waits (IDLE on INBOX, or polling), its connection and the fetch session of a pass.
 */
import { and, eq, inArray, isNull, lte, ne, or } from 'drizzle-orm';
import { imapAccounts, imapFolders } from '../../storage/schema/connected.js';
import { AppError } from '../errors.js';
import { describeFailure, endpointsOf, failureOf, type ImapSession } from './connection.js';
import type { FetchSession } from './fetch-thread.js';
import { accountOf, claim, failed, release, renew, starting, succeeded } from './sync-runner-accounts.js';
import {
  DRAFTS_CHECK_MS,
  leaseFree,
  SCAN_INTERVAL_MS,
  type AccountRow,
  type AccountWorker,
  type RunnerState,
} from './sync-runner-state.js';

/**
 * The fetch session of one pass (see PassOptions.fetchThread): opened on first use, when a fetch thread and a slot
 * of the server are free then; `close` logs it out after the pass (the thread stays). A session that cannot log in
 * leaves the FETCHes to the pass's own connection (logged): the pass itself fails as it would.
 */
export function passFetchSession(
  state: RunnerState,
  account: AccountRow,
): {
  open: () => Promise<FetchSession | undefined>;
  close: () => Promise<void>;
} {
  let opened: Promise<FetchSession | undefined> | undefined;
  return {
    open: () =>
      (opened ??= (async () => {
        if (!state.deps.secrets || state.fetchThreadLimit === 0) return undefined;
        return state.connector.openFetchSession(endpointsOf(account, state.deps.secrets).imap, state.fetchThreads);
      })().catch((error: unknown) => {
        state.logger.warn('imap: no fetch thread for the initial sync; it fetches on its own connection', {
          grant_id: account.grantId,
          error: error instanceof Error ? error.message : String(error),
        });
        return undefined;
      })),
    async close() {
      const session = await opened;
      await session?.close();
    },
  };
}

export async function open(state: RunnerState, account: AccountRow): Promise<ImapSession> {
  if (!state.deps.secrets)
    throw new AppError('internal', 'No secret box (AGENTPOST_SECRET_KEY) to open the account password with.');
  return state.connector.openImap(endpointsOf(account, state.deps.secrets).imap);
}

/** Sleeps `ms` or until woken or stopped; not at all when a wake came since the last full pass began. */
export function pause(state: RunnerState, grantId: string, worker: AccountWorker, ms: number): Promise<'full'> {
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      state.aborter.signal.removeEventListener('abort', finish);
      worker.wake = () => undefined;
      resolve('full');
    };
    const timer = setTimeout(finish, ms);
    state.aborter.signal.addEventListener('abort', finish);
    worker.wake = finish;
    if (state.woken.has(grantId)) finish();
  });
}

/** What the last pass saw of a folder: its path, UIDNEXT and HIGHESTMODSEQ (null until synced, or without CONDSTORE). */
interface FolderMark {
  path: string;
  uidNext: number | null;
  highestModseq: string | null;
}

/** Whether a folder's SELECT or STATUS shows a change since the last pass: a higher UIDNEXT, or another HIGHESTMODSEQ. */
function movedOn(
  mark: FolderMark,
  seen: { uidNext?: number | undefined; highestModseq?: bigint | undefined },
): boolean {
  return (
    (seen.uidNext ?? 0) > (mark.uidNext ?? 0) ||
    (seen.highestModseq !== undefined &&
      mark.highestModseq !== null &&
      seen.highestModseq.toString() !== mark.highestModseq)
  );
}

/**
 * Whether the account's synced Drafts folder changed since its last pass (its STATUS, see {@link movedOn}), as a
 * draft saved again in another mail client changes it.
 */
async function draftsChanged(client: ImapSession['client'], drafts: FolderMark): Promise<boolean> {
  const status = await client.status(drafts.path, {
    uidNext: true,
    ...(drafts.highestModseq !== null ? { highestModseq: true } : {}),
  });
  return status !== false && movedOn(drafts, status);
}

/**
 * Waits for a change with IDLE on INBOX: `inbox` (something happened there, now or since the last pass began),
 * `full` (the poll interval, woken, or Drafts changed: see {@link DRAFTS_CHECK_MS}), `closed` (the connection ended
 * or the runner stops).
 */
export async function idle(
  state: RunnerState,
  grantId: string,
  server: string,
  worker: AccountWorker,
  session: ImapSession,
): Promise<'inbox' | 'full' | 'closed' | 'yield'> {
  const { client } = session;
  // SELECT (again, also when INBOX is selected already: imapflow always sends it), with QRESYNC when there is.
  worker.selectingInbox = true;
  const box = await state.sync.watchInbox(client, grantId).finally(() => {
    worker.selectingInbox = false;
  });
  if (worker.changed) return 'inbox';
  // What the last pass saw of INBOX and Drafts, read once: no pass of this account writes them while it waits.
  const folders = await state.db.orm
    .select({
      folderId: imapFolders.folderId,
      path: imapFolders.path,
      uidNext: imapFolders.uidNext,
      highestModseq: imapFolders.highestModseq,
    })
    .from(imapFolders)
    .where(and(eq(imapFolders.grantId, grantId), inArray(imapFolders.folderId, ['inbox', 'drafts'])));
  const inbox = folders.find((folder) => folder.folderId === 'inbox');
  // A change made while a pass was in other folders, or that the SELECT itself reported, told nobody: the SELECT
  // shows it against what the last INBOX sync saw (its STATUS at the start).
  if (inbox && movedOn(inbox, box)) return 'inbox';
  // Only a Drafts folder synced at least once is watched.
  const draftsFolder = folders.find((folder) => folder.folderId === 'drafts');
  const drafts = draftsFolder?.uidNext != null ? draftsFolder : undefined;
  return new Promise((resolve) => {
    let done = false;
    const finish = (why: 'inbox' | 'full' | 'closed' | 'yield') => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearInterval(contention);
      clearInterval(draftsCheck);
      worker.onChange = () => undefined;
      client.off('close', onClose);
      state.aborter.signal.removeEventListener('abort', onClose);
      worker.wake = () => undefined;
      resolve(why);
    };
    const onClose = () => finish('closed');
    const timer = setTimeout(() => finish('full'), state.config.imap.pollIntervalMs);
    // Others waiting for a connection to this server: give this one up (the account polls meanwhile).
    const contention = setInterval(() => {
      if (state.connector.slots.waiting(server) > 0) finish('yield');
    }, SCAN_INTERVAL_MS);
    // IDLE hears INBOX only: a STATUS of Drafts now and then (it ends the IDLE, which resumes) sees a draft saved again
    // in another mail client; a change there runs a full pass. A STATUS that fails is left to the next one.
    let checking = false;
    const draftsCheck =
      drafts &&
      setInterval(() => {
        if (checking || done) return;
        checking = true;
        draftsChanged(client, drafts)
          .then((changed) => changed && finish('full'))
          .catch(() => undefined)
          .finally(() => {
            checking = false;
          });
      }, DRAFTS_CHECK_MS);
    worker.onChange = () => finish('inbox');
    client.on('close', onClose);
    state.aborter.signal.addEventListener('abort', onClose);
    worker.wake = () => finish('full');
    // Woken, or told of a change, while the pass ended or INBOX was SELECTed (before this wait could hear it): no wait.
    if (state.woken.has(grantId)) return finish('full');
    if (worker.changed) return finish('inbox');
    // IDLE ends when the next command is sent (imapflow sends DONE first), when the connection does, and when the
    // socket has been silent for the command timeout (imapflow sends a NOOP then): idle again until finished.
    void (async () => {
      while (!done) {
        if ((await client.idle()) === false) return finish('closed');
      }
    })().catch(() => finish('closed'));
  });
}

/** Opens the account's connection, listening for changes in the selected folder (INBOX between passes) from then on. */
export async function connect(state: RunnerState, worker: AccountWorker, account: AccountRow): Promise<ImapSession> {
  const session = await open(state, account);
  const changed = () => {
    worker.changed = true;
    worker.onChange();
  };
  // Told at any time, also while a pass runs (then the next wait returns at once): nothing is missed.
  session.client.on('exists', changed);
  session.client.on('expunge', () => worker.selectingInbox || changed());
  session.client.on('flags', () => worker.selectingInbox || changed());
  return session;
}

/** One account's loop (see the module comment); ends on a failure, when the account is gone or invalid, or on stop. */
export async function work(state: RunnerState, grantId: string, worker: AccountWorker): Promise<void> {
  let mode: 'full' | 'inbox' = 'full';
  let server = '';
  try {
    while (state.running && !worker.lost) {
      const account = await accountOf(state, grantId);
      if (!account || account.syncState === 'invalid' || (account.retryAt !== null && account.retryAt > state.nowMs()))
        return;
      server = `${account.imapHost}:${account.imapPort}`;
      worker.session ??= await connect(state, worker, account);
      if (!state.running) return;
      if (mode === 'full') await starting(state, account);
      worker.changed = false;
      // A full pass answers every wake before it; one that comes while it runs asks for another.
      if (mode === 'full') state.woken.delete(grantId);
      const fetching = passFetchSession(state, account);
      try {
        await state.sync.pass(worker.session.client, grantId, {
          inboxOnly: mode === 'inbox',
          signal: state.aborter.signal,
          fetchThread: fetching.open,
        });
      } finally {
        await fetching.close();
      }
      await succeeded(state, grantId, mode === 'full');
      if (state.woken.has(grantId)) {
        mode = 'full';
        continue;
      }
      const session = worker.session;
      if (session.client.capabilities.has('IDLE') && state.connector.slots.waiting(server) === 0) {
        const why = await idle(state, grantId, server, worker, session);
        if (why === 'closed' || why === 'yield') {
          worker.session = undefined;
          await session.close();
          mode = why === 'yield' ? await pause(state, grantId, worker, state.config.imap.pollIntervalMs) : 'full';
        } else mode = why;
      } else {
        // No IDLE, or others wait for this server: give the connection up and poll.
        worker.session = undefined;
        await session.close();
        mode = await pause(state, grantId, worker, state.config.imap.pollIntervalMs);
      }
    }
  } catch (error) {
    if (!state.running || worker.lost) return;
    const failure = failureOf(error) ?? describeFailure(error, `IMAP server ${server}`);
    await failed(state, grantId, failure).catch((cause: unknown) =>
      state.logger.error('imap: recording a sync failure failed', { grant_id: grantId, error: String(cause) }),
    );
  } finally {
    await worker.session?.close();
    worker.session = undefined;
  }
}

export function launch(state: RunnerState, grantId: string): void {
  if (state.workers.has(grantId) || !state.running) return;
  const worker: AccountWorker = {
    done: Promise.resolve(),
    wake: () => undefined,
    session: undefined,
    changed: false,
    onChange: () => undefined,
    lost: false,
  };
  state.workers.set(grantId, worker);
  worker.done = work(state, grantId, worker)
    .catch((error: unknown) =>
      state.logger.error('imap: an account worker failed', {
        grant_id: grantId,
        error: error instanceof Error ? error.message : String(error),
      }),
    )
    .then(() => (worker.lost ? undefined : release(state, grantId)))
    .catch((error: unknown) =>
      state.logger.error('imap: giving an account lease back failed', { grant_id: grantId, error: String(error) }),
    )
    .finally(() => {
      state.workers.delete(grantId);
      // Woken while it was finishing: look again at once.
      if (state.woken.has(grantId)) state.scanner?.wake();
    });
}

/** Renews the leases, and starts a worker for each account that is due, has none and is claimed. */
export async function scan(state: RunnerState): Promise<void> {
  await renew(state);
  const due = await state.db.orm
    .select({ grantId: imapAccounts.grantId })
    .from(imapAccounts)
    .where(
      and(
        ne(imapAccounts.syncState, 'invalid'),
        or(isNull(imapAccounts.retryAt), lte(imapAccounts.retryAt, state.nowMs())),
        leaseFree(state),
      ),
    );
  for (const { grantId } of due) {
    if (!state.workers.has(grantId) && state.running && (await claim(state, grantId))) launch(state, grantId);
  }
}
