/**
 * The hot read path (storage/engine/fast-read.ts): the same rows as drizzle gives, for whole rows with JSON, boolean and
 * null columns, partial selections, inner joins with a nested table and prepared queries with placeholders; and the
 * shared connection (uncommitted writes included) whenever a write transaction is open, a transaction's executor is
 * used, or the database is not an embedded file.
 */
import { join } from 'node:path';
import Sqlite from 'libsql';
import { asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  beginReadScope,
  createDb,
  migrate,
  preparedRead,
  readAll,
  tables,
  type Database,
  type Executor,
} from '../../storage/index.js';
import { tempDir } from '../helpers/service.js';

const dir = tempDir();
let db: Database;

beforeAll(async () => {
  db = await createDb({ url: `file:${join(dir.path, 'fast-read.db')}` });
  await migrate(db);
  await db.write(async (tx) => {
    await tx
      .insert(tables.applications)
      .values({ id: 'app', name: 'fast reads', plan: 'trial', createdAt: 1, updatedAt: 1 });
    await tx.insert(tables.grants).values({
      id: 'grant',
      applicationId: 'app',
      provider: 'nylas',
      email: 'a@fast.test',
      createdAt: 1,
      updatedAt: 1,
    });
    const message = (seq: number, extra: Partial<typeof tables.messages.$inferInsert>) => ({
      id: `m${seq}`,
      grantId: 'grant',
      threadId: 't1',
      seq,
      date: 1_700_000_000 + seq,
      rawSize: 100,
      createdAt: 1,
      updatedAt: 1,
      ...extra,
    });
    await tx.insert(tables.messages).values([
      message(1, {
        subject: 'first',
        fromAddresses: [{ name: 'Ann', email: 'ann@example.com' }],
        folders: ['inbox'],
        metadata: { key: 'value', nested: [1, 2] },
        unread: false,
        starred: true,
        body: '<p>é ✓ "quoted"</p>',
      }),
      message(2, {
        subject: 'second',
        toAddresses: [{ email: 'bob@example.com' }],
        references: ['a@b'],
        verdict: null,
        body: null,
        bodyHash: 'abc',
      }),
    ]);
    await tx.insert(tables.blobs).values({ hash: 'h', size: 1, chunkCount: 1, createdAt: 1 });
    await tx.insert(tables.attachments).values({
      id: 'a1',
      messageId: 'm1',
      grantId: 'grant',
      position: 0,
      filename: 'x.txt',
      contentType: 'text/plain',
      size: 1,
      isInline: false,
      blobHash: 'h',
    });
  });
});

afterAll(async () => {
  await db.close();
  dir.remove();
});

describe('readAll', () => {
  it('gives the rows drizzle gives: whole rows, partial selections and inner joins with a nested table', async () => {
    const whole = () => db.orm.select().from(tables.messages).orderBy(asc(tables.messages.seq));
    expect(await readAll(db.orm, whole())).toEqual(await whole());
    const partial = () =>
      db.orm
        .select({
          id: tables.messages.id,
          folders: tables.messages.folders,
          unread: tables.messages.unread,
          n: sql<number>`${tables.messages.seq} * 2`,
        })
        .from(tables.messages);
    expect(await readAll(db.orm, partial())).toEqual(await partial());
    const joined = () =>
      db.orm
        .select({ subject: tables.messages.subject, attachment: tables.attachments })
        .from(tables.messages)
        .innerJoin(tables.attachments, eq(tables.attachments.messageId, tables.messages.id));
    const rows = await readAll(db.orm, joined());
    expect(rows).toEqual(await joined());
    expect(rows[0]!.attachment.isInline).toBe(false);
  });

  it('keeps left joins as drizzle maps them (the missing side is null)', async () => {
    const left = () =>
      db.orm
        .select({ id: tables.messages.id, attachment: tables.attachments })
        .from(tables.messages)
        .leftJoin(tables.attachments, eq(tables.attachments.messageId, tables.messages.id))
        .orderBy(asc(tables.messages.seq));
    const rows = await readAll(db.orm, left());
    expect(rows).toEqual(await left());
    expect(rows[1]!.attachment).toBeNull();
  });

  it('reads through the shared connection while a write transaction is open, and in a transaction', async () => {
    await db
      .write(async (tx) => {
        await tx.update(tables.messages).set({ subject: 'changed' }).where(eq(tables.messages.id, 'm1'));
        const [viaOrm] = await readAll(
          db.orm,
          db.orm.select({ subject: tables.messages.subject }).from(tables.messages).where(eq(tables.messages.id, 'm1')),
        );
        const [viaTx] = await readAll(
          tx,
          tx.select({ subject: tables.messages.subject }).from(tables.messages).where(eq(tables.messages.id, 'm1')),
        );
        // What the shared connection sees, as before: the uncommitted change.
        expect(viaOrm!.subject).toBe('changed');
        expect(viaTx!.subject).toBe('changed');
        tx.rollback();
      })
      .catch(() => undefined);
    const [after] = await readAll(
      db.orm,
      db.orm.select({ subject: tables.messages.subject }).from(tables.messages).where(eq(tables.messages.id, 'm1')),
    );
    expect(after!.subject).toBe('first');
  });
});

describe('preparedRead', () => {
  const bySubject = preparedRead((executor: Executor) =>
    executor
      .select()
      .from(tables.messages)
      .where(eq(tables.messages.subject, sql.placeholder('subject')))
      .limit(sql.placeholder('limit')),
  );

  it('fills the placeholders at each call, on the fast path and in a transaction alike', async () => {
    const expected = await db.orm.select().from(tables.messages).where(eq(tables.messages.subject, 'second'));
    expect(await bySubject(db.orm, { subject: 'second', limit: 5 })).toEqual(expected);
    expect(await bySubject(db.orm, { subject: 'first', limit: 5 })).toEqual(
      await db.orm.select().from(tables.messages).where(eq(tables.messages.subject, 'first')),
    );
    expect(await bySubject(db.orm, { subject: 'none', limit: 5 })).toEqual([]);
    await db.write(async (tx) => {
      expect(await bySubject(tx, { subject: 'second', limit: 5 })).toEqual(expected);
    });
  });

  it('runs on a database that is not an embedded file as drizzle does', async () => {
    const memory = await createDb({ url: 'file::memory:' });
    try {
      // Drizzle's own error (the native read connection would throw SqliteError: no such table).
      expect(await bySubject(memory.orm, { subject: 'x', limit: 1 }).catch((error: Error) => error.message)).toMatch(
        /^Failed query: select/,
      );
    } finally {
      await memory.close();
    }
  });
});

describe('rows read as one aggregated value', () => {
  const page = preparedRead((executor: Executor) =>
    executor
      .select({
        id: tables.messages.id,
        seq: tables.messages.seq,
        date: tables.messages.date,
        rawSize: tables.messages.rawSize,
        bodyHash: tables.messages.bodyHash,
        unread: tables.messages.unread,
        half: sql<number>`${tables.messages.seq} / 2`,
      })
      .from(tables.messages)
      .where(eq(tables.messages.grantId, sql.placeholder('grant')))
      .orderBy(sql`${tables.messages.date} desc`)
      .limit(sql.placeholder('limit')),
  );

  it('keeps the order and the values of INTEGER and TEXT columns and expressions, NULL included', async () => {
    await db.write(async (tx) => {
      await tx.insert(tables.messages).values(
        Array.from({ length: 120 }, (_, index) => ({
          id: `bulk${index}`,
          grantId: 'grant',
          threadId: 't2',
          seq: 100 + index,
          date: 1_600_000_000 + ((index * 37) % 120),
          rawSize: 2 ** 52 + index,
          bodyHash: index % 3 === 0 ? null : `hash "${index}" ✓\n`,
          createdAt: 1,
          updatedAt: 1,
        })),
      );
    });
    const expected = await db.orm
      .select({
        id: tables.messages.id,
        seq: tables.messages.seq,
        date: tables.messages.date,
        rawSize: tables.messages.rawSize,
        bodyHash: tables.messages.bodyHash,
        unread: tables.messages.unread,
        half: sql<number>`${tables.messages.seq} / 2`,
      })
      .from(tables.messages)
      .where(eq(tables.messages.grantId, 'grant'))
      .orderBy(sql`${tables.messages.date} desc`)
      .limit(60);
    const rows = await page(db.orm, { grant: 'grant', limit: 60 });
    expect(rows).toEqual(expected);
    expect(rows.map((row) => row.date)).toEqual([...rows.map((row) => row.date)].sort((a, b) => b - a));
  });

  it('reads a REAL (in an INTEGER column, or computed) and a BLOB in a TEXT column exactly (JSON cannot)', async () => {
    const thirds = preparedRead((executor: Executor) =>
      executor
        .select({ id: tables.messages.id, third: sql<number>`${tables.messages.seq} / 3.0` })
        .from(tables.messages)
        .where(eq(tables.messages.id, sql.placeholder('id'))),
    );
    expect((await thirds(db.orm, { id: 'bulk1' }))[0]!.third).toBe(101 / 3);
    const client = db.client;
    await client.execute({
      sql: 'UPDATE messages SET raw_size = ?, body_hash = ? WHERE id = ?',
      args: [1764290000.123456, new Uint8Array([104, 105]), 'bulk1'],
    });
    try {
      const rows = await page(db.orm, { grant: 'grant', limit: 500 });
      const row = rows.find((candidate) => candidate.id === 'bulk1')!;
      expect(row.rawSize).toBe(1764290000.123456);
      expect(Buffer.from(row.bodyHash as unknown as Uint8Array).toString()).toBe('hi');
      await client.execute({ sql: 'UPDATE messages SET body_hash = NULL WHERE id = ?', args: ['bulk1'] });
      const again = await page(db.orm, { grant: 'grant', limit: 500 });
      expect(again.find((candidate) => candidate.id === 'bulk1')!.rawSize).toBe(1764290000.123456);
    } finally {
      await client.execute({ sql: 'DELETE FROM messages WHERE id LIKE ?', args: ['bulk%'] });
    }
  });
});

describe('rows kept while the database is unchanged', () => {
  const bySubject = preparedRead(
    (executor: Executor) =>
      executor
        .select({ id: tables.messages.id, subject: tables.messages.subject })
        .from(tables.messages)
        .where(eq(tables.messages.id, sql.placeholder('id'))),
    { memo: 2 },
  );

  it('answers from memory until any connection commits, then reads again', async () => {
    const first = await bySubject(db.orm, { id: 'm1' });
    expect(first).toEqual([{ id: 'm1', subject: 'first' }]);
    // Unchanged: the very rows kept.
    expect(await bySubject(db.orm, { id: 'm1' })).toBe(first);
    // A write of this process's own connection.
    await db.write((tx) => tx.update(tables.messages).set({ subject: 'renamed' }).where(eq(tables.messages.id, 'm1')));
    expect(await bySubject(db.orm, { id: 'm1' })).toEqual([{ id: 'm1', subject: 'renamed' }]);
    // Another connection (as another process): seen by the next request (a read scope begun after the commit).
    const other = new Sqlite(join(dir.path, 'fast-read.db'));
    try {
      other.prepare('UPDATE messages SET subject = ? WHERE id = ?').run(['elsewhere', 'm1']);
      beginReadScope();
      expect(await bySubject(db.orm, { id: 'm1' })).toEqual([{ id: 'm1', subject: 'elsewhere' }]);
      // A commit that changes other rows drops what was kept too (the version is the whole database's).
      const kept = await bySubject(db.orm, { id: 'm1' });
      other.prepare('UPDATE messages SET subject = subject WHERE id = ?').run(['m2']);
      beginReadScope();
      expect(await bySubject(db.orm, { id: 'm1' })).not.toBe(kept);
      other.prepare('UPDATE messages SET subject = ? WHERE id = ?').run(['first', 'm1']);
    } finally {
      other.close();
    }
    beginReadScope();
    // At most `memo` sets of values are kept; each still answers correctly.
    for (const id of ['m1', 'm2', 'none', 'm1'])
      expect(await bySubject(db.orm, { id })).toEqual(
        await db.orm
          .select({ id: tables.messages.id, subject: tables.messages.subject })
          .from(tables.messages)
          .where(eq(tables.messages.id, id)),
      );
  });
});

describe('rows of long text', () => {
  it('reads them as they are, at once and after the first long result alike', async () => {
    const bodies = preparedRead((executor: Executor) =>
      executor
        .select({ id: tables.messages.id, body: tables.messages.body })
        .from(tables.messages)
        .where(eq(tables.messages.id, sql.placeholder('id'))),
    );
    const long = `"quoted" ✓ \\ ${'x'.repeat(40_000)}`;
    await db.write((tx) => tx.update(tables.messages).set({ body: long }).where(eq(tables.messages.id, 'm2')));
    for (let read = 0; read < 3; read++) expect(await bodies(db.orm, { id: 'm2' })).toEqual([{ id: 'm2', body: long }]);
    expect(await bodies(db.orm, { id: 'm1' })).toEqual(
      await db.orm
        .select({ id: tables.messages.id, body: tables.messages.body })
        .from(tables.messages)
        .where(eq(tables.messages.id, 'm1')),
    );
  });
});
