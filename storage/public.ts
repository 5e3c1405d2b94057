/**
 * @module agentpost/storage
 * The package's `agentpost/storage` entry: the database a core is built on (`createDb`, `migrate`) and the drizzle
 * `tables`, for embedders who wire `createCore` themselves or read the tables directly. Each name is listed here
 * (docs/embedding.md, "Public API"; test/package/public-api.test.ts holds the list). The rest of the storage layer
 * (storage/index.ts, what the core imports) is internal.
 */
import * as tables from './schema/index.js';

/** Opens the database of `AGENTPOST_DATABASE_URL` (an embedded `file:` database or a libSQL server). */
export { createDb } from './db.js';
/** Applies the pending SQL migrations (the service's own start does it; call it after {@link createDb}). */
export { migrate } from './db.js';
/** An open database (`db.orm`, `db.close()`), and the options of {@link createDb}. */
export type { Database, CreateDbOptions } from './db.js';
/** The drizzle tables of the schema (`tables.messages`, `tables.grants`, …). */
export { tables };
