/**
 * @module access-log/access-log
 * The access log (issue 36): every operation call on every face, and every refused authentication, as one
 * append-only row. Recording never waits on the database: a row goes into an in-memory queue, written with the
 * others of its batch in ONE multi-row INSERT {@link ACCESS_LOG_FLUSH_MS} later (or at once when
 * {@link ACCESS_LOG_BATCH_ROWS} are waiting), through the database's writer, without syncing the log to the disk
 * (`Database.unsyncedWrite`: a crash loses the rows still queued anyway; `durableWrite`'s sync cost the read path 6%
 * of its rate, bench/read-path.bench.ts in docs/benchmarks.md, and `write`'s COMMIT syncs the log on the event loop,
 * half an fsync per send on bench/outbound.bench.ts). The queue is bounded
 * ({@link MAX_QUEUED_ROWS}): past it rows are dropped and counted (`agentpost_access_log_dropped_total`) rather than
 * holding memory or the caller. A crash loses at most the rows not yet written; a clean stop writes them all.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';
import { noMetrics } from '../system/metrics.js';
import type { AccessLogEntry, ListAccessLogInput } from '../schemas/access-log.js';
import {
  accessRows,
  accessRowsBefore,
  deleteAccessRows,
  insertAccessRows,
  type AccessLogRow,
  type StoredAccessLogRow,
} from './access-log-store.js';
import type { AccessLog, AccessRecord } from './contracts.js';

/** How long a row waits in the queue before its batch is written: calls answer first, the log follows. */
export const ACCESS_LOG_FLUSH_MS = 100;
/** Rows that start a write at once, and the most one INSERT carries. */
export const ACCESS_LOG_BATCH_ROWS = 500;
/** Rows queued at most while the database is behind; more are dropped and counted. */
export const MAX_QUEUED_ROWS = 20_000;
/** Rows one retention transaction deletes at most. */
const PURGE_CHUNK_ROWS = 1_000;
/** Rows one page of the export reads. */
const EXPORT_PAGE_ROWS = 500;

const DAY_MS = 24 * 60 * 60 * 1000;

/** Creates the access log. */
export function createAccessLog(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger' | 'config' | 'metrics'>,
): AccessLog {
  const { db, clock, newId, logger, config } = deps;
  const metrics = deps.metrics ?? noMetrics;
  let queued: AccessLogRow[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;

  function schedule(): void {
    if (writing !== undefined || queued.length === 0) return;
    if (queued.length >= ACCESS_LOG_BATCH_ROWS) {
      void start();
      return;
    }
    if (timer === undefined) {
      timer = setTimeout(() => void start(), ACCESS_LOG_FLUSH_MS);
      timer.unref?.();
    }
  }

  async function writeBatches(): Promise<void> {
    while (queued.length > 0) {
      const batch = queued.slice(0, ACCESS_LOG_BATCH_ROWS);
      queued = queued.slice(batch.length);
      try {
        await db.unsyncedWrite((tx) => insertAccessRows(tx, batch));
      } catch (error) {
        logger.error('access log: a batch of rows could not be written', {
          rows: batch.length,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }

  function start(): Promise<void> {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    writing ??= writeBatches().finally(() => {
      writing = undefined;
      schedule();
    });
    return writing;
  }

  async function flush(): Promise<void> {
    while (writing !== undefined || queued.length > 0) await (writing ?? start());
  }

  async function page(principal: Principal, input: ListAccessLogInput, beforeSeq: number | undefined, limit: number) {
    const { limit: _limit, page_token: _token, ...filters } = input;
    return accessRows(db, principal.applicationId, filters, beforeSeq, limit);
  }

  return {
    record(entry: AccessRecord): void {
      if (queued.length >= MAX_QUEUED_ROWS) {
        metrics.accessLogDropped(1);
        return;
      }
      queued.push(rowOf(entry, newId(), clock.now().getTime()));
      schedule();
    },

    flush,

    async list(principal, input) {
      await flush();
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 1) as [number] | undefined;
      const rows = await page(principal, input, after?.[0], limit + 1);
      const more = rows.length > limit;
      const shown = more ? rows.slice(0, limit) : rows;
      return {
        data: shown.map(entryOf),
        ...(more ? { next_cursor: encodeCursor([shown[shown.length - 1]!.seq]) } : {}),
      };
    },

    async *export(principal, input) {
      await flush();
      let before = (decodeCursor(input.page_token, 1) as [number] | undefined)?.[0];
      for (;;) {
        const rows = await page(principal, input, before, EXPORT_PAGE_ROWS);
        for (const row of rows) yield entryOf(row);
        if (rows.length < EXPORT_PAGE_ROWS) return;
        before = rows[rows.length - 1]!.seq;
      }
    },

    async purge(signal) {
      const beforeMs = clock.now().getTime() - config.accessLogRetentionDays * DAY_MS;
      let total = 0;
      while (signal?.aborted !== true) {
        const seqs = await accessRowsBefore(db, beforeMs, PURGE_CHUNK_ROWS);
        if (seqs.length === 0) break;
        const deleted = await deleteAccessRows(db, seqs, beforeMs);
        total += deleted;
        if (deleted === 0 || seqs.length < PURGE_CHUNK_ROWS) break;
        // Other writers (inbound mail) take their turn between two chunks.
        await nextTurn();
      }
      return total;
    },

    async close() {
      await flush();
    },
  };
}

/** The row of a record. Pure. */
function rowOf(entry: AccessRecord, id: string, at: number): AccessLogRow {
  const { principal } = entry;
  const key = principal?.key ?? entry.key;
  return {
    id,
    at,
    applicationId: principal?.applicationId ?? entry.applicationId ?? null,
    apiKeyId: key?.id ?? null,
    apiKeyName: key?.name ?? null,
    principal: principal?.via ?? null,
    face: entry.face,
    client: entry.client ?? null,
    tool: entry.tool ?? null,
    operation: entry.operation,
    grantId: entry.grantId ?? null,
    objectIds: entry.objectIds ?? null,
    status: entry.status,
    errorType: entry.errorType ?? null,
    address: entry.address ?? null,
    requestId: entry.requestId ?? null,
  };
}

/** The wire entry of a stored row. Pure. */
function entryOf(row: StoredAccessLogRow): AccessLogEntry {
  return {
    id: row.id,
    object: 'access_log_entry',
    time: Math.floor(row.at / 1000),
    api_key_id: row.apiKeyId,
    api_key_name: row.apiKeyName,
    principal: row.principal as AccessLogEntry['principal'],
    face: row.face as AccessLogEntry['face'],
    client: row.client
      ? { name: row.client.name ?? null, version: row.client.version ?? null, session: row.client.session ?? null }
      : null,
    tool: row.tool,
    operation: row.operation,
    grant_id: row.grantId,
    object_ids: row.objectIds ?? {},
    status: row.status,
    error_type: row.errorType,
    address: row.address,
    request_id: row.requestId,
  };
}
