/**
 * @module background/contracts
 * The background area's declared interface: the retention purge, its options and what one purge did.
 */

/** Rows one purge deleted, by rule. */
export interface PurgeResult {
  dispatchedEvents: number;
  undispatchedEvents: number;
  deadJobs: number;
  /** Thread claims lapsed more than a day ago. */
  lapsedClaims: number;
}

/** Options of createRetention() (./retention.ts). */
export interface RetentionOptions {
  /** Whether some consumer could act on outbox events now (the dispatcher's `interested`); see the module notes. */
  interested(): Promise<boolean>;
  /**
   * How long a dispatched event is kept (default `DISPATCHED_EVENT_RETENTION_MS`, 24 hours): the event stream resumes
   * from a cursor within it (`AGENTPOST_EVENT_RETENTION_HOURS`).
   */
  dispatchedRetentionMs?: number;
  /** Most rows per delete transaction (default `PURGE_CHUNK_ROWS`, ./retention.ts). */
  chunkRows?: number;
}

/** What createRetention() returns (src/background/retention.ts): the purge of dispatched events and dead jobs. */
export interface Retention {
  /** Applies every rule once, as of the clock's now. Between chunks it stops early when `signal` is aborted. */
  purge(signal?: AbortSignal): Promise<PurgeResult>;
}
