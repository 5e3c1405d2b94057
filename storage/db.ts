/**
 * @module storage/db
 * Opens the database (an embedded libSQL file, or a libSQL server URL) and applies migrations.
 */
import { mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from '@libsql/client';
import Sqlite from 'libsql';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/libsql';
import { migrate as drizzleMigrate } from 'drizzle-orm/libsql/migrator';
import * as schema from './schema/index.js';
import { CONNECTION_SETTINGS, withConnectionSettings } from './connection-settings.js';
import { registerFastReads, writeCommitted } from './engine/fast-read.js';
import { ensureMailSearchIndex } from './mail-search.js';
import type { Orm, Tx } from './orm.js';
import { startWalCheckpointer, type WalCheckpointer } from './engine/wal-checkpointer.js';

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
  /**
   * Like {@link Database.write} (same queue, same transaction), for high-rate writers whose callers acknowledge to
   * the outside world (inbound mail answers 250). With an embedded file the transaction runs on a dedicated
   * connection with synchronous=NORMAL and no automatic checkpoint, so its COMMIT never fsyncs on the event loop;
   * the promise resolves only after the write-ahead log has been fdatasync'ed from the thread pool, so a resolved
   * write is as durable as with synchronous=FULL. Checkpoints run on a worker thread. A libSQL server: `write`.
   */
  durableWrite<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Like {@link Database.durableWrite} (same queue, same dedicated connection, so its COMMIT never fsyncs on the event
   * loop), for rows a crash may lose (the access log): the promise resolves at COMMIT, without waiting for the log to
   * reach the disk; the next durable write or checkpoint takes them there. On the shared connection ({@link
   * Database.write}) the same COMMIT would fsync the log on the event loop (synchronous=FULL). A libSQL server, or a
   * database without a file: `write`.
   */
  unsyncedWrite<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * The embedded database file (absolute path), for a writer with its own connection on another thread; undefined
   * for a libSQL server and for in-memory databases.
   */
  readonly file: string | undefined;
  /**
   * Runs `work` holding this process's write lock (the queue of {@link Database.write} and
   * {@link Database.durableWrite}), for a writer that commits on its own connection, on another thread, to
   * {@link Database.file}. In-process writes then take turns instead of meeting on SQLite's file lock, which an
   * embedded connection on the event loop would wait for synchronously. From the first call on, checkpoints run
   * on the checkpoint thread. `work` must not call `write` (it would wait for itself).
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** How many callers wait for this process's write lock (a holder that could go on keeps it only while none do). */
  lockWaiters(): number;
  /**
   * Calls `listener` whenever a thread of the database's own (the checkpoint thread) stopped on its own; it is
   * replaced. Returns the unsubscribe function.
   */
  onThreadExit(listener: ThreadExitListener): () => void;
  /** Closes every connection and waits for the checkpoint thread to stop (a thread cut off mid-call aborts the process). */
  close(): Promise<void>;
}

/** Told that a worker thread stopped on its own (crashed, ran out of memory, was stopped for overrunning a deadline). */
export type ThreadExitListener = (thread: string, reason: string) => void;

/** Options for {@link createDb}. */
export interface CreateDbOptions {
  url: string;
  authToken?: string | undefined;
  /** Milliseconds a connection waits for another process's write lock. */
  busyTimeoutMs?: number | undefined;
}

/** The page size of a new database file. */
export const PAGE_BYTES = 16_384;

/** How much of the database file the read connection maps into memory (address space, not memory used). */
const READER_MMAP_BYTES = 256 * 1024 * 1024;

/** Opens the database. For `file:` URLs it creates the folder and turns on WAL. */
export async function createDb({ url, authToken, busyTimeoutMs = 5_000 }: CreateDbOptions): Promise<Database> {
  const embedded = url.startsWith('file:');
  if (embedded) {
    const path = url.slice('file:'.length).split('?')[0] ?? '';
    if (path && path !== ':memory:')
      mkdirSync(dirname(resolve(path.replace(/^\/\/(localhost)?/, ''))), { recursive: true });
  }
  // A libSQL server is spoken to over HTTP (sqld and Turso serve WebSockets and HTTP on one address), so that the
  // connection settings reach every stream: see storage/connection-settings.ts.
  const token = authToken !== undefined ? { authToken } : {};
  const client = embedded
    ? createClient({ url, ...token, timeout: busyTimeoutMs, intMode: 'number' })
    : createClient({
        url: url.replace(/^ws(s?):/, 'http$1:'),
        ...token,
        intMode: 'number',
        fetch: withConnectionSettings(CONNECTION_SETTINGS),
      });
  if (embedded) {
    // A new file gets pages of 16 KB (SQLite's default is 4 KB; a file that exists keeps its size). A stored message
    // (its row, its raw bytes, its search entry) then dirties fewer pages, and a COMMIT writes fewer frames to the
    // log: the mail writer needs 11–15% less CPU a message (bench/imap-sync.bench.ts). Before WAL, which
    // fixes the size once the file has its first page.
    await client.execute(`PRAGMA page_size = ${PAGE_BYTES}`);
    // WAL lets readers run beside the writer and survives restarts (it is stored in the file).
    await client.execute('PRAGMA journal_mode = WAL');
  }
  await client.execute('PRAGMA foreign_keys = ON');
  const orm = drizzle(client, { schema, casing: 'snake_case' });
  const inMemory = /^file:(:memory:|.*mode=memory)/.test(url);
  // The main database's file path ('' for one without a file).
  const mainFile =
    embedded && !inMemory
      ? (await client.execute(`SELECT file FROM pragma_database_list WHERE name = 'main'`)).rows[0]?.[0]
      : undefined;
  const file = typeof mainFile === 'string' && mainFile ? mainFile : undefined;

  // The dedicated connection of durableWrite, opened on first use (embedded files only).
  let durable: Promise<{ client: Client; orm: Orm; wal: string }> | undefined;
  // Started by the first durableWrite or exclusive: from then on no COMMIT on the event loop checkpoints.
  let checkpointer: WalCheckpointer | undefined;
  const threadListeners = new Set<ThreadExitListener>();
  const startCheckpointer = () => {
    if (file)
      checkpointer ??= startWalCheckpointer(file, {
        onExit: (reason) => threadListeners.forEach((listener) => listener('checkpoint', reason)),
      });
  };

  let queue: Promise<unknown> = Promise.resolve();
  /** Callers queued behind the current holder of the lock. */
  let waiting = 0;
  /** Runs `work` at its turn of the lock, counting it as waiting until then. */
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    waiting++;
    const run = queue.then(async () => {
      waiting--;
      try {
        return await work();
      } finally {
        // Whatever committed here (this connection, the durable one, the mail writer thread) is seen by the next read.
        writeCommitted(orm);
      }
    });
    queue = run.catch(() => undefined);
    return run;
  };
  /** Write transactions open on the shared connection (reads of `orm` go to it meanwhile, see storage/engine/fast-read.ts). */
  let writing = 0;
  const write = <T>(work: (tx: Tx) => Promise<T>): Promise<T> =>
    inTurn(async () => {
      writing++;
      try {
        return await orm.transaction(async (tx) => {
          // Once the checkpoint thread runs, no COMMIT here checkpoints on the event loop either.
          if (checkpointer) await tx.run(sql.raw('PRAGMA wal_autocheckpoint = 0'));
          return work(tx);
        });
      } finally {
        writing--;
      }
    });
  // The read connection of the hot read path (embedded files only), opened on first use: the native driver with
  // statements prepared once (storage/engine/fast-read.ts). It only reads (query_only), so it never takes the write lock.
  let reader: Sqlite.Database | undefined;
  if (file) {
    registerFastReads(orm, {
      opened: () => reader !== undefined,
      connection: () => {
        if (!reader) {
          reader = new Sqlite(file, { timeout: busyTimeoutMs });
          reader.exec('PRAGMA query_only = ON');
          // Pages of the database file are read through a memory map instead of copied through the page cache: a
          // page of 50 messages of 10 KB came out in half the time (0.59 → 0.27 ms here).
          reader.exec(`PRAGMA mmap_size = ${READER_MMAP_BYTES}`);
        }
        return reader;
      },
      writing: () => writing > 0,
    });
  }
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    startCheckpointer();
    return inTurn(work);
  };
  const openDurable = async () => {
    const own = createClient({ url, timeout: busyTimeoutMs, intMode: 'number', concurrency: 1 });
    await own.execute('PRAGMA synchronous = NORMAL');
    await own.execute('PRAGMA wal_autocheckpoint = 0');
    await own.execute('PRAGMA foreign_keys = ON');
    startCheckpointer();
    return { client: own, orm: drizzle(own, { schema, casing: 'snake_case' }), wal: `${file}-wal` };
  };
  const syncLog = async (wal: string) => {
    const handle = await open(wal, 'r');
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
  };
  /** Runs `work` at its turn on the dedicated connection (synchronous=NORMAL: its COMMIT does not sync the log). */
  const onDurable = <T>(work: (tx: Tx) => Promise<T>) =>
    inTurn(async () => {
      durable ??= openDurable();
      const connection = await durable;
      return { connection, result: await connection.orm.transaction(work) };
    });
  const durableWrite = <T>(work: (tx: Tx) => Promise<T>): Promise<T> => {
    if (!file) return write(work);
    // The queue moves on at COMMIT; this caller waits for the log to reach the disk.
    return onDurable(work).then(async ({ connection, result }) => {
      await syncLog(connection.wal);
      return result;
    });
  };
  const unsyncedWrite = <T>(work: (tx: Tx) => Promise<T>): Promise<T> =>
    file ? onDurable(work).then(({ result }) => result) : write(work);

  const close = async () => {
    await queue;
    await checkpointer?.close();
    await durable?.then(
      (connection) => connection.client.close(),
      () => undefined,
    );
    reader?.close();
    client.close();
  };
  const onThreadExit = (listener: ThreadExitListener) => {
    threadListeners.add(listener);
    return () => threadListeners.delete(listener);
  };
  return {
    orm,
    client,
    embedded,
    file,
    write,
    durableWrite,
    unsyncedWrite,
    exclusive,
    lockWaiters: () => waiting,
    onThreadExit,
    close,
  };
}

/** The folder of the generated SQL migrations (with `meta/_journal.json`), applied by {@link migrate}. */
export const MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Applies every migration in `storage/migrations` that has not run yet. Safe to call at every start. */
export async function migrate(db: Database): Promise<void> {
  await drizzleMigrate(db.orm, { migrationsFolder: MIGRATIONS_FOLDER });
  // Virtual tables drizzle-kit cannot generate, created idempotently after the migrations.
  await ensureMailSearchIndex(db.client);
}
