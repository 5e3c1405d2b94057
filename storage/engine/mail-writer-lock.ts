/**
 * @module storage/engine/mail-writer-lock
 * The mail writer's batching under the process's write lock (./mail-writer.ts): writes queued in one tick go to the
 * thread in one message; the thread holds the lock while it has work and nobody else waits for it, then gives it
 * back, and the writes still pending wait for the next turn.
 */
import type { Worker } from 'node:worker_threads';
import { MailWriteError, type MailRawGroupOutcome, type MailRawOutcome } from './mail-writer-types.js';
import type { Entry, EntryResult, Pending, WriterState } from './mail-writer-state.js';
import { armWatchdog, settleGroup } from './mail-writer-replies.js';
import { spawn, spawnPreparer } from './mail-writer-threads.js';

/** Takes the process's write lock for a session of the thread's work (behind the writes already waiting for it). */
export function acquire(state: WriterState) {
  if (state.acquiring || state.session) return;
  state.acquiring = true;
  void state.db.exclusive(
    () =>
      new Promise<void>((release) => {
        state.acquiring = false;
        state.session = { thread: (state.worker ??= spawn(state)), release };
        pump(state);
      }),
  );
}

/** Hands the thread the writes not yet given, one message, so it stores them in its next transaction. */
function post(state: WriterState, entries: Pending[]) {
  const thread = state.session!.thread;
  const message = entries.map((entry) => {
    const id = state.nextEntry++;
    state.outstanding.set(id, entry);
    return { id, ...entry.entry };
  });
  // Raw messages that need not be durable go to the prepare thread, which hands them on to the writer prepared;
  // the rest to the writer. Raw bytes go over without a copy (each is a copy of its own, see writeRaw).
  const bulk: (typeof message)[number][] = [];
  const rest: (typeof message)[number][] = [];
  for (const entry of message)
    (state.options.prepareModule && (entry.kind === 'raws' || (entry.kind === 'raw' && entry.durable === false))
      ? bulk
      : rest
    ).push(entry);
  const buffers = (part: typeof message) => [
    ...new Set(
      part.flatMap((entry) =>
        entry.kind === 'raw'
          ? [entry.raw.buffer as ArrayBuffer]
          : entry.kind === 'raws'
            ? entry.raws.map((raw) => raw.buffer as ArrayBuffer)
            : [],
      ),
    ),
  ];
  /** Sends one part; what cannot be sent to a thread was not written, and fails alone (the other part goes on). */
  const send = (part: typeof message, to: () => Worker) => {
    if (part.length === 0) return;
    try {
      to().postMessage({ entries: part }, buffers(part));
    } catch (error) {
      for (const { id } of part) {
        const entry = state.outstanding.get(id);
        state.outstanding.delete(id);
        const why = new MailWriteError(
          `storing the batch failed: ${error instanceof Error ? error.message : String(error)}`,
        );
        if (entry?.group)
          settleGroup(
            entry,
            entry.group.results.map((known) => known ?? { ok: false, error: why.message }),
          );
        else entry?.reject(why);
      }
    }
  };
  send(rest, () => thread);
  send(bulk, () => {
    let preparer = state.preparers.get(thread);
    if (!preparer) state.preparers.set(thread, (preparer = spawnPreparer(state, thread, state.options.prepareModule!)));
    return preparer;
  });
  // Nothing sent: pump, which called this, gives the lock back.
  if (state.outstanding.size > 0 && !state.watchdog) armWatchdog(state, thread);
}

/**
 * Moves the work on. The thread takes writes as they come, without a round trip through the event loop between
 * its transactions (writes that arrive while it is busy go together into its next one), for as long as nobody
 * else waits for the write lock; then it finishes what it has, the lock goes to the waiting writes, and the
 * writes still pending wait for the next turn.
 */
export function pump(state: WriterState) {
  if (!state.session) {
    if (state.pending.length > 0) acquire(state);
    return;
  }
  if (state.pending.length > 0 && state.db.lockWaiters() === 0) post(state, state.pending.splice(0));
  if (state.outstanding.size > 0) return;
  const held = state.session;
  state.session = undefined;
  clearTimeout(state.watchdog);
  state.watchdog = undefined;
  held.release();
  if (state.pending.length > 0) acquire(state);
  else state.idle?.();
}

/** Queues a write; a pump at the end of this tick hands it (and those queued with it) on. */
export function enqueue<T extends MailRawOutcome | MailRawGroupOutcome[]>(
  state: WriterState,
  entry: Entry,
  messageIds: string[][],
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (state.closed) return reject(new MailWriteError('the mail writer is closed'));
    const group =
      entry.kind === 'raws'
        ? { results: new Array<EntryResult | undefined>(entry.raws.length).fill(undefined), left: entry.raws.length }
        : undefined;
    state.pending.push({
      entry,
      messageIds,
      ...(group ? { group } : {}),
      resolve: resolve as (outcome: MailRawOutcome | MailRawGroupOutcome[]) => void,
      reject,
    });
    // Writes queued in the same tick (a sync hands over many messages at once) reach the thread in one message.
    if (state.pumpDue) return;
    state.pumpDue = true;
    queueMicrotask(() => {
      state.pumpDue = false;
      pump(state);
    });
  });
}
