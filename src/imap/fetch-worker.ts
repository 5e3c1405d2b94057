/**
 * @module imap/fetch-worker
 * Runs in a worker thread (see fetch-thread.ts, started by storage/engine/worker-module.ts): IMAP connections of its own, one
 * at a time, that FETCH the bytes of many messages for a connected account's initial sync, so that reading and
 * parsing the server's answers (imapflow) does not run on the event loop, which stores what comes. The thread outlives
 * its connections: kept for the service's life, its code stays compiled (a new thread's first FETCH costs half again
 * as much as its later ones).
 *
 * Protocol, from the main thread: `{ login: imap }` connects and logs in with imapflow's options; `{ fetch: { id,
 * path, uids, maxBytes } }` fetches the messages of a UID set of a folder (opened read-only), and `{ credit: id }`
 * says one group of that fetch was taken; `{ logout: true }` ends the connection (the thread waits for the next
 * login). To the main thread: `{ ready: true }` once logged in (or `{ failed }`), then per fetch its groups
 * `{ id, messages }` (each message's bytes in a buffer of its own, moved, not copied), and `{ id, done: true }` or
 * `{ id, error }`; `{ loggedOut: true }`. At most {@link IN_FLIGHT_GROUPS} groups of a fetch wait unanswered: memory
 * stays bounded whatever the store's pace.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ImapFlow, type ImapFlowOptions } from 'imapflow';

import type { FetchedBytes } from './contracts.js';

export type { FetchedBytes } from './contracts.js';

/** What the thread is started with: the group limits. */
export interface FetchWorkerData {
  groupMessages: number;
  groupBytes: number;
}

/** What the main thread sends. */
export interface ToFetchWorker {
  login?: ImapFlowOptions;
  fetch?: { id: number; path: string; uids: string; maxBytes: number };
  credit?: number;
  logout?: true;
}

/** Groups of a fetch sent and not yet taken by the main thread, at most. */
export const IN_FLIGHT_GROUPS = 4;

/** An error as the main thread gets it back: imapflow's fields that say what went wrong kept. */
export interface FetchError {
  message: string;
  code?: string;
  authenticationFailed?: boolean;
  responseText?: string;
}

function errorOf(error: unknown): FetchError {
  const record = (error ?? {}) as {
    message?: string;
    code?: string;
    authenticationFailed?: boolean;
    responseText?: string;
  };
  return {
    message: String(record.message ?? error),
    ...(typeof record.code === 'string' ? { code: record.code } : {}),
    ...(record.authenticationFailed ? { authenticationFailed: true } : {}),
    ...(typeof record.responseText === 'string' ? { responseText: record.responseText } : {}),
  };
}

if (parentPort) {
  const port = parentPort;
  const { groupMessages, groupBytes } = workerData as FetchWorkerData;
  /** The connection of the session under way (between a login and its logout). */
  let client: ImapFlow | undefined;
  /** Credits of the fetch under way (`current`): each group sent takes one, each `{ credit }` of it gives one back. */
  let credits = IN_FLIGHT_GROUPS;
  let current: number | undefined;
  let creditWaiter: (() => void) | undefined;
  let closing = false;
  /** The session's requests, one after the other. */
  let queue = Promise.resolve();

  /** The bytes of `source` in a buffer of their own (imapflow's may be a view of a larger one), to be moved. */
  const own = (source: Buffer): Uint8Array => {
    if (
      source.byteOffset === 0 &&
      source.byteLength === source.buffer.byteLength &&
      !(source.buffer instanceof SharedArrayBuffer)
    )
      return source;
    const copy = new Uint8Array(source.byteLength);
    copy.set(source);
    return copy;
  };

  async function login(options: ImapFlowOptions): Promise<void> {
    closing = false;
    const next = new ImapFlow({ ...options, logger: false });
    // An error event without a listener would end the thread; failures surface through the calls.
    next.on('error', () => undefined);
    client = next;
    try {
      await next.connect();
      port.postMessage({ ready: true });
    } catch (error) {
      next.close();
      port.postMessage({ failed: errorOf(error) });
    }
  }

  async function runFetch(request: { id: number; path: string; uids: string; maxBytes: number }): Promise<void> {
    credits = IN_FLIGHT_GROUPS;
    current = request.id;
    let group: FetchedBytes[] = [];
    let bytes = 0;
    const send = async () => {
      if (group.length === 0) return;
      while (credits <= 0 && !closing) await new Promise<void>((resolve) => (creditWaiter = resolve));
      credits--;
      port.postMessage(
        { id: request.id, messages: group },
        group.map((message) => message.raw.buffer as ArrayBuffer),
      );
      group = [];
      bytes = 0;
    };
    try {
      if (!client) throw new Error('the IMAP fetch thread is not logged in');
      if (client.mailbox === false || client.mailbox.path !== request.path)
        await client.mailboxOpen(request.path, { readOnly: true });
      const query = { uid: true, flags: true, internalDate: true, source: { maxLength: request.maxBytes } } as const;
      for await (const message of client.fetch(request.uids, query, { uid: true })) {
        if (closing) break;
        if (!message.source) continue;
        const raw = own(message.source);
        const internal = message.internalDate ? new Date(message.internalDate).getTime() : null;
        group.push({
          uid: message.uid,
          raw,
          flags: [...(message.flags ?? [])],
          modseq: message.modseq !== undefined ? String(message.modseq) : null,
          internalDate: Number.isFinite(internal) ? internal : null,
        });
        bytes += raw.byteLength;
        if (group.length >= groupMessages || bytes >= groupBytes) await send();
      }
      await send();
      port.postMessage({ id: request.id, done: true });
    } catch (error) {
      port.postMessage({ id: request.id, error: errorOf(error) });
    }
  }

  async function logout(): Promise<void> {
    const ending = client;
    client = undefined;
    try {
      if (ending?.usable) await ending.logout();
    } catch {
      // Gone already: nothing to end.
    } finally {
      ending?.close();
      port.postMessage({ loggedOut: true });
    }
  }

  port.on('message', (message: ToFetchWorker) => {
    // A group of an earlier fetch taken late gives nothing to this one.
    if (message.credit !== undefined && message.credit === current) {
      credits++;
      const waiter = creditWaiter;
      creditWaiter = undefined;
      waiter?.();
    }
    if (message.login) {
      const options = message.login;
      queue = queue.then(() => login(options));
    }
    if (message.fetch) {
      const request = message.fetch;
      queue = queue.then(() => runFetch(request));
    }
    if (message.logout) {
      // A fetch under way stops at its next message.
      closing = true;
      creditWaiter?.();
      queue = queue.then(logout);
    }
  });
}
