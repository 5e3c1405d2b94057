/**
 * @module access-log
 * The front door of the access log (issue 36): every operation call on every face, batched into the database, read
 * through `GET /v3/access-log`, bounded by `AGENTPOST_ACCESS_LOG_RETENTION_DAYS`.
 */
export { createAccessLog, ACCESS_LOG_FLUSH_MS, ACCESS_LOG_BATCH_ROWS, MAX_QUEUED_ROWS } from './access-log.js';
export type { AccessLog, AccessRecord } from './contracts.js';
