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
 *
 * The runner is plain functions over a small state made here (./sync-runner-state.ts): its account workers
 * (./sync-runner-worker.ts) and the reads and writes of an account row (./sync-runner-accounts.ts).
 */
import { availableParallelism } from 'node:os';
import type { CoreDeps } from '../ports/index.js';
import { AppError, notFound } from '../errors.js';
import { eventRecorder } from '../outbox/index.js';
import { startPollingLoop } from '../jobs/index.js';
import type { MailboxSync } from '../providers/contracts.js';
import { FETCH_GROUP_BYTES, FETCH_GROUP_MESSAGES, type Connector } from './connection.js';
import { createFetchThreads } from './fetch-thread.js';
import type { ImapSync } from './sync.js';
import { accountOf, succeeded } from './sync-runner-accounts.js';
import { SCAN_INTERVAL_MS, type AccountWorker, type RunnerState } from './sync-runner-state.js';
import { open, passFetchSession, scan } from './sync-runner-worker.js';

export { RETRY_CAP_MS, SCAN_INTERVAL_MS } from './sync-runner-state.js';

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

/** Creates the runner (started by `start()`). */
export function createImapSyncRunner(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger' | 'config' | 'secrets'>,
  parts: ImapRunnerParts,
): ImapSyncRunner {
  const { db, clock, logger, config } = deps;
  const { sync, connector } = parts;
  const nowMs = () => clock.now().getTime();
  /** The fetch threads of this runner's initial syncs, kept while it runs (their code stays compiled). */
  const fetchThreadLimit = fetchThreadCount(config.imap.fetchThread);
  const state: RunnerState = {
    db,
    logger,
    config,
    deps,
    sync,
    connector,
    record: eventRecorder(deps),
    nowMs,
    workers: new Map<string, AccountWorker>(),
    aborter: new AbortController(),
    scanner: undefined,
    running: false,
    stopping: undefined,
    woken: new Set<string>(),
    owner: deps.newId(),
    renewedAt: -Infinity,
    fetchThreadLimit,
    fetchThreads: createFetchThreads({
      threads: fetchThreadLimit,
      groupMessages: FETCH_GROUP_MESSAGES,
      groupBytes: FETCH_GROUP_BYTES,
    }),
  };

  return {
    start() {
      if (state.running || state.stopping) return;
      state.running = true;
      state.scanner = startPollingLoop({
        name: 'imap sync',
        intervalMs: SCAN_INTERVAL_MS,
        logger,
        async step() {
          await scan(state);
          return false;
        },
      });
    },

    wake(grantId) {
      const worker = state.workers.get(grantId);
      if (worker) {
        state.woken.add(grantId);
        worker.wake();
        return;
      }
      state.woken.add(grantId);
      state.scanner?.wake();
    },

    async run(grantId, signal) {
      const account = await accountOf(state, grantId);
      if (!account) throw notFound('Grant', grantId);
      const session = await open(state, account);
      const fetching = passFetchSession(state, account);
      try {
        await state.sync.pass(session.client, grantId, { signal, fetchThread: fetching.open });
        await succeeded(state, grantId, true);
      } finally {
        await fetching.close();
        await session.close();
      }
    },

    async waitForInitialSync(grantId, timeoutMs = DEFAULT_WAIT_MS) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const account = await accountOf(state, grantId);
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

    active: () => [...state.workers.keys()],

    fetchThreadIds: () => state.fetchThreads.threadIds(),

    stop() {
      state.stopping ??= (async () => {
        state.running = false;
        state.aborter.abort();
        await state.scanner?.stop();
        // Closing the connections ends IDLE and any command under way at once.
        for (const worker of state.workers.values()) worker.session?.client.close();
        await Promise.all([...state.workers.values()].map((worker) => worker.done));
        await state.fetchThreads.stop();
      })();
      return state.stopping;
    },
  };
}
