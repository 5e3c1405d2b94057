/**
 * @module imap/sync-runner-state
 * What the parts of the sync runner (./sync-runner.ts) share: the state made once by `createImapSyncRunner`, an
 * account worker, and the condition of an account no other runner holds.
 */
import { eq, isNull, lt, or } from 'drizzle-orm';
import type { imapAccounts as ImapAccounts } from '../../storage/schema/connected.js';
import { imapAccounts } from '../../storage/schema/connected.js';
import type { CoreDeps } from '../ports/index.js';
import type { eventRecorder } from '../outbox/index.js';
import type { PollingLoop } from '../jobs/index.js';
import type { Connector, ImapSession } from './connection.js';
import type { FetchThreads } from './fetch-thread.js';
import type { ImapSync } from './sync.js';

/** How often the runner looks for accounts that are due. */
export const SCAN_INTERVAL_MS = 1_000;

/**
 * How often an account idling on INBOX asks the STATUS of its Drafts folder: IDLE hears the selected folder only, and a
 * draft saved again in the user's own mail client (a new version appended, the old one expunged) must show as the same
 * draft within seconds, not at the next full pass (`AGENTPOST_IMAP_POLL_INTERVAL`).
 */
export const DRAFTS_CHECK_MS = 5_000;

/** Longest back-off between two attempts of a failing account. */
export const RETRY_CAP_MS = 30 * 60_000;

export type AccountRow = typeof ImapAccounts.$inferSelect;

/** A running account worker. */
export interface AccountWorker {
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

/** What the functions of the runner share, made once by `createImapSyncRunner`. */
export interface RunnerState {
  db: CoreDeps['db'];
  logger: CoreDeps['logger'];
  config: CoreDeps['config'];
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger' | 'config' | 'secrets'>;
  sync: ImapSync;
  connector: Connector;
  record: ReturnType<typeof eventRecorder>;
  nowMs: () => number;
  workers: Map<string, AccountWorker>;
  aborter: AbortController;
  scanner: PollingLoop | undefined;
  running: boolean;
  stopping: Promise<void> | undefined;
  /**
   * Grants woken since their last full pass began (or before their worker existed): the wait after the pass that runs
   * is skipped, so a wake is never lost between a pass's end and the start of the wait that would hear it.
   */
  woken: Set<string>;
  /** This runner, as the holder of leases. */
  owner: string;
  renewedAt: number;
  fetchThreadLimit: number;
  /** The fetch threads of this runner's initial syncs, kept while it runs (their code stays compiled). */
  fetchThreads: FetchThreads;
}

/** An account no other runner holds: unheld, held by this one, or its lease run out. */
export const leaseFree = (state: RunnerState) =>
  or(
    isNull(imapAccounts.leaseOwner),
    eq(imapAccounts.leaseOwner, state.owner),
    lt(imapAccounts.leaseUntil, state.nowMs()),
  );
