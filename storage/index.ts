/**
 * @module storage
 * Schema, migrations and data access. Never imports from `src/`.
 */
export { createDb, migrate, type Database, type Executor, type Orm, type Tx, type CreateDbOptions } from './db.js';
export * as tables from './schema/index.js';
export { SYSTEM_FOLDERS, type SystemFolder } from './schema/grants.js';
export { findGrantByRef, findGrantByEmail, type GrantRow } from './repositories/grant-repository.js';
