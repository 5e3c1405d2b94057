/**
 * The libSQL server path of storage/db.ts (`AGENTPOST_DATABASE_URL=http(s)://…` or `libsql://…`), run through the
 * real `@libsql/client` HTTP code against the protocol stand-in of test/helpers/libsql-server.ts, which serves a
 * real libSQL file: migrations over HTTP, interactive write transactions spanning requests (BEGIN, statements,
 * COMMIT or ROLLBACK on one stream, one baton after another), batches, foreign keys on every stream, baton expiry,
 * two clients writing at once, and the auth token.
 */
import { join } from 'node:path';
import Sqlite from 'libsql';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrate, tables, type Database } from '../../storage/index.js';
import { startLibsqlServer, type LibsqlServer } from '../helpers/libsql-server.js';
import { tempDir } from '../helpers/service.js';

/** An error's message with its causes (drizzle wraps the driver's error in `Failed query: …`). */
const fullMessage = (error: unknown): string =>
  error instanceof Error
    ? `${error.message} ${fullMessage(error.cause)}`
    : error === undefined
      ? ''
      : // eslint-disable-next-line @typescript-eslint/no-base-to-string -- any other rejection, as String() shows it
        String(error);
/** Resolves the message chain of the rejection of `promise` (fails when it resolves). */
async function failure(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => fullMessage(error),
  );
}

const application = (id: string) => ({ id, name: id, plan: 'trial' as const, createdAt: 1, updatedAt: 1 });

describe('storage on a libSQL server (HTTP)', () => {
  const dir = tempDir();
  const file = join(dir.path, 'served.db');
  let server: LibsqlServer;
  let db: Database;
  /** A connection of our own to the served file, to see what is committed. */
  let direct: Sqlite.Database;
  const count = (table: string, where = '1') =>
    Number((direct.prepare(`SELECT count(*) FROM ${table} WHERE ${where}`).raw(true).get() as [number])[0]);

  beforeAll(async () => {
    server = await startLibsqlServer({ file, authToken: 'secret-token' });
    db = await createDb({ url: server.url, authToken: 'secret-token' });
    await migrate(db);
    direct = new Sqlite(file);
  });
  afterAll(async () => {
    direct.close();
    await db.close();
    await server.close();
    dir.remove();
  });

  it('is not embedded and has no file: the writer thread and the fast reads are for embedded files only', () => {
    expect(db.embedded).toBe(false);
    expect(db.file).toBeUndefined();
  });

  it('applies the migrations over HTTP, into the served file', () => {
    const applied = count('__drizzle_migrations');
    expect(applied).toBeGreaterThan(0);
    expect(count('sqlite_master', `type = 'table' AND name = 'messages'`)).toBe(1);
    // The migrations ran as one conditional batch, with foreign keys off around it (the client's migrate()).
    expect(
      server.pipelines.some(
        (pipeline) => pipeline.sql.includes('PRAGMA foreign_keys=off') && pipeline.sql.includes('COMMIT'),
      ),
    ).toBe(true);
  });

  it('runs a write transaction across requests on one stream: BEGIN IMMEDIATE, statements, COMMIT', async () => {
    const before = server.pipelines.length;
    let seenInside = -1;
    await db.write(async (tx) => {
      await tx.insert(tables.applications).values(application('app_tx_1'));
      // Not visible to another connection before the COMMIT.
      seenInside = count('applications', `id = 'app_tx_1'`);
      await tx.insert(tables.applications).values(application('app_tx_2'));
    });
    expect(seenInside).toBe(0);
    expect(count('applications', `id IN ('app_tx_1', 'app_tx_2')`)).toBe(2);
    const mine = server.pipelines.slice(before);
    // One stream, three or more pipelines (each a new baton).
    expect(new Set(mine.map((pipeline) => pipeline.stream)).size).toBe(1);
    expect(mine.length).toBeGreaterThanOrEqual(3);
    expect(mine[0]!.opened).toBe(true);
    expect(mine.find((pipeline) => pipeline.sql.includes('BEGIN IMMEDIATE'))).toBe(mine[0]);
    expect(mine.at(-1)!.sql).toEqual(['COMMIT']);
    expect(mine.at(-1)!.types).toEqual(['execute', 'close']);
    expect(
      mine
        .slice(1, -1)
        .flatMap((pipeline) => pipeline.sql)
        .some((text) => text.startsWith('insert into "applications"')),
    ).toBe(true);
    expect(server.openStreams()).toBe(0);
  });

  it('rolls back a transaction whose work throws: nothing of it is stored', async () => {
    const before = server.pipelines.length;
    await expect(
      db.write(async (tx) => {
        await tx.insert(tables.applications).values(application('app_rolled_back'));
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(count('applications', `id = 'app_rolled_back'`)).toBe(0);
    expect(server.pipelines.slice(before).at(-1)!.sql).toEqual(['ROLLBACK']);
  });

  it('enforces foreign keys inside write transactions (each stream is a new connection on the server)', async () => {
    expect(
      await failure(
        db.write(async (tx) => {
          await tx.insert(tables.grants).values({
            id: 'orphan',
            applicationId: 'no_such_application',
            provider: 'nylas',
            email: 'orphan@fk.test',
            createdAt: 1,
            updatedAt: 1,
          });
        }),
      ),
    ).toMatch(/FOREIGN KEY constraint failed/);
    expect(count('grants', `id = 'orphan'`)).toBe(0);
    // Every stream (a connection on the server) turned them on first, in its opening request.
    const opened = server.pipelines.filter((pipeline) => pipeline.opened);
    expect(opened.length).toBeGreaterThan(5);
    expect(opened.every((pipeline) => pipeline.sql[0] === 'PRAGMA foreign_keys = ON')).toBe(true);
    // And ON DELETE CASCADE works, which also needs foreign keys on.
    await db.write(async (tx) => {
      await tx.insert(tables.applications).values(application('app_cascade'));
      await tx.insert(tables.grants).values({
        id: 'grant_cascade',
        applicationId: 'app_cascade',
        provider: 'nylas',
        email: 'cascade@fk.test',
        createdAt: 1,
        updatedAt: 1,
      });
    });
    await db.write((tx) => tx.delete(tables.applications).where(eq(tables.applications.id, 'app_cascade')));
    expect(count('grants', `id = 'grant_cascade'`)).toBe(0);
  });

  it('enforces foreign keys in batches and single statements too', async () => {
    expect(
      await failure(
        db.orm.batch([
          db.orm.insert(tables.grants).values({
            id: 'orphan_batch',
            applicationId: 'none',
            provider: 'nylas',
            email: 'orphan-batch@fk.test',
            createdAt: 1,
            updatedAt: 1,
          }),
        ]),
      ),
    ).toMatch(/FOREIGN KEY/);
    expect(
      await failure(
        db.client.execute({
          sql: `INSERT INTO grants (id, application_id, provider, email, created_at, updated_at) VALUES ('orphan_single', 'none', 'nylas', 'single@fk.test', 1, 1)`,
          args: [],
        }),
      ),
    ).toMatch(/FOREIGN KEY/);
    expect(count('grants', `id LIKE 'orphan%'`)).toBe(0);
  });

  it('runs a batch in one transaction: a failing statement rolls back the ones before it', async () => {
    expect(
      await failure(
        db.orm.batch([
          db.orm.insert(tables.applications).values(application('app_batch_1')),
          db.orm.insert(tables.applications).values(application('app_batch_1')),
        ]),
      ),
    ).toMatch(/UNIQUE constraint failed/);
    expect(count('applications', `id = 'app_batch_1'`)).toBe(0);
    const results = await db.orm.batch([
      db.orm.insert(tables.applications).values(application('app_batch_2')),
      db.orm
        .select({ n: sql<number>`count(*)` })
        .from(tables.applications)
        .where(eq(tables.applications.id, 'app_batch_2')),
    ]);
    expect(results[1]).toEqual([{ n: 1 }]);
  });

  it('reads values as they were written: integers, text, blobs and nulls over the JSON protocol', async () => {
    const row = await db.client.execute({
      sql: 'SELECT 9007199254740991 AS big, 2.5 AS real, ? AS text, ? AS blob, NULL AS absent',
      args: ['héllo', new Uint8Array([0, 1, 255])],
    });
    expect(row.rows[0]!.big).toBe(9007199254740991);
    expect(row.rows[0]!.real).toBe(2.5);
    expect(row.rows[0]!.text).toBe('héllo');
    expect(new Uint8Array(row.rows[0]!.blob as ArrayBuffer)).toEqual(new Uint8Array([0, 1, 255]));
    expect(row.rows[0]!.absent).toBeNull();
  });

  it("two clients write at once: the second waits for the first one's lock, both commit", async () => {
    const other = await createDb({ url: server.url, authToken: 'secret-token' });
    try {
      let release!: () => void;
      const held = new Promise<void>((done) => (release = done));
      const first = db.write(async (tx) => {
        await tx.insert(tables.applications).values(application('app_first'));
        await held;
      });
      await new Promise((done) => setTimeout(done, 50));
      const second = other.write((tx) => tx.insert(tables.applications).values(application('app_second')));
      await new Promise((done) => setTimeout(done, 100));
      const meanwhile = count('applications', `id IN ('app_first', 'app_second')`);
      release();
      expect(meanwhile).toBe(0);
      await Promise.all([first, second]);
      expect(count('applications', `id IN ('app_first', 'app_second')`)).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('takes the libsql:// and ws:// forms of the same server (both spoken over HTTP)', async () => {
    const port = new URL(server.url).port;
    for (const url of [`libsql://127.0.0.1:${port}?tls=0`, `ws://127.0.0.1:${port}`]) {
      const other = await createDb({ url, authToken: 'secret-token' });
      try {
        expect(
          await failure(
            other.write((tx) =>
              tx.insert(tables.grants).values({
                id: 'orphan_url',
                applicationId: 'none',
                provider: 'nylas',
                email: 'url@fk.test',
                createdAt: 1,
                updatedAt: 1,
              }),
            ),
          ),
        ).toMatch(/FOREIGN KEY/);
        const [row] = await other.orm.select().from(tables.applications).where(eq(tables.applications.id, 'app_tx_1'));
        expect(row?.name).toBe('app_tx_1');
      } finally {
        await other.close();
      }
    }
  });

  it('refuses a wrong auth token', async () => {
    const intruder = await createDb({ url: server.url, authToken: 'wrong' }).catch((error: unknown) => error);
    expect(String(intruder)).toMatch(/Unauthorized/);
  });
});

describe('an expired stream (baton) on a libSQL server', () => {
  const dir = tempDir();
  afterAll(() => dir.remove());

  it('fails the transaction that idled past the expiry, and nothing of it is stored', async () => {
    const file = join(dir.path, 'expiring.db');
    const server = await startLibsqlServer({ file, streamExpiryMs: 300 });
    const db = await createDb({ url: server.url });
    try {
      await migrate(db);
      expect(
        await failure(
          db.write(async (tx) => {
            await tx.insert(tables.applications).values(application('app_idle'));
            await new Promise((done) => setTimeout(done, 600));
            await tx.insert(tables.applications).values(application('app_idle_2'));
          }),
        ),
      ).toMatch(/STREAM_EXPIRED/);
      const direct = new Sqlite(file);
      expect(
        (direct.prepare(`SELECT count(*) FROM applications WHERE id LIKE 'app_idle%'`).raw(true).get() as [number])[0],
      ).toBe(0);
      direct.close();
      // The next write works on a new stream.
      await db.write((tx) => tx.insert(tables.applications).values(application('app_after')));
    } finally {
      await db.close();
      await server.close();
    }
  });
});
