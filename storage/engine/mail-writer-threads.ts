/**
 * @module storage/engine/mail-writer-threads
 * The mail writer's threads (./mail-writer.ts): starting the writer thread and its prepare thread, and what happens
 * when the writer thread ends: its prepare thread goes with it, and the writes it had not answered are looked up in
 * the database (stored, or failed) before the write lock is given back.
 */
import { MessageChannel, type Worker } from 'node:worker_threads';
import { inArray } from 'drizzle-orm';
import { messages } from '../schema/mail.js';
import { startWorker, workerModule } from './worker-module.js';
import { MailWriteError, type MailWriteResult } from './mail-writer-types.js';
import {
  loaded,
  stopThread,
  type EntryResult,
  type Pending,
  type Reply,
  type WriterState,
} from './mail-writer-state.js';
import { answered, settle, settleGroup } from './mail-writer-replies.js';

const WORKER_MODULE = workerModule(import.meta.url, 'mail-writer-worker');
const PREPARE_MODULE = workerModule(import.meta.url, 'mail-prepare-worker');

/**
 * The prepare thread of `writer`, joined to it by a channel of their own. It lives and dies with the writer: when
 * it stops on its own, the writer is stopped too, and the writes in flight are settled from the database.
 */
export function spawnPreparer(state: WriterState, writer: Worker, prepareModule: URL): Worker {
  const preparer = startWorker(PREPARE_MODULE, { execArgv: [], workerData: { prepareModule: prepareModule.href } });
  preparer.unref();
  const channel = new MessageChannel();
  writer.postMessage({ port: channel.port1 }, [channel.port1]);
  preparer.postMessage({ port: channel.port2 }, [channel.port2]);
  preparer.on('message', (reply: Reply) => answered(state, writer, reply, preparer));
  let reason = 'it exited';
  preparer.on('error', (error) => {
    reason = error.message;
  });
  preparer.on('exit', (code) => {
    if (state.exitReasons.has(preparer)) return;
    stopThread(state, writer, `its prepare thread stopped: ${reason} (exit code ${code})`);
  });
  return preparer;
}

/** Starts a writer thread. When it ends, the writes it had not answered are settled from the database. */
export function spawn(state: WriterState): Worker {
  const thread = startWorker(WORKER_MODULE, { execArgv: [], workerData: state.workerData });
  thread.unref();
  thread.on('message', (reply: Reply) => answered(state, thread, reply));
  let reason = 'it exited';
  thread.on('error', (error) => {
    reason = error.message;
  });
  thread.once('exit', () => {
    reason = state.exitReasons.get(thread) ?? reason;
  });
  thread.on('exit', (code) => {
    loaded(state, thread, false);
    const preparer = state.preparers.get(thread);
    if (preparer) {
      state.exitReasons.set(preparer, 'its writer thread stopped');
      void preparer.terminate();
    }
    if (state.worker === thread) state.worker = undefined;
    if (!state.closed) state.options.onExit?.(`${reason} (exit code ${code})`);
    if (state.session?.thread !== thread) return;
    // The thread's connection is gone, and with it any transaction it had not committed.
    clearTimeout(state.watchdog);
    const doubtful = [...state.outstanding.values()];
    state.outstanding.clear();
    const held = state.session;
    state.session = undefined;
    void inDoubt(state, doubtful, `${reason} (exit code ${code})`)
      .then(
        (results) =>
          doubtful.forEach((entry, index) => {
            const found = results[index]!;
            if (entry.group)
              settleGroup(
                entry,
                entry.group.results.map((known, sub) => known ?? found[sub]),
              );
            else settle(entry, found[0]);
          }),
        (error: unknown) =>
          doubtful.forEach((entry) =>
            entry.reject(
              new MailWriteError(`the mail writer thread stopped, and what it stored is unknown: ${String(error)}`),
            ),
          ),
      )
      .finally(() => {
        held.release();
        if (state.pending.length > 0) state.acquire();
        else state.idle?.();
      });
  });
  return thread;
}

/**
 * The outcomes of writes whose thread ended before it answered: their COMMIT may or may not have happened, so the
 * database says which messages are stored (a batch commits whole; a message of it that failed alone is absent).
 */
async function inDoubt(state: WriterState, entries: Pending[], why: string): Promise<EntryResult[][]> {
  const ids = entries.flatMap((entry) => entry.messageIds.flat());
  const found = new Map<string, MailWriteResult>();
  for (let index = 0; index < ids.length; index += 500) {
    const rows = await state.db.orm
      .select({ messageId: messages.id, threadId: messages.threadId, seq: messages.seq })
      .from(messages)
      .where(inArray(messages.id, ids.slice(index, index + 500)));
    for (const row of rows) found.set(row.messageId, row);
  }
  return entries.map((entry) =>
    entry.messageIds.map((messageIds): EntryResult => {
      const stored = messageIds.map((id) => found.get(id));
      // A raw entry found stored has lost its summary with the thread: the caller goes without it.
      return stored.length > 0 && stored.every((row) => row !== undefined)
        ? { ok: true, stored: stored }
        : { ok: false, error: `the mail writer thread stopped: ${why}` };
    }),
  );
}
