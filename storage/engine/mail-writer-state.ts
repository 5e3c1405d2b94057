/**
 * @module storage/engine/mail-writer-state
 * What the parts of the mail writer (./mail-writer.ts) share: the state `createMailWriter` makes (the writes waiting
 * and in flight, the thread, the write lock's session, the watchdog), the entries and replies exchanged with the
 * thread, and the small steps every part takes on a thread (stopping it, telling those waiting that it loaded).
 */
import type { Worker } from 'node:worker_threads';
import type { Database } from '../db.js';
import type {
  MailRawGroupOutcome,
  MailRawOutcome,
  MailWriteItem,
  MailWriteResult,
  MailWriterOptions,
} from './mail-writer-types.js';

/**
 * One entry of a batch as the thread receives it. A group (`raws`: a {@link MailRawGroup}, never durable) goes to
 * the prepare thread, which hands its messages on one by one, each answered with the group's id and its index (`sub`).
 */
export type Entry = (
  | { kind: 'item'; item: MailWriteItem }
  | { kind: 'raw'; raw: Uint8Array; meta: unknown }
  | { kind: 'raws'; raws: Uint8Array[]; metas: unknown[] }
) & { durable?: false };

export interface Pending {
  entry: Entry;
  /** Ids of the entry's messages, for `inDoubt` (./mail-writer-threads.ts): those of each message of a group. */
  messageIds: string[][];
  /** A group's outcomes as they come, and how many are still to come. */
  group?: { results: (EntryResult | undefined)[]; left: number };
  resolve(outcome: MailRawOutcome | MailRawGroupOutcome[]): void;
  reject(error: Error): void;
}

export type EntryResult =
  | { ok: true; stored: MailWriteResult[]; summary?: unknown }
  | { ok: false; declined?: true; error?: string; raw?: Uint8Array };
export type Reply = { results: (EntryResult & { id: number; sub?: number })[] } | { ready: true };

/** What the functions of the mail writer share, made once by `createMailWriter`. */
export interface WriterState {
  db: Database;
  options: MailWriterOptions;
  batchTimeoutMs: number;
  /** What each writer thread is started with (`WriterData` in mail-writer-worker.ts): the file, limits, tables. */
  workerData: unknown;
  /** Writes not yet handed to the thread. */
  pending: Pending[];
  /** Writes handed to the thread, by entry id, until their result (or the end of the thread) settles them. */
  outstanding: Map<number, Pending>;
  nextEntry: number;
  worker: Worker | undefined;
  /** While the thread has work: the process's write lock is held, and this gives it back. */
  session: { thread: Worker; release(): void } | undefined;
  acquiring: boolean;
  /** Stops a thread that has answered nothing for `batchTimeoutMs` while it has work. */
  watchdog: NodeJS.Timeout | undefined;
  closed: boolean;
  idle: (() => void) | undefined;
  /** Why a thread was stopped (see {@link stopThread}); its exit handler settles its writes. */
  exitReasons: WeakMap<Worker, string>;
  /** Threads that said they loaded, and those waiting in {@link MailWriter.warm} for one to load (or stop). */
  ready: WeakSet<Worker>;
  warming: Map<Worker, (() => void)[]>;
  /**
   * The prepare thread of each writer thread (mail-prepare-worker.ts), started by the first raw write that need not
   * be durable (a bulk load): those are prepared there and handed on to the writer, which then spends its time on
   * SQL alone. Durable raw writes (mail arriving over SMTP) are prepared on the writer thread itself: for them one
   * more hop between threads cost more than it saved (about a tenth of the ingest rate on two cores).
   */
  preparers: WeakMap<Worker, Worker>;
  /** Set while a `pump` is due at the end of this tick. */
  pumpDue: boolean;
  /**
   * The write lock's steps (./mail-writer-lock.ts: `pump`, `acquire`), given here by `createMailWriter` so that the
   * threads' handlers (./mail-writer-threads.ts, ./mail-writer-replies.ts) move the work on without importing them.
   */
  pump(): void;
  acquire(): void;
}

/** Stops a thread that will not finish on its own; its exit handler settles its writes. */
export function stopThread(state: WriterState, thread: Worker, reason: string) {
  state.exitReasons.set(thread, reason);
  void thread.terminate();
}

/** A thread loaded (or, `ok` false, stopped before): the warm-ups waiting for it resolve. */
export function loaded(state: WriterState, thread: Worker, ok = true) {
  if (ok) state.ready.add(thread);
  for (const resolve of state.warming.get(thread) ?? []) resolve();
  state.warming.delete(thread);
}
