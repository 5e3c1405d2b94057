/**
 * @module storage/engine/mail-writer-replies
 * The mail writer's replies (./mail-writer.ts): the results the writer thread (or its prepare thread) sends back
 * settle the writes waiting for them, and the watchdog is armed again while the thread still has work.
 */
import type { Worker } from 'node:worker_threads';
import { MailWriteError, type MailRawGroupOutcome } from './mail-writer-types.js';
import {
  loaded,
  stopThread,
  type EntryResult,
  type Pending,
  type Reply,
  type WriterState,
} from './mail-writer-state.js';

const failure = (result: EntryResult | undefined) =>
  new MailWriteError(`storing the message failed: ${result && !result.ok ? result.error : 'no result'}`);

/** Settles a write with its result (none: failed). */
export function settle(entry: Pending, result: EntryResult | undefined) {
  if (result?.ok) entry.resolve({ prepared: true, results: result.stored, summary: result.summary });
  else if (result?.declined) entry.resolve({ prepared: false });
  else entry.reject(failure(result));
}

/** Settles a group once each of its messages has a result (those missing: failed). */
export function settleGroup(entry: Pending, results: (EntryResult | undefined)[]) {
  entry.resolve(
    results.map((result): MailRawGroupOutcome => {
      if (result?.ok) return { prepared: true, results: result.stored, summary: result.summary };
      if (result?.declined && result.raw) return { prepared: false, raw: result.raw };
      return { prepared: true, failed: failure(result) };
    }),
  );
}

/** Stops the thread if it answers nothing for `batchTimeoutMs` while writes are outstanding. */
export function armWatchdog(state: WriterState, thread: Worker) {
  clearTimeout(state.watchdog);
  state.watchdog =
    state.outstanding.size > 0
      ? setTimeout(
          () => stopThread(state, thread, `it answered nothing for ${state.batchTimeoutMs} ms`),
          state.batchTimeoutMs,
        )
      : undefined;
}

/** Results of writes, from the writer thread or (declined messages) its prepare thread. */
export function answered(state: WriterState, thread: Worker, reply: Reply, from: Worker = thread) {
  if ('ready' in reply) {
    if (from === thread) loaded(state, thread);
    return;
  }
  for (const result of reply.results) {
    const entry = state.outstanding.get(result.id);
    if (!entry) continue;
    const { group } = entry;
    if (group && result.sub !== undefined) {
      if (group.results[result.sub] !== undefined) continue;
      group.results[result.sub] = result;
      if (--group.left > 0) continue;
      state.outstanding.delete(result.id);
      settleGroup(entry, group.results);
      continue;
    }
    state.outstanding.delete(result.id);
    settle(entry, result);
  }
  armWatchdog(state, thread);
  state.pump();
}
