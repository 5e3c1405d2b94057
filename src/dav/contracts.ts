/**
 * @module dav/contracts
 * The dav area's declared interface: the sync of connected accounts' calendars (CalDAV) and contacts (CardDAV).
 */

/** What one sync pass did. */
export interface DavPassSummary {
  /** Objects (events of one UID, or contacts) written from the server. */
  changed: number;
  /** Objects gone from the server, removed here. */
  removed: number;
  /** Objects the server holds that could not be read (logged, left out). */
  unreadable: number;
}

/** The sync of connected accounts' calendars and contacts (src/dav/dav-runner.ts). */
export interface DavSyncRunner {
  /** One pass over the grant's CalDAV and CardDAV servers now (after any pass under way); rejects when a server fails. */
  run(grantId: string): Promise<DavPassSummary>;
  /** A pass of the grant soon, when the runner is started (a grant just connected; a write the server refused). */
  wake(grantId: string): void;
  /** Starts the periodic passes (the worker role). */
  start(): void;
  /** Stops them and waits for passes under way. */
  stop(): Promise<void>;
}
