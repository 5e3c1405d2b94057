/**
 * @module access-log/contracts
 * The access log's declared interface: what a face or the operation runner records of a call, and the reads of
 * `GET /v3/access-log`.
 */
import type { AccessFace, ClientInfo, Principal } from '../access.js';
import type { AccessLogEntry, ListAccessLogInput } from '../schemas/access-log.js';

/** One call as it is recorded: who, through which face, what, on which objects, with what outcome. */
export interface AccessRecord {
  /** The caller; undefined for an authentication refused before any was known. */
  principal?: Principal | undefined;
  /** The application of a refused authentication whose key was known (revoked, expired). */
  applicationId?: string | undefined;
  /** The key of a refused authentication whose key was known. */
  key?: { id: string; name: string } | undefined;
  face: AccessFace;
  client?: ClientInfo | undefined;
  tool?: string | undefined;
  /** The operation's name (`authenticate` for a refused authentication). */
  operation: string;
  grantId?: string | undefined;
  /** The ids the call named and made, by field name. */
  objectIds?: Record<string, string> | undefined;
  /** The HTTP status of the outcome, on every face. */
  status: number;
  /** The Nylas error type on failure. */
  errorType?: string | undefined;
  address?: string | undefined;
  requestId?: string | undefined;
}

/** What createAccessLog() returns (./access-log.ts). */
export interface AccessLog {
  /**
   * Queues a call's row; written with others in one INSERT within {@link ACCESS_LOG_FLUSH_MS}. Never waits and
   * never throws: when the queue is full the row is counted as dropped (metrics) instead.
   */
  record(entry: AccessRecord): void;
  /** Writes every row queued so far (reads call it first, so a caller sees its own calls; shutdown; tests). */
  flush(): Promise<void>;
  /** A page of the caller's application's rows, newest first. */
  list(principal: Principal, input: ListAccessLogInput): Promise<{ data: AccessLogEntry[]; next_cursor?: string }>;
  /** Every row matching the filters, newest first, read page by page (the NDJSON export). */
  export(principal: Principal, input: ListAccessLogInput): AsyncIterable<AccessLogEntry>;
  /** Deletes rows older than the retention (`AGENTPOST_ACCESS_LOG_RETENTION_DAYS`); how many went. */
  purge(signal?: AbortSignal): Promise<number>;
  /** Writes what is queued and stops the timer. */
  close(): Promise<void>;
}
