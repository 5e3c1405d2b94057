/**
 * @module imap/sync-runner
 * Runs the sync of connected accounts (./sync.ts) in the worker role (started by src/background/background.ts):
 *
 * - **Finding work.** A scan every {@link SCAN_INTERVAL_MS} (and at once on `wake(grantId)`) starts an account
 *   worker for each `imap_accounts` row that is due: not `invalid`, and past its `retry_at`. So a grant made by the
 *   connect flow (`sync_state = 'initial'`, no folders) is picked up within a second even unwoken, and a
 *   re-authenticated one (`invalid` back to `initial`) resumes from its folders' state.
 * - **An account worker** holds one IMAP connection (a slot of its server, ./connection.ts) and loops: a pass, then
 *   it waits for a change. With IDLE it SELECTs INBOX and idles: new mail, an expunge or a flag change there runs
 *   an INBOX-only pass; every `config.imap.pollIntervalMs` (and on `wake`) a full pass covers the other folders.
 *   Without IDLE, or as soon as other connections wait for a slot of its server (looked at every second while it
 *   idles), it logs out and polls instead, so idle accounts never starve the others.
 * - **Faults.** A failed pass ends the worker: failures in a row counted, `retry_at` set by exponential back-off (at
 *   most {@link RETRY_CAP_MS}), `last_error` kept, state `failing`; other accounts go on. A refused login makes the
 *   account `invalid` and its grant `grant_status: invalid`, with one `grant.expired` notification on that change;
 *   it is not tried again until the connect flow re-authenticates it.
 * - **Several processes.** Each runner (one per process with the worker role) holds the accounts it syncs by a lease
 *   in their row (`lease_owner`, `lease_until`): an account is started only once claimed, the runner renews its
 *   leases every third of `config.imap.leaseMs`, a worker whose lease another runner took stops, and a worker that
 *   ends gives its lease back. So each account is synced by one process; a process that died leaves its accounts to
 *   the others once its leases ran out.
 * - **Fetch threads.** With `AGENTPOST_IMAP_FETCH_THREAD` (`auto`: 4 cores or more), the large FETCHes of an initial
 *   sync run on a thread of their own, over a second connection of the server (a slot of it, when one is free; else
 *   on the pass's own connection): ./fetch-thread.ts. The threads are kept while the runner runs, so their code stays
 *   compiled; a session is logged out when its pass ends.
 * - **Stop.** `stop()` ends every wait, closes every connection (an IDLE ends at once), waits for the workers and
 *   ends the fetch threads.
 */
import { availableParallelism } from 'node:os';
import { and, eq, inArray, isNull, lt, lte, ne, or } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { imapAccounts, imapFolders } from '../../storage/schema/connected.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError, notFound } from '../errors.js';
import { eventRecorder } from '../outbox/index.js';
import { toGrant } from '../grants/index.js';
import { defaultBackoffMs, startPollingLoop, type PollingLoop } from '../jobs/index.js';
import type { MailboxSync } from '../providers/contracts.js';
import {
  describeFailure,
  endpointsOf,
  failureOf,
  FETCH_GROUP_BYTES,
  FETCH_GROUP_MESSAGES,
  type Connector,
  type ConnectFailure,
  type ImapSession,
} from './connection.js';
import { createFetchThreads, type FetchSession } from './fetch-thread.js';
import type { ImapSync } from './sync.js';

/** How often the runner looks for accounts that are due. */
export const SCAN_INTERVAL_MS = 1_000;

/** Longest back-off between two attempts of a failing account. */
export const RETRY_CAP_MS = 30 * 60_000;

/** How long `waitForInitialSync` waits by default. */
const DEFAULT_WAIT_MS = 10 * 60_000;

/** The sync of connected accounts as the core exposes it (`core.accounts.sync`). */
export interface ImapSyncRunner extends MailboxSync {
  /** Starts finding and syncing accounts in this process (the worker role). Once. */
  start(): void;
  /** Asks for a pass of this grant's account now (the connect flow calls it after commit). */
  wake(grantId: string): void;
  /**
   * Resolves once the grant's initial sync is complete (from the database: works whichever process syncs);
   * rejects when its login is refused (`invalid`), when the grant is gone, or after `timeoutMs`.
   */
  waitForInitialSync(grantId: string, timeoutMs?: number): Promise<void>;
  /** Accounts with a worker in this process now. */
  active(): string[];
  /** Thread ids of the fetch threads alive now (./fetch-thread.ts; none until an initial sync used one). */
  fetchThreadIds(): number[];
  /** Stops every worker and connection; resolves when they are done. */
  stop(): Promise<void>;
}

/** What the runner uses. */
export interface ImapRunnerParts {
  sync: ImapSync;
  connector: Connector;
}

type AccountRow = typeof imapAccounts.$inferSelect;

/**
 * Cores from which `AGENTPOST_IMAP_FETCH_THREAD=auto` uses fetch threads: an initial sync then has a core for each
 * of its busy threads (the fetch thread, the event loop, the mail writer and its prepare thread). On 2 cores, where
 * those threads and the server already share the cores fully, a sync is no faster with it (bench/imap-sync.bench.ts).
 */
export const FETCH_THREAD_CORES = 4;

/** How many fetch threads a runner keeps at most (`on`, or `auto` with cores enough): a core each beyond three. */
export function fetchThreadCount(setting: 'auto' | 'on' | 'off', cores = availableParallelism()): number {
  if (setting === 'off' || (setting === 'auto' && cores < FETCH_THREAD_CORES)) return 0;
  return Math.min(4, Math.max(1, cores - 3));
}

/** A running account worker. */
interface AccountWorker {
  done: Promise<void>;
  /** Ends the current wait (a pass follows). */
  wake(): void;
  session: ImapSession | undefined;
  /** Something happened in the selected folder since the last pass began (EXISTS, EXPUNGE, FETCH FLAGS). */
  changed: boolean;
  /** Ends an IDLE wait on such a change. */
  onChange(): void;
  /**
   * Set while INBOX is SELECTed to wait: the expunges and flags that SELECT reports (QRESYNC) are not news (a server
   * may repeat expunges it cannot date; the comparison after the SELECT sees every change since the last INBOX pass).
   */
  selectingInbox?: boolean;
  /** Its lease went to another runner: it stops without recording a failure. */
  lost: boolean;
}

/** Creates the runner (started by `start()`). */
export function createImapSyncRunner(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger' | 'config' | 'secrets'>,
  parts: ImapRunnerParts,
): ImapSyncRunner {
  const { db, clock, logger, config } = deps;
  const { sync, connector } = parts;
  const record = eventRecorder(deps);
  const nowMs = () => clock.now().getTime();
  const workers = new Map<string, AccountWorker>();
  const aborter = new AbortController();
  let scanner: PollingLoop | undefined;
  let running = false;
  let stopping: Promise<void> | undefined;
  /**
   * Grants woken since their last full pass began (or before their worker existed): the wait after the pass that runs
   * is skipped, so a wake is never lost between a pass's end and the start of the wait that would hear it.
   */
  const woken = new Set<string>();
  /** This runner, as the holder of leases. */
  const owner = deps.newId();
  let renewedAt = -Infinity;
  /** An account no other runner holds: unheld, held by this one, or its lease run out. */
  const leaseFree = () =>
    or(isNull(imapAccounts.leaseOwner), eq(imapAccounts.leaseOwner, owner), lt(imapAccounts.leaseUntil, nowMs()));

  /** Takes the account's lease; false when another runner holds it. */
  async function claim(grantId: string): Promise<boolean> {
    const result = await db.write((tx) =>
      tx
        .update(imapAccounts)
        .set({ leaseOwner: owner, leaseUntil: nowMs() + config.imap.leaseMs })
        .where(and(eq(imapAccounts.grantId, grantId), leaseFree())),
    );
    return result.rowsAffected === 1;
  }

  /** Gives the account's lease back (a worker ended). */
  async function release(grantId: string): Promise<void> {
    await db.write((tx) =>
      tx
        .update(imapAccounts)
        .set({ leaseOwner: null, leaseUntil: null })
        .where(and(eq(imapAccounts.grantId, grantId), eq(imapAccounts.leaseOwner, owner))),
    );
  }

  /** Every third of the lease: renews this runner's leases; a worker whose account another runner took stops. */
  async function renew(): Promise<void> {
    if (workers.size === 0 || nowMs() - renewedAt < config.imap.leaseMs / 3) return;
    renewedAt = nowMs();
    const active = [...workers.keys()];
    const held = await db.write((tx) =>
      tx
        .update(imapAccounts)
        .set({ leaseUntil: nowMs() + config.imap.leaseMs })
        .where(and(eq(imapAccounts.leaseOwner, owner), inArray(imapAccounts.grantId, active)))
        .returning({ grantId: imapAccounts.grantId }),
    );
    const kept = new Set(held.map((row) => row.grantId));
    for (const grantId of active) {
      const worker = workers.get(grantId);
      if (!worker || kept.has(grantId)) continue;
      logger.warn('imap: another process holds the account now; this one stops syncing it', { grant_id: grantId });
      worker.lost = true;
      worker.wake();
      worker.session?.client.close();
    }
  }

  /** The fetch threads of this runner's initial syncs, kept while it runs (their code stays compiled). */
  const fetchThreadLimit = fetchThreadCount(config.imap.fetchThread);
  const fetchThreads = createFetchThreads({
    threads: fetchThreadLimit,
    groupMessages: FETCH_GROUP_MESSAGES,
    groupBytes: FETCH_GROUP_BYTES,
  });

  /**
   * The fetch session of one pass (see PassOptions.fetchThread): opened on first use, when a fetch thread and a slot
   * of the server are free then; `close` logs it out after the pass (the thread stays). A session that cannot log in
   * leaves the FETCHes to the pass's own connection (logged): the pass itself fails as it would.
   */
  function passFetchSession(account: AccountRow): {
    open: () => Promise<FetchSession | undefined>;
    close: () => Promise<void>;
  } {
    let opened: Promise<FetchSession | undefined> | undefined;
    return {
      open: () =>
        (opened ??= (async () => {
          if (!deps.secrets || fetchThreadLimit === 0) return undefined;
          return connector.openFetchSession(endpointsOf(account, deps.secrets).imap, fetchThreads);
        })().catch((error: unknown) => {
          logger.warn('imap: no fetch thread for the initial sync; it fetches on its own connection', {
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

  async function accountOf(grantId: string): Promise<AccountRow | undefined> {
    const [row] = await db.orm.select().from(imapAccounts).where(eq(imapAccounts.grantId, grantId)).limit(1);
    return row;
  }

  async function open(account: AccountRow): Promise<ImapSession> {
    if (!deps.secrets)
      throw new AppError('internal', 'No secret box (AGENTPOST_SECRET_KEY) to open the account password with.');
    return connector.openImap(endpointsOf(account, deps.secrets).imap);
  }

  /** A pass finished: the failures are over, and a full pass marks the account synced. */
  async function succeeded(grantId: string, full: boolean): Promise<void> {
    await db.write((tx) =>
      tx
        .update(imapAccounts)
        .set({
          failures: 0,
          retryAt: null,
          lastError: null,
          ...(full ? { syncState: 'idle' as const, lastSyncAt: Math.floor(nowMs() / 1000) } : {}),
          updatedAt: nowMs(),
        })
        .where(and(eq(imapAccounts.grantId, grantId), ne(imapAccounts.syncState, 'invalid'))),
    );
  }

  /** A pass failed: back-off, or (login refused) the account and grant invalid with `grant.expired` once. */
  async function failed(grantId: string, failure: ConnectFailure): Promise<void> {
    await db.write(async (tx) => {
      const [account] = await tx.select().from(imapAccounts).where(eq(imapAccounts.grantId, grantId));
      if (!account) return;
      const failures = account.failures + 1;
      if (failure.kind === 'auth') {
        await tx
          .update(imapAccounts)
          .set({ syncState: 'invalid', failures, retryAt: null, lastError: failure.message, updatedAt: nowMs() })
          .where(eq(imapAccounts.grantId, grantId));
        const [grant] = await tx.select().from(tables.grants).where(eq(tables.grants.id, grantId));
        if (grant && grant.grantStatus !== 'invalid') {
          const at = Math.floor(nowMs() / 1000);
          const [updated] = await tx
            .update(tables.grants)
            .set({ grantStatus: 'invalid', updatedAt: at })
            .where(eq(tables.grants.id, grantId))
            .returning();
          await record(tx, {
            applicationId: grant.applicationId,
            grantId,
            type: 'grant.expired',
            objectId: grantId,
            object: toGrant(updated ?? grant),
            createdAt: at,
          });
        }
        return;
      }
      const retryAt = nowMs() + Math.min(defaultBackoffMs(failures), RETRY_CAP_MS);
      await tx
        .update(imapAccounts)
        .set({ syncState: 'failing', failures, retryAt, lastError: failure.message, updatedAt: nowMs() })
        .where(eq(imapAccounts.grantId, grantId));
    });
    if (failure.kind === 'auth')
      logger.warn('imap: the server refused the login; the grant is invalid until re-authenticated', {
        grant_id: grantId,
        error: failure.message,
      });
    else logger.warn('imap: a sync pass failed; it will be retried', { grant_id: grantId, error: failure.message });
  }

  /** Marks the pass under way (`initial` until the initial sync completed, `running` after). */
  async function starting(account: AccountRow): Promise<void> {
    const state = account.lastSyncAt === null ? 'initial' : 'running';
    if (account.syncState === state) return;
    await db.write((tx) =>
      tx
        .update(imapAccounts)
        .set({ syncState: state, updatedAt: nowMs() })
        .where(and(eq(imapAccounts.grantId, account.grantId), ne(imapAccounts.syncState, 'invalid'))),
    );
  }

  /** Sleeps `ms` or until woken or stopped; not at all when a wake came since the last full pass began. */
  function pause(grantId: string, worker: AccountWorker, ms: number): Promise<'full'> {
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        aborter.signal.removeEventListener('abort', finish);
        worker.wake = () => undefined;
        resolve('full');
      };
      const timer = setTimeout(finish, ms);
      aborter.signal.addEventListener('abort', finish);
      worker.wake = finish;
      if (woken.has(grantId)) finish();
    });
  }

  /**
   * Waits for a change with IDLE on INBOX: `inbox` (something happened there, now or since the last pass began),
   * `full` (the poll interval, or woken), `closed` (the connection ended or the runner stops).
   */
  async function idle(
    grantId: string,
    server: string,
    worker: AccountWorker,
    session: ImapSession,
  ): Promise<'inbox' | 'full' | 'closed' | 'yield'> {
    const { client } = session;
    // SELECT (again, also when INBOX is selected already: imapflow always sends it), with QRESYNC when there is.
    worker.selectingInbox = true;
    const box = await sync.watchInbox(client, grantId).finally(() => {
      worker.selectingInbox = false;
    });
    if (worker.changed) return 'inbox';
    // A change made while a pass was in other folders, or that the SELECT itself reported, told nobody: the SELECT
    // shows it against what the last INBOX sync saw (its STATUS at the start).
    const [inbox] = await db.orm
      .select({ uidNext: imapFolders.uidNext, highestModseq: imapFolders.highestModseq })
      .from(imapFolders)
      .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.folderId, 'inbox')))
      .limit(1);
    if (
      inbox &&
      (box.uidNext > (inbox.uidNext ?? 0) ||
        (box.highestModseq !== undefined &&
          inbox.highestModseq !== null &&
          box.highestModseq.toString() !== inbox.highestModseq))
    )
      return 'inbox';
    return new Promise((resolve) => {
      let done = false;
      const finish = (why: 'inbox' | 'full' | 'closed' | 'yield') => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearInterval(contention);
        worker.onChange = () => undefined;
        client.off('close', onClose);
        aborter.signal.removeEventListener('abort', onClose);
        worker.wake = () => undefined;
        resolve(why);
      };
      const onClose = () => finish('closed');
      const timer = setTimeout(() => finish('full'), config.imap.pollIntervalMs);
      // Others waiting for a connection to this server: give this one up (the account polls meanwhile).
      const contention = setInterval(() => {
        if (connector.slots.waiting(server) > 0) finish('yield');
      }, SCAN_INTERVAL_MS);
      worker.onChange = () => finish('inbox');
      client.on('close', onClose);
      aborter.signal.addEventListener('abort', onClose);
      worker.wake = () => finish('full');
      // Woken, or told of a change, while the pass ended or INBOX was SELECTed (before this wait could hear it): no wait.
      if (woken.has(grantId)) return finish('full');
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
  async function connect(worker: AccountWorker, account: AccountRow): Promise<ImapSession> {
    const session = await open(account);
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
  async function work(grantId: string, worker: AccountWorker): Promise<void> {
    let mode: 'full' | 'inbox' = 'full';
    let server = '';
    try {
      while (running && !worker.lost) {
        const account = await accountOf(grantId);
        if (!account || account.syncState === 'invalid' || (account.retryAt !== null && account.retryAt > nowMs()))
          return;
        server = `${account.imapHost}:${account.imapPort}`;
        worker.session ??= await connect(worker, account);
        if (!running) return;
        if (mode === 'full') await starting(account);
        worker.changed = false;
        // A full pass answers every wake before it; one that comes while it runs asks for another.
        if (mode === 'full') woken.delete(grantId);
        const fetching = passFetchSession(account);
        try {
          await sync.pass(worker.session.client, grantId, {
            inboxOnly: mode === 'inbox',
            signal: aborter.signal,
            fetchThread: fetching.open,
          });
        } finally {
          await fetching.close();
        }
        await succeeded(grantId, mode === 'full');
        if (woken.has(grantId)) {
          mode = 'full';
          continue;
        }
        const session = worker.session;
        if (session.client.capabilities.has('IDLE') && connector.slots.waiting(server) === 0) {
          const why = await idle(grantId, server, worker, session);
          if (why === 'closed' || why === 'yield') {
            worker.session = undefined;
            await session.close();
            mode = why === 'yield' ? await pause(grantId, worker, config.imap.pollIntervalMs) : 'full';
          } else mode = why;
        } else {
          // No IDLE, or others wait for this server: give the connection up and poll.
          worker.session = undefined;
          await session.close();
          mode = await pause(grantId, worker, config.imap.pollIntervalMs);
        }
      }
    } catch (error) {
      if (!running || worker.lost) return;
      const failure = failureOf(error) ?? describeFailure(error, `IMAP server ${server}`);
      await failed(grantId, failure).catch((cause: unknown) =>
        logger.error('imap: recording a sync failure failed', { grant_id: grantId, error: String(cause) }),
      );
    } finally {
      await worker.session?.close();
      worker.session = undefined;
    }
  }

  function launch(grantId: string): void {
    if (workers.has(grantId) || !running) return;
    const worker: AccountWorker = {
      done: Promise.resolve(),
      wake: () => undefined,
      session: undefined,
      changed: false,
      onChange: () => undefined,
      lost: false,
    };
    workers.set(grantId, worker);
    worker.done = work(grantId, worker)
      .catch((error: unknown) =>
        logger.error('imap: an account worker failed', {
          grant_id: grantId,
          error: error instanceof Error ? error.message : String(error),
        }),
      )
      .then(() => (worker.lost ? undefined : release(grantId)))
      .catch((error: unknown) =>
        logger.error('imap: giving an account lease back failed', { grant_id: grantId, error: String(error) }),
      )
      .finally(() => {
        workers.delete(grantId);
        // Woken while it was finishing: look again at once.
        if (woken.has(grantId)) scanner?.wake();
      });
  }

  /** Renews the leases, and starts a worker for each account that is due, has none and is claimed. */
  async function scan(): Promise<void> {
    await renew();
    const due = await db.orm
      .select({ grantId: imapAccounts.grantId })
      .from(imapAccounts)
      .where(
        and(
          ne(imapAccounts.syncState, 'invalid'),
          or(isNull(imapAccounts.retryAt), lte(imapAccounts.retryAt, nowMs())),
          leaseFree(),
        ),
      );
    for (const { grantId } of due) {
      if (!workers.has(grantId) && running && (await claim(grantId))) launch(grantId);
    }
  }

  return {
    start() {
      if (running || stopping) return;
      running = true;
      scanner = startPollingLoop({
        name: 'imap sync',
        intervalMs: SCAN_INTERVAL_MS,
        logger,
        async step() {
          await scan();
          return false;
        },
      });
    },

    wake(grantId) {
      const worker = workers.get(grantId);
      if (worker) {
        woken.add(grantId);
        worker.wake();
        return;
      }
      woken.add(grantId);
      scanner?.wake();
    },

    async run(grantId, signal) {
      const account = await accountOf(grantId);
      if (!account) throw notFound('Grant', grantId);
      const session = await open(account);
      const fetching = passFetchSession(account);
      try {
        await sync.pass(session.client, grantId, { signal, fetchThread: fetching.open });
        await succeeded(grantId, true);
      } finally {
        await fetching.close();
        await session.close();
      }
    },

    async waitForInitialSync(grantId, timeoutMs = DEFAULT_WAIT_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const account = await accountOf(grantId);
        if (!account) throw notFound('Grant', grantId);
        if (account.syncState === 'invalid')
          throw new AppError(
            'invalid_request',
            `The account's login was refused: ${account.lastError ?? 'invalid credentials'}`,
          );
        if (account.lastSyncAt !== null && account.syncState !== 'initial') return;
        if (Date.now() >= deadline)
          throw new AppError(
            'internal',
            `The initial sync of grant ${grantId} did not complete within ${timeoutMs} ms (state ${account.syncState}, ${account.syncDone}/${account.syncTotal}${account.lastError ? `, last error: ${account.lastError}` : ''}).`,
          );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },

    active: () => [...workers.keys()],

    fetchThreadIds: () => fetchThreads.threadIds(),

    stop() {
      stopping ??= (async () => {
        running = false;
        aborter.abort();
        await scanner?.stop();
        // Closing the connections ends IDLE and any command under way at once.
        for (const worker of workers.values()) worker.session?.client.close();
        await Promise.all([...workers.values()].map((worker) => worker.done));
        await fetchThreads.stop();
      })();
      return stopping;
    },
  };
}
