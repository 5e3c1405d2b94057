/**
 * @module storage/engine/wal-checkpointer
 * WAL checkpoints on a worker thread. The dedicated connection of `Database.durableWrite` turns automatic
 * checkpoints off: SQLite would otherwise run them inside the COMMIT that grows the log past 1,000 pages,
 * copying megabytes into the database file and syncing it on the event loop. This worker checkpoints on its own
 * connection instead, so neither the copy nor its fsync ever blocks the event loop.
 */
import type { Worker } from 'node:worker_threads';
import { startWorker, workerModule } from './worker-module.js';

/** Options of {@link startWalCheckpointer}. */
export interface WalCheckpointerOptions {
  /** How often the worker looks at the log (default 500 ms). */
  intervalMs?: number;
  /** Log size that triggers a checkpoint (default 4 MB, SQLite's automatic threshold). */
  minWalBytes?: number;
  /** Told when the thread stopped on its own (an error, a crash); a new one is started after {@link RESTART_DELAY_MS}. */
  onExit?: (reason: string) => void;
}

/** A running checkpointer. */
export interface WalCheckpointer {
  /** Asks for a checkpoint soon. */
  nudge(): void;
  /** Runs a last checkpoint and stops the thread. */
  close(): Promise<void>;
}

const WORKER_MODULE = workerModule(import.meta.url, 'checkpoint-worker');

/** Pause before a checkpoint thread that stopped on its own is replaced (a thread that keeps dying costs little). */
export const RESTART_DELAY_MS = 1_000;

/** Starts the checkpoint thread for the database file `file`. The thread does not keep the process alive. */
export function startWalCheckpointer(file: string, options: WalCheckpointerOptions = {}): WalCheckpointer {
  const workerData = {
    file,
    intervalMs: options.intervalMs ?? 500,
    minWalBytes: options.minWalBytes ?? 4 * 1024 * 1024,
  };
  let closing = false;
  let worker: Worker | undefined;
  let restart: NodeJS.Timeout | undefined;

  function spawn(): Worker {
    const thread = startWorker(WORKER_MODULE, { execArgv: [], workerData });
    thread.unref();
    let reason = 'it exited';
    thread.on('error', (error) => {
      reason = error.message;
    });
    thread.on('exit', (code) => {
      if (worker !== thread) return;
      worker = undefined;
      if (closing) return;
      // Without it the log is checkpointed only by the mail writer past 16 MB: start another one.
      options.onExit?.(`${reason} (exit code ${code})`);
      restart = setTimeout(() => {
        restart = undefined;
        if (!closing) worker = spawn();
      }, RESTART_DELAY_MS);
      restart.unref();
    });
    return thread;
  }
  worker = spawn();

  return {
    nudge() {
      worker?.postMessage('checkpoint');
    },
    async close() {
      closing = true;
      clearTimeout(restart);
      const thread = worker;
      if (!thread) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2_000);
        timer.unref();
        thread.once('message', () => {
          clearTimeout(timer);
          resolve();
        });
        thread.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        thread.postMessage('close');
      });
      await thread.terminate();
      worker = undefined;
    },
  };
}
