/**
 * @module background/retention
 * Deletes what the outbox and the job queue no longer need, so tables written for every received message do not
 * grow without bound. Run by the background role (./background.ts) every {@link PURGE_INTERVAL_MS}.
 *
 * Rules (times from `deps.clock`):
 * - an outbox event dispatched more than {@link DISPATCHED_EVENT_RETENTION_MS} ago: its fan-out committed with
 *   the dispatch (delivery jobs carry the whole notification), so nothing reads the row again;
 * - an outbox event never dispatched and recorded more than {@link UNDISPATCHED_EVENT_RETENTION_MS} ago, while no
 *   webhook is delivering. Why no subscription is owed it: the dispatcher leaves events undispatched only while
 *   no subscription anywhere is `active` or `failing` (otherwise it takes every pending event within moments).
 *   A subscription receives only events with `seq > start_seq`, and `start_seq` is `max(seq)` when it was created,
 *   so one created after the event never gets it. The only subscriptions that could still get such an event
 *   existed when it was recorded and have been `pause`d or `failed` ever since, and delivery drops notifications
 *   for those; besides, a notification is given up {@link GIVE_UP_WINDOW_MS} after it is queued. While some
 *   webhook IS delivering, old undispatched events are kept: they are the backlog of a process that was down (or
 *   fell behind) and the dispatcher is about to fan them out; once dispatched they fall under the first rule.
 * - the outbox row with the highest `seq` is never deleted. `seq` is AUTOINCREMENT (sqlite_sequence keeps the
 *   high-water mark, so a deleted number is never reused), but webhook creation reads `max(seq)` from the table
 *   for `start_seq`: keeping the newest row keeps that read equal to the high-water mark instead of relying on
 *   sqlite_sequence alone (an emptied table would give `start_seq` 0).
 * - a dead job (given up, `dead_at`) more than {@link DEAD_JOB_RETENTION_MS} ago. Completed jobs need no rule:
 *   the queue deletes them when they finish. Queued, leased and retrying jobs are never touched;
 * - a thread claim lapsed more than {@link LAPSED_CLAIM_RETENTION_MS} ago (a claim of a deleted grant or thread
 *   would otherwise stay forever), except a test-mode application's, which lapse by its own clock.
 *
 * Every delete is a chunk of at most {@link PURGE_CHUNK_ROWS} rows chosen by a read outside the write lock and
 * deleted by key in its own `db.write` (conditions checked again there), with a turn of the event loop between
 * chunks: the inbound mail writer shares that lock, so a large purge never holds it for long. A purge with
 * nothing to delete makes no write at all.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { GIVE_UP_WINDOW_MS } from '../webhooks/index.js';
import {
  deadJobsBefore,
  deleteDeadJobs,
  deleteLapsedClaims,
  deleteDispatchedEvents,
  deleteUndispatchedEvents,
  dispatchedEventsBefore,
  lapsedClaimsBefore,
  pendingEventsAfter,
} from './retention-store.js';
import type { PurgeResult, Retention, RetentionOptions } from './contracts.js';

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A dispatched outbox event is kept this long after its dispatch (for inspection), then deleted. */
export const DISPATCHED_EVENT_RETENTION_MS = 24 * HOUR;
/** An undispatched outbox event is deleted this long after it was recorded (while no webhook is delivering). */
export const UNDISPATCHED_EVENT_RETENTION_MS = GIVE_UP_WINDOW_MS;
/** A dead (given-up) job is kept this long for inspection, then deleted. */
export const DEAD_JOB_RETENTION_MS = 7 * DAY;
/** A thread claim is deleted this long after it lapsed (a lapsed claim binds nothing; the next claim replaces it). */
export const LAPSED_CLAIM_RETENTION_MS = DAY;
/** Most rows one purge transaction deletes. */
export const PURGE_CHUNK_ROWS = 1_000;
/** Real time between purges of a running background role. */
export const PURGE_INTERVAL_MS = 10 * MINUTE;
/** Real time from the start of the background role to its first purge (start-up work goes first). */
export const PURGE_FIRST_DELAY_MS = 30 * 1000;

/** Creates the purge. `purge` may run in several processes at once: each chunk re-checks its conditions. */
export function createRetention({ db, clock }: Pick<CoreDeps, 'db' | 'clock'>, options: RetentionOptions): Retention {
  const chunkRows = options.chunkRows ?? PURGE_CHUNK_ROWS;
  const stopped = (signal: AbortSignal | undefined) => signal?.aborted === true;

  /** Deletes the chunks `next` picks (each with `condition` re-checked in the write) until none is left. */
  async function deleteInChunks<K extends string | number>(
    next: () => Promise<{ keys: K[]; more: boolean }>,
    remove: (keys: K[]) => Promise<number>,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    let total = 0;
    while (!stopped(signal)) {
      const { keys, more } = await next();
      if (keys.length > 0) {
        const deleted = await remove(keys);
        total += deleted;
        // Another process deleted (or changed) them first: let it go on, do not spin.
        if (deleted === 0) break;
      }
      if (!more) break;
      // Other work (inbound mail, its writer) runs between two chunks.
      await nextTurn();
    }
    return total;
  }

  /** Deletes, chunk by chunk, the rows `pick` finds older than `before` (each chunk re-checked by `remove`). */
  function purgeBefore<K extends string | number>(
    before: number,
    pick: (db: Database, before: number, limit: number) => Promise<K[]>,
    remove: (db: Database, keys: K[], before: number) => Promise<number>,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    return deleteInChunks(
      async () => {
        const keys = await pick(db, before, chunkRows);
        return { keys, more: keys.length === chunkRows };
      },
      (keys) => remove(db, keys, before),
      signal,
    );
  }

  function purgeDispatched(nowMs: number, signal?: AbortSignal): Promise<number> {
    const before = unixSeconds(new Date(nowMs - (options.dispatchedRetentionMs ?? DISPATCHED_EVENT_RETENTION_MS)));
    return purgeBefore(before, dispatchedEventsBefore, deleteDispatchedEvents, signal);
  }

  async function purgeUndispatched(nowMs: number, signal?: AbortSignal): Promise<number> {
    const before = unixSeconds(new Date(nowMs - UNDISPATCHED_EVENT_RETENTION_MS));
    // created_at has no index: walk the pending rows in seq order (outbox_pending_idx), which is recording order,
    // and stop after the page that reaches a young event; a later run continues as events age.
    let after = 0;
    return deleteInChunks(
      async () => {
        const rows = await pendingEventsAfter(db, after, chunkRows);
        after = rows.at(-1)?.seq ?? after;
        const old = rows.filter((row) => row.createdAt < before);
        return { keys: old.map((row) => row.seq), more: rows.length === chunkRows && old.length === rows.length };
      },
      (keys) => deleteUndispatchedEvents(db, keys, before),
      signal,
    );
  }

  const purgeDeadJobs = (nowMs: number, signal?: AbortSignal) =>
    purgeBefore(nowMs - DEAD_JOB_RETENTION_MS, deadJobsBefore, deleteDeadJobs, signal);
  const purgeLapsedClaims = (nowMs: number, signal?: AbortSignal) =>
    purgeBefore(nowMs - LAPSED_CLAIM_RETENTION_MS, lapsedClaimsBefore, deleteLapsedClaims, signal);

  return {
    /** Applies every rule once, as of the clock's now. Between chunks it stops early when `signal` is aborted. */
    async purge(signal?: AbortSignal): Promise<PurgeResult> {
      const nowMs = clock.now().getTime();
      const dispatchedEvents = await purgeDispatched(nowMs, signal);
      const undispatchedEvents =
        stopped(signal) || (await options.interested()) ? 0 : await purgeUndispatched(nowMs, signal);
      const deadJobs = stopped(signal) ? 0 : await purgeDeadJobs(nowMs, signal);
      const lapsedClaims = stopped(signal) ? 0 : await purgeLapsedClaims(nowMs, signal);
      return { dispatchedEvents, undispatchedEvents, deadJobs, lapsedClaims };
    },
  };
}

export type { PurgeResult, Retention, RetentionOptions } from './contracts.js';
