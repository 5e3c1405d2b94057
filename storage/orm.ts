/**
 * @module storage/orm
 * The drizzle handle's types, apart from the module that opens it (./db.ts), so the modules it uses can name them.
 */
import type { LibSQLDatabase } from 'drizzle-orm/libsql';
import type * as schema from './schema/index.js';

/** The drizzle handle, with the schema attached. */
export type Orm = LibSQLDatabase<typeof schema>;
/** What a write transaction callback receives. */
export type Tx = Parameters<Parameters<Orm['transaction']>[0]>[0];
/** Reads run on either; repositories accept both. */
export type Executor = Orm | Tx;
