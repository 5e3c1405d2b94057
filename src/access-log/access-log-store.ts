/**
 * @module access-log/access-log-store
 * The access log's reads and writes: a batch of rows in one INSERT (the rows travel as one JSON array, unpacked by
 * SQLite), a page of an application's rows newest first, and the retention's deletes by age.
 */
import { and, desc, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import { tables, type Database, type Tx } from '../../storage/index.js';
import type { ListAccessLogInput } from '../schemas/access-log.js';

const { accessLog } = tables;

/** A row as written. */
export type AccessLogRow = typeof accessLog.$inferInsert;
/** A row as read. */
export type StoredAccessLogRow = typeof accessLog.$inferSelect;

/** Inserts a batch in one statement whatever its size. */
export async function insertAccessRows(tx: Tx, rows: readonly AccessLogRow[]): Promise<void> {
  const values = rows.map((row) => [
    row.id,
    row.at,
    row.applicationId ?? null,
    row.apiKeyId ?? null,
    row.apiKeyName ?? null,
    row.principal ?? null,
    row.face,
    row.client ? JSON.stringify(row.client) : null,
    row.tool ?? null,
    row.operation,
    row.grantId ?? null,
    row.objectIds ? JSON.stringify(row.objectIds) : null,
    row.status,
    row.errorType ?? null,
    row.address ?? null,
    row.requestId ?? null,
  ]);
  await tx.run(sql`INSERT INTO access_log (id, at, application_id, api_key_id, api_key_name, principal, face, client, tool, operation, grant_id, object_ids, status, error_type, address, request_id)
        SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11, value ->> 12, value ->> 13, value ->> 14, value ->> 15 FROM json_each(${JSON.stringify(values)})`);
}

/** Up to `limit` rows of an application matching the filters, newest first, before `beforeSeq` when given. */
export function accessRows(
  db: Database,
  applicationId: string,
  filters: Omit<ListAccessLogInput, 'limit' | 'page_token'>,
  beforeSeq: number | undefined,
  limit: number,
): Promise<StoredAccessLogRow[]> {
  const conditions: (SQL | undefined)[] = [eq(accessLog.applicationId, applicationId)];
  if (beforeSeq !== undefined) conditions.push(lt(accessLog.seq, beforeSeq));
  if (filters.api_key_id !== undefined) conditions.push(eq(accessLog.apiKeyId, filters.api_key_id));
  if (filters.grant_id !== undefined) conditions.push(eq(accessLog.grantId, filters.grant_id));
  if (filters.operation !== undefined) conditions.push(eq(accessLog.operation, filters.operation));
  if (filters.status !== undefined) conditions.push(eq(accessLog.status, filters.status));
  if (filters.since !== undefined) conditions.push(gte(accessLog.at, filters.since * 1000));
  if (filters.until !== undefined) conditions.push(lt(accessLog.at, filters.until * 1000));
  return db.orm
    .select()
    .from(accessLog)
    .where(and(...conditions))
    .orderBy(desc(accessLog.seq))
    .limit(limit);
}

/** Up to `limit` seqs of rows written before `beforeMs`. */
export async function accessRowsBefore(db: Database, beforeMs: number, limit: number): Promise<number[]> {
  const rows = await db.orm
    .select({ seq: accessLog.seq })
    .from(accessLog)
    .where(lt(accessLog.at, beforeMs))
    .limit(limit);
  return rows.map((row) => row.seq);
}

/** Deletes the rows of `seqs` (still older than `beforeMs`); how many went. */
export async function deleteAccessRows(db: Database, seqs: number[], beforeMs: number): Promise<number> {
  const deleted = await db.write((tx) =>
    tx
      .delete(accessLog)
      .where(and(inArray(accessLog.seq, seqs), lt(accessLog.at, beforeMs)))
      .returning({ seq: accessLog.seq }),
  );
  return deleted.length;
}
