/**
 * @module storage/engine/checkpoint-worker
 * Runs in a worker thread (see wal-checkpointer.ts, started by worker-module.ts): checkpoints the write-ahead log of
 * an embedded database on its own connection, so the copy into the database file and its fsync never run on the
 * event loop.
 */
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { createClient } from '@libsql/client';

const { file, intervalMs, minWalBytes } = workerData as { file: string; intervalMs: number; minWalBytes: number };
const client = createClient({ url: `file:${file}`, timeout: 5_000 });
let running = false;

async function checkpoint(force = false): Promise<void> {
  if (running) return;
  running = true;
  try {
    let size = 0;
    try {
      size = statSync(`${file}-wal`).size;
    } catch {
      return;
    }
    if (!force && size < minWalBytes) return;
    // PASSIVE: copies what no reader still needs, never waits for or blocks writers.
    await client.execute('PRAGMA wal_checkpoint(PASSIVE)');
  } catch {
    // A busy database is checkpointed on the next round.
  } finally {
    running = false;
  }
}

const timer = setInterval(() => void checkpoint(), intervalMs);
parentPort?.on('message', (message: unknown) => {
  if (message === 'checkpoint') void checkpoint();
  if (message === 'close') {
    clearInterval(timer);
    void checkpoint(true).finally(() => {
      client.close();
      parentPort?.postMessage('closed');
    });
  }
});
