/**
 * @module storage/db
 * Opens the database (an embedded libSQL file, or a libSQL server URL) and applies migrations.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from '@libsql/client';
import { drizzle, type LibSQLDatabase } from 'drizzle-orm/libsql';
import { migrate as drizzleMigrate } from 'drizzle-orm/libsql/migrator';
import * as schema from './schema/index.js';

/** The drizzle handle, with the schema attached. */
export type Orm = LibSQLDatabase<typeof schema>;
/** What a write transaction callback receives. */
export type Tx = Parameters<Parameters<Orm['transaction']>[0]>[0];
/** Reads run on either; repositories accept both. */
export type Executor = Orm | Tx;

/** The storage handle passed to the core. */
export interface Database {
  /** For reads (and nothing else: writes go through {@link Database.write}). */
  readonly orm: Orm;
  readonly client: Client;
  /** True for an embedded file, false for a libSQL server. */
  readonly embedded: boolean;
  /**
   * Runs `work` in one write transaction (BEGIN IMMEDIATE). Writes in this process are serialised here: an
   * embedded libSQL connection waits for the file lock synchronously, so two overlapping write transactions
   * in one event loop would block each other; a queue avoids that. Other processes wait on the busy timeout.
   */
  write<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  close(): void;
}

/** Options for {@link createDb}. */
export interface CreateDbOptions {
  url: string;
  authToken?: string | undefined;
  /** Milliseconds a connection waits for another process's write lock. */
  busyTimeoutMs?: number;
}

/** Opens the database. For `file:` URLs it creates the folder and turns on WAL. */
export async function createDb({ url, authToken, busyTimeoutMs = 5_000 }: CreateDbOptions): Promise<Database> {
  const embedded = url.startsWith('file:');
  if (embedded) {
    const path = url.slice('file:'.length).split('?')[0] ?? '';
    if (path && path !== ':memory:') mkdirSync(dirname(resolve(path.replace(/^\/\/(localhost)?/, ''))), { recursive: true });
  }
  const client = createClient({ url, authToken, timeout: busyTimeoutMs, intMode: 'number' });
  if (embedded) {
    // WAL lets readers run beside the writer and survives restarts (it is stored in the file).
    await client.execute('PRAGMA journal_mode = WAL');
  }
  await client.execute('PRAGMA foreign_keys = ON');
  const orm = drizzle(client, { schema, casing: 'snake_case' });

  let queue: Promise<unknown> = Promise.resolve();
  const write = <T>(work: (tx: Tx) => Promise<T>): Promise<T> => {
    const run = queue.then(() => orm.transaction(work));
    queue = run.catch(() => undefined);
    return run;
  };

  return { orm, client, embedded, write, close: () => client.close() };
}

const MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Applies every migration in `storage/migrations` that has not run yet. Safe to call at every start. */
export async function migrate(db: Database): Promise<void> {
  await drizzleMigrate(db.orm, { migrationsFolder: MIGRATIONS_FOLDER });
}
