/**
 * @module imap/contracts
 * The connected IMAP accounts' declared interface: the sync of an account (one pass, and the wait on INBOX), and the
 * fetch thread's session it may hand its large FETCHes to.
 */
import type { ImapFlow, MailboxObject } from 'imapflow';

/** A fetched message as the main thread receives it. */
export interface FetchedBytes {
  uid: number;
  raw: Uint8Array;
  flags: string[];
  modseq: string | null;
  /** INTERNALDATE in ms, when the server sent one. */
  internalDate: number | null;
}

/** A connection of a fetch thread, logged in. */
export interface FetchSession {
  /**
   * The messages of `uids` (an IMAP UID set) in the folder `path`, in groups as the server sends them; at most
   * `maxBytes` of each message are read. Fails as the connection does (dropped, timed out): then the session is done.
   */
  fetch(path: string, uids: string, maxBytes: number): AsyncIterable<FetchedBytes[]>;
  /** Logs out; the thread waits for the next session. */
  close(): Promise<void>;
}

/** Options of one pass. */
export interface PassOptions {
  /** Only INBOX (new mail seen by IDLE); default every folder. */
  inboxOnly?: boolean;
  signal?: AbortSignal | undefined;
  /**
   * The fetch thread of the initial sync's large FETCHes (./fetch-thread.ts), opened by the caller on first call
   * (and closed after the pass); undefined when there is none (no free connection slot): then they run on `client`.
   */
  fetchThread?: (() => Promise<FetchSession | undefined>) | undefined;
}

/** What createImapSync() returns (src/imap/sync.ts): the sync of connected accounts. */
export interface ImapSync {
  /**
   * One pass over the account on `client` (logged in). Returns whether the account's initial sync completed in this
   * pass (every folder's initial sync done, and no pass had completed before).
   */
  pass: (client: ImapFlow, grantId: string, options?: PassOptions) => Promise<{ initialCompleted: boolean }>;
  /**
   * SELECTs INBOX on `client` to wait there (IDLE): with QRESYNC when the server has it, so the connection learns of
   * every expunge there from INBOX's last pass on, and the next INBOX pass needs no comparison of UIDs.
   */
  watchInbox: (client: ImapFlow, grantId: string) => Promise<MailboxObject>;
}
