/**
 * The access log (src/access-log/): one row per operation call on every face, and per refused authentication,
 * append-only. Rows are written in batches (a multi-row INSERT) and deleted only by the retention purge
 * (`AGENTPOST_ACCESS_LOG_RETENTION_DAYS`). What a call read is named by its ids, never by its content.
 */
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** The MCP client (its `initialize` clientInfo) and session behind a call. */
export interface StoredClient {
  name?: string | undefined;
  version?: string | undefined;
  session?: string | undefined;
}

/** One call: who, through which face, what, on which objects, with what outcome. */
export const accessLog = sqliteTable(
  'access_log',
  {
    /** Insertion order: the cursor of a page, newest first. */
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    /** Unix milliseconds of the outcome. */
    at: integer('at').notNull(),
    /** Null for an authentication refused before any application was known. */
    applicationId: text('application_id'),
    apiKeyId: text('api_key_id'),
    apiKeyName: text('api_key_name'),
    /** How the caller proved itself (`api_key`, `service_account`, `local`); null when it did not. */
    principal: text('principal'),
    face: text('face').notNull(),
    client: text('client', { mode: 'json' }).$type<StoredClient>(),
    tool: text('tool'),
    operation: text('operation').notNull(),
    grantId: text('grant_id'),
    /** The ids the call named (its path parameters) and made (`created_id`), by field name. */
    objectIds: text('object_ids', { mode: 'json' }).$type<Record<string, string>>(),
    /** The HTTP status of the outcome (200, 404, 401, …), on every face. */
    status: integer('status').notNull(),
    /** The error's Nylas type on failure. */
    errorType: text('error_type'),
    address: text('address'),
    requestId: text('request_id'),
  },
  (table) => [
    index('access_log_application_idx').on(table.applicationId, table.seq),
    index('access_log_at_idx').on(table.at),
  ],
);
