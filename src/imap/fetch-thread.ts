/**
 * @module imap/fetch-thread
 * The main thread's side of fetch-worker.ts: threads, each with an IMAP connection of its own, that FETCH the bytes of
 * many messages for a connected account's initial sync. Reading the server's answers is about half of what a sync
 * costs the event loop; on such a thread it runs beside the event loop, which only hands what comes to the store.
 *
 * The threads are kept for the service's life ({@link createFetchThreads}): a session logs in on an idle thread and
 * logs out when its pass ends, and the thread waits, its code compiled, for the next. A thread that broke (its
 * connection dropped in the middle of a FETCH, or a fetch left before its end) is ended and replaced when next needed.
 */
import type { Worker } from 'node:worker_threads';
import type { ImapFlowOptions } from 'imapflow';
import { startWorker, workerModule } from '../../storage/engine/worker-module.js';
import type { FetchedBytes, FetchSession } from './contracts.js';
import type { FetchError, FetchWorkerData, ToFetchWorker } from './fetch-worker.js';

export type { FetchedBytes } from './fetch-worker.js';

const WORKER_MODULE = workerModule(import.meta.url, 'fetch-worker');

/** How long a logout may take before the thread is ended instead. */
const LOGOUT_WAIT_MS = 2_000;

export type { FetchSession } from './contracts.js';

/** The fetch threads of a service. */
export interface FetchThreads {
  /**
   * A session on an idle thread (one is started while there are fewer than `threads`), logged in with `imap`
   * (imapflow's options, as the connector builds them); undefined when every thread is in a session. Rejects as a
   * login does.
   */
  open(imap: ImapFlowOptions): Promise<FetchSession | undefined>;
  /** Thread ids of the threads alive now, in a session or not. */
  threadIds(): number[];
  /** Ends every thread (a session under way fails). */
  stop(): Promise<void>;
}

/** An error of the thread, with the fields of imapflow's that say what went wrong (for describeFailure). */
function toError(failure: FetchError): Error {
  return Object.assign(new Error(failure.message), failure);
}

type FromThread = {
  ready?: true;
  failed?: FetchError;
  loggedOut?: true;
  id?: number;
  messages?: FetchedBytes[];
  done?: true;
  error?: FetchError;
};

/** A thread of the pool. */
interface FetchThread {
  worker: Worker;
  /** Why the thread can no longer serve; set once (then it is ended and left out of the pool). */
  broken: Error | undefined;
  busy: boolean;
  listeners: Set<(message: FromThread) => void>;
}

/**
 * Throws why `thread` can no longer serve, if it cannot. A function of its own, so that a check before an await does
 * not narrow `thread.broken` to undefined for the checks after it (it is set from elsewhere: the thread's exit).
 */
function throwIfBroken(thread: FetchThread): void {
  if (thread.broken) throw thread.broken;
}

/** Waits for the first message of the thread that `accept` takes (or the thread's end: then `broken`). */
function nextOf<T>(
  thread: FetchThread,
  accept: (message: FromThread) => T | undefined,
  timeoutMs?: number,
): Promise<T | Error> {
  return new Promise((resolve) => {
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => finish(new Error('the IMAP fetch thread did not answer in time')), timeoutMs);
    const finish = (value: T | Error) => {
      clearTimeout(timer);
      thread.listeners.delete(listener);
      resolve(value);
    };
    const listener = (message: FromThread) => {
      const value = accept(message);
      if (value !== undefined) finish(value);
      else if (thread.broken) finish(thread.broken);
    };
    thread.listeners.add(listener);
    if (thread.broken) finish(thread.broken);
  });
}

/**
 * The fetch threads of a service: at most `threads` of them, started when first needed. Messages are grouped by
 * `groupMessages` or `groupBytes`, whichever comes first.
 */
export function createFetchThreads(options: {
  threads: number;
  groupMessages: number;
  groupBytes: number;
}): FetchThreads {
  const pool = new Set<FetchThread>();
  let stopped = false;

  function start(): FetchThread {
    const workerData: FetchWorkerData = { groupMessages: options.groupMessages, groupBytes: options.groupBytes };
    // No `execArgv`: a parent's `--import` loaders (tsx) would slow the thread down (it loads what it needs itself).
    const worker = startWorker(WORKER_MODULE, { workerData, execArgv: [] });
    const thread: FetchThread = { worker, broken: undefined, busy: false, listeners: new Set() };
    const breakWith = (error: Error) => {
      thread.broken ??= error;
      pool.delete(thread);
      for (const listener of [...thread.listeners]) listener({});
    };
    worker.on('message', (message: FromThread) => {
      for (const listener of [...thread.listeners]) listener(message);
    });
    worker.on('error', (error) => breakWith(error));
    worker.on('exit', (code) => breakWith(new Error(`the IMAP fetch thread ended (exit code ${code})`)));
    pool.add(thread);
    return thread;
  }

  /** Ends a thread that can no longer serve. */
  async function end(thread: FetchThread, why: string): Promise<void> {
    thread.broken ??= new Error(why);
    pool.delete(thread);
    await thread.worker.terminate();
  }

  const post = (thread: FetchThread, message: ToFetchWorker) => thread.worker.postMessage(message);

  /** Ids of fetches, unique among every thread's sessions (a late message of one is never taken for another's). */
  let nextId = 0;

  function session(thread: FetchThread): FetchSession {
    let fetching = false;
    let closed = false;
    return {
      async *fetch(path, uids, maxBytes) {
        throwIfBroken(thread);
        if (closed) throw new Error('the IMAP fetch session is closed');
        if (fetching) throw new Error('an IMAP fetch thread runs one fetch at a time');
        fetching = true;
        const id = ++nextId;
        const groups: FetchedBytes[][] = [];
        let finished = false;
        let failure: Error | undefined;
        let wake: (() => void) | undefined;
        const listener = (message: FromThread) => {
          if (message.id === id) {
            if (message.messages) groups.push(message.messages);
            if (message.done) finished = true;
            if (message.error) failure = toError(message.error);
          }
          const waiter = wake;
          wake = undefined;
          waiter?.();
        };
        thread.listeners.add(listener);
        post(thread, { fetch: { id, path, uids, maxBytes } });
        try {
          for (;;) {
            const group = groups.shift();
            if (group) {
              // Taken: the thread may read on (it holds at most a few groups unanswered).
              post(thread, { credit: id });
              yield group;
              continue;
            }
            if (failure) throw failure;
            if (finished) return;
            // Another path (the thread's exit, end()) may have broken it meanwhile.
            throwIfBroken(thread);
            await new Promise<void>((resolve) => (wake = resolve));
          }
        } finally {
          thread.listeners.delete(listener);
          fetching = false;
          // Left before its end (the caller stopped, or failed): the connection is in the middle of a FETCH.
          if (!finished && !failure && !thread.broken)
            await end(thread, 'the IMAP fetch thread was stopped during a fetch');
        }
      },
      async close() {
        if (closed) return;
        closed = true;
        if (thread.broken) {
          await end(thread, thread.broken.message);
          return;
        }
        post(thread, { logout: true });
        const outcome = await nextOf(thread, (message) => (message.loggedOut ? true : undefined), LOGOUT_WAIT_MS);
        if (outcome instanceof Error || stopped) {
          await end(thread, outcome instanceof Error ? outcome.message : 'the fetch threads were stopped');
          return;
        }
        thread.busy = false;
        // Idle: it does not keep the process alive.
        thread.worker.unref();
      },
    };
  }

  return {
    async open(imap) {
      if (stopped) return undefined;
      let thread = [...pool].find((candidate) => !candidate.busy && !candidate.broken);
      if (!thread && pool.size < options.threads) thread = start();
      if (!thread) return undefined;
      thread.busy = true;
      thread.worker.ref();
      post(thread, { login: { ...imap, logger: false } });
      const outcome = await nextOf(thread, (message) =>
        message.ready ? true : message.failed ? toError(message.failed) : undefined,
      );
      if (outcome instanceof Error) {
        if (thread.broken) await end(thread, thread.broken.message);
        else {
          // The login was refused or failed: the thread itself is sound.
          thread.busy = false;
          thread.worker.unref();
        }
        throw outcome;
      }
      return session(thread);
    },
    threadIds() {
      return [...pool].map((thread) => thread.worker.threadId);
    },
    async stop() {
      stopped = true;
      await Promise.all([...pool].map((thread) => end(thread, 'the fetch threads were stopped')));
    },
  };
}
