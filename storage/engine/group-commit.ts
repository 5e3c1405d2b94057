/**
 * @module storage/engine/group-commit
 * Group commit: items that arrive while a write transaction is running are written together in the next one,
 * by one call of the writer, so one log sync and a few multi-row statements cover many of them. When the batch
 * fails it is retried one item per transaction, so only the guilty item fails. A caller's promise settles only
 * after the transaction holding its item committed (or failed). Writers must only write through the
 * transaction, so that running them again after a rollback is safe.
 */
import type { Database } from '../db.js';
import type { Tx } from '../orm.js';

/** Options of {@link createGroupCommit}. */
export interface GroupCommitOptions {
  /** Most items in one transaction (default 64). */
  maxBatch?: number;
  /**
   * True while more items are about to arrive (e.g. messages being parsed): the batch then waits for them, up to
   * `maxHoldMs` after its first item. With the embedded driver each COMMIT's fsync blocks the event loop, so a
   * fuller batch is worth a fraction of a millisecond of latency.
   */
  moreComing?: () => boolean;
  /** Longest wait for `moreComing` items (default 2 ms). */
  maxHoldMs?: number;
}

/** A group committer. */
export interface GroupCommit<Item, Result> {
  /** Writes `item` in a shared write transaction; resolves with its result after the commit. */
  run(item: Item): Promise<Result>;
}

/** Writes a batch of items in the transaction; returns one result per item, in order. */
export type BatchWriter<Item, Result> = (tx: Tx, items: Item[]) => Promise<Result[]>;

interface Pending<Item, Result> {
  item: Item;
  since: number;
  resolve(value: Result): void;
  reject(error: unknown): void;
}

/** Creates a group committer on `db` that writes with `write`. */
export function createGroupCommit<Item, Result>(
  db: Database,
  write: BatchWriter<Item, Result>,
  { maxBatch = 64, moreComing, maxHoldMs = 2 }: GroupCommitOptions = {},
): GroupCommit<Item, Result> {
  const pending: Pending<Item, Result>[] = [];
  let flushing = false;
  let arrived: (() => void) | undefined;

  /** Waits until another item arrives or `ms` pass. */
  function nextArrival(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        arrived = undefined;
        resolve();
      }
      arrived = done;
    });
  }

  async function commit(batch: Pending<Item, Result>[]): Promise<void> {
    // durableWrite resolves once the batch is on disk, without an fsync on the event loop.
    const results = await db.durableWrite(async (tx) => {
      const written = await write(
        tx,
        batch.map((entry) => entry.item),
      );
      if (written.length !== batch.length)
        throw new Error(`group commit: the writer returned ${written.length} results for ${batch.length} items`);
      return written;
    });
    batch.forEach((entry, index) => entry.resolve(results[index]!));
  }

  async function flush(): Promise<void> {
    flushing = true;
    try {
      while (pending.length > 0) {
        const held = performance.now() - pending[0]!.since;
        if (pending.length < maxBatch && held < maxHoldMs && moreComing?.()) {
          await nextArrival(maxHoldMs - held);
          continue;
        }
        const batch = pending.splice(0, maxBatch);
        try {
          await commit(batch);
        } catch (error) {
          if (batch.length === 1) {
            batch[0]!.reject(error);
            continue;
          }
          // Nothing of the batch was stored. Failures are rare: retry each item alone, so only the guilty one fails.
          for (const entry of batch) await commit([entry]).catch((entryError: unknown) => entry.reject(entryError));
        }
      }
    } finally {
      flushing = false;
    }
  }

  return {
    run(item) {
      return new Promise<Result>((resolve, reject) => {
        pending.push({ item, since: performance.now(), resolve, reject });
        arrived?.();
        // Items arriving in the same turn of the event loop join the first batch; later ones wait for the next.
        if (!flushing) {
          flushing = true;
          setImmediate(() => void flush());
        }
      });
    },
  };
}
