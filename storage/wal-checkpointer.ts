/**
 * @module storage/wal-checkpointer
 * WAL checkpoints on a worker thread. The dedicated connection of `Database.durableWrite` turns automatic
 * checkpoints off: SQLite would otherwise run them inside the COMMIT that grows the log past 1,000 pages,
 * copying megabytes into the database file and syncing it on the event loop. This worker checkpoints on its own
 * connection instead, so neither the copy nor its fsync ever blocks the event loop.
 */
import { Worker } from 'node:worker_threads';

/** Options of {@link startWalCheckpointer}. */
export interface WalCheckpointerOptions {
  /** How often the worker looks at the log (default 500 ms). */
  intervalMs?: number;
  /** Log size that triggers a checkpoint (default 4 MB, SQLite's automatic threshold). */
  minWalBytes?: number;
}

/** A running checkpointer. */
export interface WalCheckpointer {
  /** Asks for a checkpoint soon. */
  nudge(): void;
  /** Runs a last checkpoint and stops the thread. */
  close(): Promise<void>;
}

const WORKER_URL = new URL('./checkpoint-worker.js', import.meta.url);

/** Starts the checkpoint thread for the database file `file`. The thread does not keep the process alive. */
export function startWalCheckpointer(file: string, options: WalCheckpointerOptions = {}): WalCheckpointer {
  const worker = new Worker(WORKER_URL, { execArgv: [], workerData: { file, intervalMs: options.intervalMs ?? 500, minWalBytes: options.minWalBytes ?? 4 * 1024 * 1024 } });
  worker.unref();
  let alive = true;
  worker.on('error', () => {
    alive = false;
  });
  worker.on('exit', () => {
    alive = false;
  });
  return {
    nudge() {
      if (alive) worker.postMessage('checkpoint');
    },
    async close() {
      if (!alive) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2_000);
        timer.unref();
        worker.once('message', () => {
          clearTimeout(timer);
          resolve();
        });
        worker.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        worker.postMessage('close');
      });
      await worker.terminate();
    },
  };
}
