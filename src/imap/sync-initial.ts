/**
 * @module imap/sync-initial
 * The initial sync of a folder (./sync.ts): the UIDs of the last `sync_days` days, newest first, with its progress
 * recorded as it goes so that a pass that stopped resumes below the lowest UID stored.
 */
import type { FolderRun, SyncState } from './sync-state.js';
import { folderKey } from './sync-state.js';
import { fetchAndStore } from './sync-fetch.js';
import { markInitialWindow, recordInitialProgress } from './sync-store.js';

/**
 * Least time between two progress records of an initial sync: each is a write on this thread, which takes the write
 * lock from the mail writer thread for a moment. The resume point is exact whatever the interval (UIDs already
 * linked are skipped).
 */
const PROGRESS_INTERVAL_MS = 1_000;

/** The initial sync of a folder (or its rest, after a stop): the window's messages, newest first. */
export async function initialSync(
  state: SyncState,
  run: FolderRun,
  mailbox: { uidNext: number; highestModseq: string | null },
): Promise<void> {
  const { db, clock, now } = state;
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
    const window = { floor, lowest, uidNext: mailbox.uidNext, highestModseq: mailbox.highestModseq, todo };
    await db.write((tx) =>
      markInitialWindow(tx, account.grantId, folder.path, window, { seconds: now(), ms: clock.now().getTime() }),
    );
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
    const progress = { lowest: done ? floor : low, done, count };
    await db.durableWrite((tx) =>
      recordInitialProgress(tx, account.grantId, folder.path, progress, { seconds: now(), ms: clock.now().getTime() }),
    );
  };
  try {
    await fetchAndStore(state, { ...run, initial: true }, rest, async (chunk) => {
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
  state.uidsChecked.set(folderKey(account.grantId, folder.path), clock.now().getTime());
}
