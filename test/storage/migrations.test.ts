/**
 * Migrations on a database that holds mail: 0002 rebuilds the messages table (its `seq` becomes the rowid, raw
 * messages may live in `message_raw`) and makes threads, thread references and folder links WITHOUT ROWID tables.
 * Nothing stored before may be lost or cut loose: rebuilding a parent table with foreign keys on would cascade.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asc, eq } from 'drizzle-orm';
import { migrate as drizzleMigrate } from 'drizzle-orm/libsql/migrator';
import { afterAll, describe, expect, it } from 'vitest';
import { createClient } from '@libsql/client';
import { createDb, migrate, tables, type Database } from '../../storage/index.js';
import { PAGE_BYTES } from '../../storage/db.js';
import { ensureMailSearchIndex } from '../../storage/mail-search.js';
import { createMimeParser } from '../../src/mime/parse-inbound.js';
import { createMailStore, loadRaw, type NewMessage } from '../../src/messages/index.js';
import { asDelivery } from '../../src/messages/mail-rows.js';
import { fixedClock, sequentialIds } from '../helpers/clock.js';
import { tempDir } from '../helpers/service.js';

const MIGRATIONS = join(dirname(fileURLToPath(import.meta.url)), '../../storage/migrations');

/** A copy of the migrations folder holding only the first `count` migrations. */
function firstMigrations(into: string, count: number): string {
  mkdirSync(join(into, 'meta'), { recursive: true });
  const journal = JSON.parse(readFileSync(join(MIGRATIONS, 'meta/_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  journal.entries = journal.entries.slice(0, count);
  for (const entry of journal.entries)
    copyFileSync(join(MIGRATIONS, `${entry.tag}.sql`), join(into, `${entry.tag}.sql`));
  writeFileSync(join(into, 'meta/_journal.json'), JSON.stringify(journal));
  return into;
}

const message = (headers: string[], body: string) => Buffer.from(`${headers.join('\r\n')}\r\n\r\n${body}\r\n`);
const CORPUS = [
  {
    to: ['a@migrate.test'],
    raw: message(
      ['From: Ann <ann@example.com>', 'To: a@migrate.test', 'Subject: Plans', 'Message-ID: <m1@example.com>'],
      'First words about plans',
    ),
  },
  {
    to: ['a@migrate.test'],
    raw: message(
      [
        'From: Bob <bob@example.com>',
        'To: a@migrate.test',
        'Subject: Re: Plans',
        'Message-ID: <m2@example.com>',
        'In-Reply-To: <m1@example.com>',
      ],
      'A reply about plans',
    ),
  },
  {
    to: ['a@migrate.test', 'b@migrate.test'],
    raw: message(
      [
        'From: Fay <fay@example.com>',
        'To: a@migrate.test, b@migrate.test',
        'Subject: Report',
        'Message-ID: <m3@example.com>',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b"',
      ],
      '--b\r\nContent-Type: text/plain\r\n\r\nThe report is attached\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="r.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n--b--',
    ),
  },
];

/** Everything 0002 rebuilds, as values (ids, not rowids). */
async function contents(db: Database) {
  const messages = await db.orm.select().from(tables.messages).orderBy(asc(tables.messages.seq));
  return {
    messages: messages.map(({ id, seq, threadId, rawHash, subject }) => ({ id, seq, threadId, rawHash, subject })),
    raws: await Promise.all(messages.map(async (row) => (await loadRaw(db.orm, row)).toString('base64'))),
    threads: (await db.orm.select().from(tables.threads).orderBy(asc(tables.threads.id))).map(
      ({ id, messageCount, latestMessageId }) => ({ id, messageCount, latestMessageId }),
    ),
    references: await db.orm
      .select()
      .from(tables.threadReferences)
      .orderBy(asc(tables.threadReferences.headerId), asc(tables.threadReferences.grantId)),
    folders: await db.orm.select().from(tables.messageFolders).orderBy(asc(tables.messageFolders.messageId)),
    attachments: (await db.orm.select().from(tables.attachments).orderBy(asc(tables.attachments.id))).map(
      ({ id, messageId, blobHash }) => ({ id, messageId, blobHash }),
    ),
    search: (
      await db.client.execute(`SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'plans' ORDER BY rowid`)
    ).rows.map((row) => Number(row[0])),
  };
}

describe('migrations', () => {
  const dir = tempDir();
  const parser = createMimeParser({ workers: 1 });
  afterAll(async () => {
    await parser.close();
    dir.remove();
  });

  it('0002 keeps every message, thread, folder link, attachment, raw message and search entry of an existing database', async () => {
    const db = await createDb({ url: `file:${join(dir.path, 'old.db')}` });
    await drizzleMigrate(db.orm, { migrationsFolder: firstMigrations(join(dir.path, 'first-two'), 2) });
    await ensureMailSearchIndex(db.client);
    // Today's store writes the columns added to `messages` after 0002 (0002 rebuilds the table without them; their
    // own migrations add them back).
    await db.client.execute('ALTER TABLE messages ADD verdict text');
    await db.client.execute('ALTER TABLE messages ADD rev integer DEFAULT 0 NOT NULL');
    // The same for `grants` (0008 adds the paused-sending columns).
    await db.client.execute('ALTER TABLE grants ADD sending_paused_at integer');
    await db.client.execute('ALTER TABLE grants ADD sending_paused_reason text');
    // (0022 adds the oversight columns, 0033 the credential of app-only grants.)
    for (const column of ['oversight_mode text', 'suspended_at integer', 'suspended_reason text', 'credential_id text'])
      await db.client.execute(`ALTER TABLE grants ADD ${column}`);
    // And for `applications` (0018 adds the settings of PATCH /v3/applications, 0031 the test clock).
    await db.client.execute("ALTER TABLE applications ADD settings text DEFAULT '{}' NOT NULL");
    await db.client.execute('ALTER TABLE applications ADD test_clock_at integer');
    await db.write(async (tx) => {
      await tx
        .insert(tables.applications)
        .values({ id: 'app', name: 'migration test', plan: 'trial', createdAt: 1, updatedAt: 1 });
      await tx.insert(tables.grants).values({
        id: 'grant_a',
        applicationId: 'app',
        provider: 'nylas',
        email: 'a@migrate.test',
        createdAt: 1,
        updatedAt: 1,
      });
      await tx.insert(tables.grants).values({
        id: 'grant_b',
        applicationId: 'app',
        provider: 'nylas',
        email: 'b@migrate.test',
        createdAt: 1,
        updatedAt: 1,
      });
    });
    const store = createMailStore({ newId: sequentialIds('m'), clock: fixedClock('2026-03-02T15:00:00Z') });
    const copiesOf = async ({ raw, to }: (typeof CORPUS)[number]): Promise<NewMessage[]> => {
      const parsed = await parser.parse(raw);
      if (!parsed.ok) throw new Error(parsed.error);
      const grantId = (email: string) => (email.startsWith('a@') ? 'grant_a' : 'grant_b');
      return to.map((email) => ({
        applicationId: 'app',
        grantId: grantId(email),
        parsed: parsed.value,
        raw,
        rawHash: parsed.rawHash,
        folders: ['inbox'],
        unread: true,
        date: 1_772_460_000,
        envelopeFrom: 'x@example.com',
        envelopeTo: email,
        parseError: null,
      }));
    };
    // As the code of 0001's time stored mail: every raw message a blob.
    for (const entry of CORPUS) {
      const copies = await copiesOf(entry);
      await db.write((tx) => store.insertMany(tx, copies));
    }
    const before = await contents(db);
    expect(before.messages).toHaveLength(4);
    expect(before.folders).toHaveLength(4);
    expect(before.attachments).toHaveLength(2);
    expect(before.search).toHaveLength(2);

    // Back to the grants and applications tables 0001 knew; 0008, 0018, 0022, 0031 and 0033 add the columns again.
    await db.client.execute('ALTER TABLE grants DROP COLUMN sending_paused_at');
    await db.client.execute('ALTER TABLE grants DROP COLUMN sending_paused_reason');
    for (const column of ['oversight_mode', 'suspended_at', 'suspended_reason', 'credential_id'])
      await db.client.execute(`ALTER TABLE grants DROP COLUMN ${column}`);
    await db.client.execute('ALTER TABLE applications DROP COLUMN settings');
    await db.client.execute('ALTER TABLE applications DROP COLUMN test_clock_at');
    await migrate(db);
    expect(await contents(db)).toEqual(before);
    expect((await db.client.execute('PRAGMA foreign_key_check')).rows).toEqual([]);
    const schema = async (name: string) =>
      (await db.client.execute({ sql: 'SELECT sql FROM sqlite_schema WHERE name = ?', args: [name] }))
        .rows[0]![0] as string;
    for (const table of ['threads', 'thread_references', 'message_folders'])
      expect(await schema(table)).toMatch(/WITHOUT ROWID\s*$/);
    expect(await schema('messages')).toMatch(/`seq` integer PRIMARY KEY NOT NULL/);

    // New mail for one mailbox keeps its raw message in message_raw; deleting the message takes it along.
    const copies = asDelivery(
      await copiesOf({
        to: ['b@migrate.test'],
        raw: message(
          ['From: Gus <gus@example.com>', 'To: b@migrate.test', 'Subject: After', 'Message-ID: <m4@example.com>'],
          'After the migration',
        ),
      }),
    );
    const [fresh] = await db.write((tx) => store.insertMany(tx, copies));
    expect(fresh!.row.rawHash).toBeNull();
    expect((await loadRaw(db.orm, fresh!.row)).toString()).toContain('After the migration');
    const found = async () =>
      (await db.client.execute(`SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'migration'`)).rows.map((row) =>
        Number(row[0]),
      );
    expect(await found()).toEqual([fresh!.row.seq]);
    await db.write((tx) => store.destroy(tx, [fresh!.row]));
    // The rebuilt table has its full-text delete trigger again (dropping the old table dropped it).
    expect(await found()).toEqual([]);
    expect(await db.orm.select().from(tables.messageRaw).where(eq(tables.messageRaw.seq, fresh!.row.seq))).toEqual([]);
    expect(
      await db.orm.select().from(tables.messageFolders).where(eq(tables.messageFolders.messageId, fresh!.row.id)),
    ).toEqual([]);
    expect(await contents(db)).toEqual(before);
    await db.close();
  });

  it("0032 makes each grant's correspondents from the outbound ledger: every address with its first send", async () => {
    const db = await createDb({ url: `file:${join(dir.path, 'ledger.db')}` });
    await drizzleMigrate(db.orm, { migrationsFolder: firstMigrations(join(dir.path, 'before-0032'), 32) });
    const run = (statement: string) => db.client.execute(statement);
    await run(
      `INSERT INTO applications (id, name, plan, created_at, updated_at) VALUES ('app', 'ledger', 'trial', 1, 1)`,
    );
    for (const id of ['grant_a', 'grant_b'])
      await run(
        `INSERT INTO grants (id, application_id, provider, email, created_at, updated_at) VALUES ('${id}', 'app', 'nylas', '${id}@migrate.test', 1, 1)`,
      );
    const send = async (id: string, grant: string | null, at: number, to: string[]) => {
      await run(
        `INSERT INTO outbound_messages (id, application_id, grant_id, kind, header_message_id, envelope_from, raw_hash, raw_size, accepted_at, updated_at)
         VALUES ('${id}', 'app', ${grant === null ? 'NULL' : `'${grant}'`}, 'message', '${id}@x', 'x@migrate.test', 'h', 1, ${at}, ${at})`,
      );
      for (const email of to)
        await run(
          `INSERT INTO outbound_recipients (outbound_id, email, domain, route, status, updated_at) VALUES ('${id}', '${email}', 'example.com', 'remote', 'sent', ${at})`,
        );
    };
    await send('o1', 'grant_a', 2_000, ['ann@example.com', 'bob@example.com']);
    await send('o2', 'grant_a', 1_000, ['ann@example.com']);
    await send('o3', 'grant_b', 3_000, ['ann@example.com']);
    await send('o4', null, 4_000, ['cat@example.com']);
    await migrate(db);
    const rows = await db.orm
      .select()
      .from(tables.grantCorrespondents)
      .orderBy(asc(tables.grantCorrespondents.grantId), asc(tables.grantCorrespondents.email));
    expect(rows).toEqual([
      { grantId: 'grant_a', email: 'ann@example.com', firstAt: 1_000 },
      { grantId: 'grant_a', email: 'bob@example.com', firstAt: 2_000 },
      { grantId: 'grant_b', email: 'ann@example.com', firstAt: 3_000 },
    ]);
    // The key is the row: a known address costs no write.
    const made = await run(`SELECT sql FROM sqlite_schema WHERE name = 'grant_correspondents'`);
    expect(made.rows[0]![0]).toMatch(/WITHOUT ROWID\s*$/);
    await db.close();
  });

  it('a new file has pages of 16 KB; a file made with 4 KB pages keeps them and still takes mail', async () => {
    const pageSize = async (db: Database) => Number((await db.client.execute('PRAGMA page_size')).rows[0]![0]);
    const fresh = await createDb({ url: `file:${join(dir.path, 'fresh.db')}` });
    await migrate(fresh);
    expect(await pageSize(fresh)).toBe(PAGE_BYTES);
    expect(PAGE_BYTES).toBe(16_384);
    await fresh.close();

    // Made as before this page size: SQLite's 4 KB, in WAL.
    const path = join(dir.path, 'four-kb.db');
    const old = createClient({ url: `file:${path}` });
    await old.execute('PRAGMA page_size = 4096');
    await old.execute('PRAGMA journal_mode = WAL');
    await old.execute('CREATE TABLE kept (id integer primary key)');
    old.close();
    const reopened = await createDb({ url: `file:${path}` });
    await migrate(reopened);
    expect(await pageSize(reopened)).toBe(4096);
    await reopened.write(async (tx) => {
      await tx
        .insert(tables.applications)
        .values({ id: 'app', name: 'page size', plan: 'trial', createdAt: 1, updatedAt: 1 });
      await tx.insert(tables.grants).values({
        id: 'grant_a',
        applicationId: 'app',
        provider: 'nylas',
        email: 'a@migrate.test',
        createdAt: 1,
        updatedAt: 1,
      });
    });
    const store = createMailStore({ newId: sequentialIds('p'), clock: fixedClock('2026-03-02T15:00:00Z') });
    const parsed = await parser.parse(CORPUS[0]!.raw);
    if (!parsed.ok) throw new Error(parsed.error);
    const [stored] = await reopened.write((tx) =>
      store.insertMany(tx, [
        {
          applicationId: 'app',
          grantId: 'grant_a',
          parsed: parsed.value,
          raw: CORPUS[0]!.raw,
          rawHash: parsed.rawHash,
          folders: ['inbox'],
          unread: true,
          date: 1_772_460_000,
          envelopeFrom: null,
          envelopeTo: 'a@migrate.test',
          parseError: null,
        },
      ]),
    );
    expect((await loadRaw(reopened.orm, stored!.row)).equals(CORPUS[0]!.raw)).toBe(true);
    await reopened.close();
  });
});
