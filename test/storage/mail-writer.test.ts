/**
 * The mail writer thread (storage/engine/mail-writer.ts): it must store exactly what the mail store's transaction on the
 * event loop stores (threads, aggregates, references, folders, attachments, search, outbox events), isolate a
 * message that fails from the others of its batch, survive the death of its thread mid-batch without leaving half
 * a message or a held lock, and share the write lock with `db.write` without deadlock.
 */
import { join } from 'node:path';
import { asc, count, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDb,
  createMailWriter,
  migrate,
  MailWriteError,
  tables,
  type Database,
  type MailWriteItem,
} from '../../storage/index.js';
import { INGEST_PREPARE_MODULE } from '../../src/mail/inbound.js';
import { createMimeParser } from '../../src/mime/parse-inbound.js';
import { createMailStore, type NewMessage } from '../../src/messages/index.js';
import { asDelivery } from '../../src/messages/mail-rows.js';
import { fixedClock, sequentialIds } from '../helpers/clock.js';
import { tempDir } from '../helpers/service.js';
import { storedCounts, writeLockProbe } from '../helpers/store.js';

const GRANTS = [
  { id: 'grant_a', email: 'a@writer.test' },
  { id: 'grant_b', email: 'b@writer.test' },
];

/** Raw messages that exercise threading: replies, a References chain inside one batch, several mailboxes. */
function corpus(): { raw: string; to: string[] }[] {
  const message = (headers: string[], body: string) => `${headers.join('\r\n')}\r\n\r\n${body}\r\n`;
  return [
    {
      to: ['a@writer.test'],
      raw: message(
        [
          'From: Ann <ann@example.com>',
          'To: a@writer.test',
          'Subject: Plans',
          'Message-ID: <m1@example.com>',
          'Date: Mon, 02 Mar 2026 10:00:00 +0000',
        ],
        'First words about plans',
      ),
    },
    {
      to: ['a@writer.test'],
      raw: message(
        [
          'From: Bob <bob@example.com>',
          'To: a@writer.test',
          'Cc: Carol <carol@example.com>',
          'Subject: Re: Plans',
          'Message-ID: <m2@example.com>',
          'In-Reply-To: <m1@example.com>',
          'Date: Mon, 02 Mar 2026 11:00:00 +0000',
        ],
        'A reply about plans',
      ),
    },
    {
      to: ['a@writer.test'],
      raw: message(
        [
          'From: Dan <dan@example.com>',
          'To: a@writer.test',
          'Subject: Unrelated',
          'Message-ID: <m3@example.com>',
          'Date: Mon, 02 Mar 2026 09:00:00 +0000',
        ],
        'Something else entirely',
      ),
    },
    {
      to: ['a@writer.test'],
      raw: message(
        [
          'From: Eve <eve@example.com>',
          'To: a@writer.test',
          'Subject: Re: Re: Plans',
          'Message-ID: <m4@example.com>',
          'References: <m1@example.com> <m2@example.com>',
          'Date: Mon, 02 Mar 2026 12:00:00 +0000',
        ],
        'Joining by References',
      ),
    },
    {
      to: ['a@writer.test', 'b@writer.test'],
      raw: message(
        [
          'From: Fay <fay@example.com>',
          'To: a@writer.test, b@writer.test',
          'Subject: Report',
          'Message-ID: <m5@example.com>',
          'Date: Mon, 02 Mar 2026 13:00:00 +0000',
          'Content-Type: multipart/mixed; boundary=x',
        ],
        [
          '--x',
          'Content-Type: text/plain',
          '',
          'See the attached report',
          '--x',
          'Content-Type: text/csv; name=report.csv',
          'Content-Disposition: attachment; filename=report.csv',
          '',
          'a,b\r\n1,2',
          '--x--',
        ].join('\r\n'),
      ),
    },
    {
      to: ['b@writer.test'],
      raw: message(
        [
          'From: Gus <gus@example.com>',
          'To: b@writer.test',
          'Subject: Re: Report',
          'Message-ID: <m6@example.com>',
          'In-Reply-To: <m5@example.com>',
          'Date: Mon, 02 Mar 2026 14:00:00 +0000',
        ],
        'Thanks for the report',
      ),
    },
  ];
}

async function openDatabase(path: string): Promise<Database> {
  const db = await createDb({ url: `file:${path}` });
  await migrate(db);
  await db.write(async (tx) => {
    await tx
      .insert(tables.applications)
      .values({ id: 'app', name: 'writer test', plan: 'trial', createdAt: 1, updatedAt: 1 });
    for (const grant of GRANTS)
      await tx.insert(tables.grants).values({
        id: grant.id,
        applicationId: 'app',
        provider: 'nylas',
        email: grant.email,
        createdAt: 1,
        updatedAt: 1,
      });
  });
  return db;
}

/**
 * Everything stored, with generated ids replaced by stable labels (a message by its subject and mailbox, a thread
 * by its messages), so two stores of the same mail compare equal whatever ids they drew.
 */
async function snapshot(db: Database) {
  const messages = await db.orm.select().from(tables.messages).orderBy(asc(tables.messages.seq));
  const label = new Map(messages.map((row) => [row.id, `${row.grantId}:${row.subject}`]));
  const threadLabel = new Map<string, string>();
  for (const row of messages)
    threadLabel.set(row.threadId, [threadLabel.get(row.threadId), label.get(row.id)].filter(Boolean).join(' + '));
  const ofThread = (id: string) => threadLabel.get(id) ?? `unknown thread ${id}`;
  const threads = await db.orm.select().from(tables.threads);
  const references = await db.orm.select().from(tables.threadReferences);
  const folders = await db.orm.select().from(tables.messageFolders);
  const attachments = await db.orm.select().from(tables.attachments);
  const blobs = await db.orm.select().from(tables.blobs);
  const chunks = await db.orm
    .select({ hash: tables.blobChunks.hash, seq: tables.blobChunks.seq, data: tables.blobChunks.data })
    .from(tables.blobChunks);
  const raws = await db.orm.select().from(tables.messageRaw).orderBy(asc(tables.messageRaw.seq));
  const events = await db.orm.select().from(tables.outboxEvents).orderBy(asc(tables.outboxEvents.seq));
  const search = async (query: string) =>
    (
      await db.client.execute({
        sql: 'SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid',
        args: [query],
      })
    ).rows.map((row) => label.get(messages.find((message) => message.seq === Number(row[0]))?.id ?? ''));
  const byText = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));
  return {
    messages: messages.map(({ id, threadId, ...row }) => ({ ...row, id: label.get(id), thread: ofThread(threadId) })),
    threads: threads
      .map(({ id, latestMessageId, ...row }) => ({
        ...row,
        id: ofThread(id),
        latestMessageId: label.get(latestMessageId),
      }))
      .sort(byText),
    references: references.map((row) => ({ ...row, threadId: ofThread(row.threadId) })).sort(byText),
    folders: folders.map((row) => ({ ...row, messageId: label.get(row.messageId) })).sort(byText),
    attachments: attachments
      .map(({ id, ...row }) => ({ ...row, id: typeof id, messageId: label.get(row.messageId) }))
      .sort(byText),
    blobs: blobs.sort(byText),
    chunks: chunks.map((row) => ({ ...row, data: Buffer.from(row.data).toString('base64') })).sort(byText),
    raws: raws.map((row) => ({
      message: label.get(messages.find((message) => message.seq === row.seq)?.id ?? ''),
      data: Buffer.from(row.data).toString('base64'),
    })),
    events: events.map(({ seq, id, objectId, payload, ...row }) => {
      const object = payload as { id: string; thread_id: string; attachments: { id: string }[] };
      return {
        ...row,
        id: typeof id,
        objectId: label.get(objectId ?? ''),
        payload: {
          ...object,
          id: label.get(object.id),
          thread_id: ofThread(object.thread_id),
          attachments: object.attachments.map((attachment) => ({ ...attachment, id: typeof attachment.id })),
        },
      };
    }),
    search: { plans: await search('plans'), report: await search('report'), fay: await search('fay') },
  };
}

/** The copies of a message as a raw write's meta carries them: without what the thread makes from the bytes. */
const shellsOf = (copies: NewMessage[]) =>
  copies.map(({ parsed: _parsed, raw: _raw, rawHash: _hash, ...shell }) => shell);

/** A prepare module that is the real one, except that a message holding CRASH-THE-PREPARE-THREAD ends its thread. */
const CRASHING_PREPARE = new URL('../fixtures/modules/crashing-prepare.ts', import.meta.url);

describe('mail writer thread', () => {
  const dir = tempDir();
  const parser = createMimeParser({ workers: 2 });
  const clock = fixedClock('2026-03-02T15:00:00Z');
  let inputs: NewMessage[][];

  beforeAll(async () => {
    inputs = [];
    for (const { raw, to } of corpus()) {
      const bytes = Buffer.from(raw);
      const parsed = await parser.parse(bytes);
      if (!parsed.ok) throw new Error(parsed.error);
      // As the inbound path stores them: the raw message of a one-copy delivery inline, the others as blobs.
      inputs.push(
        asDelivery(
          to.map((recipient) => ({
            applicationId: 'app',
            grantId: GRANTS.find((grant) => grant.email === recipient)!.id,
            parsed: parsed.value,
            raw: bytes,
            rawHash: parsed.rawHash,
            folders: ['inbox'],
            unread: true,
            date: 1_772_460_000,
            envelopeFrom: 'sender@example.com',
            envelopeTo: recipient,
            parseError: null,
          })),
        ),
      );
    }
  });
  afterAll(async () => {
    await parser.close();
    dir.remove();
  });

  /** A database holding the corpus (but the copies `skip` leaves out) as the mail store on the event loop stores it. */
  async function referenceDatabase(name: string, skip: (index: number) => boolean = () => false) {
    const reference = await openDatabase(join(dir.path, name));
    const store = createMailStore({ newId: sequentialIds('ref'), clock });
    for (const [index, copies] of inputs.entries())
      if (!skip(index)) await reference.write((tx) => store.insertMany(tx, copies));
    return reference;
  }

  /**
   * A writer on a new database whose prepare thread dies on a poisoned message ({@link CRASHING_PREPARE}), the
   * reference store of the corpus, the reasons the writer's threads stopped, ids named `name`, a store for what the
   * fast path declines, and the time the rows take.
   */
  async function crashingWriter(name: string) {
    const reference = await referenceDatabase(`reference-${name}.db`);
    const db = await openDatabase(join(dir.path, `${name}-prepared.db`));
    const exits: string[] = [];
    const writer = createMailWriter(db, { prepareModule: CRASHING_PREPARE, onExit: (reason) => exits.push(reason) });
    const fallback = createMailStore({ newId: sequentialIds(`${name}-pool`), clock });
    return {
      reference,
      db,
      writer,
      exits,
      ids: sequentialIds(name),
      fallback,
      at: Math.floor(clock.now().getTime() / 1000),
    };
  }

  it('stores exactly what the mail store stores in a transaction on the event loop', async () => {
    const reference = await referenceDatabase('reference.db');

    const threaded = await openDatabase(join(dir.path, 'threaded.db'));
    const writer = createMailWriter(threaded);
    const items = createMailStore({ newId: sequentialIds('thr'), clock });
    // All at once: the writer batches them, and later messages of a batch must see the threads of earlier ones.
    const results = await Promise.all(inputs.map((copies) => writer.write(items.toWriteItem(copies))));
    expect(results.map((copies) => copies.length)).toEqual(inputs.map((copies) => copies.length));

    const expected = await snapshot(reference);
    const actual = await snapshot(threaded);
    expect(actual).toEqual(expected);
    // The scenario did exercise threading: one thread of three messages, the multi-mailbox message in two mailboxes.
    expect(expected.threads.map((thread) => thread.messageCount).sort()).toEqual([1, 1, 2, 3]);
    // Raw messages: the five one-copy deliveries inline (no blob), the message for two mailboxes one blob for both.
    expect(actual.raws.map((row) => row.message)).toEqual(
      actual.messages.filter((row) => row.rawHash === null).map((row) => row.id),
    );
    expect(actual.raws).toHaveLength(5);
    expect(actual.messages.filter((row) => row.rawHash !== null).map((row) => row.id)).toEqual([
      'grant_a:Report',
      'grant_b:Report',
    ]);
    expect(actual.blobs.map((blob) => blob.hash)).toContain(
      actual.messages.find((row) => row.rawHash !== null)!.rawHash,
    );
    // What the writer reports matches what it stored.
    const stored = await threaded.orm
      .select({ id: tables.messages.id, threadId: tables.messages.threadId, seq: tables.messages.seq })
      .from(tables.messages);
    expect(results.flat().sort((a, b) => a.seq - b.seq)).toEqual(
      stored.sort((a, b) => a.seq - b.seq).map((row) => ({ messageId: row.id, threadId: row.threadId, seq: row.seq })),
    );

    await writer.close();
    void reference.close();
    void threaded.close();
  });

  it('writes that need not be durable (a bulk load), mixed with durable ones, store the same rows; mail of the past records no message.created', async () => {
    // The mail of the first half is of a connected account's past: no event, as the mail store on the event loop does it.
    const quiet = (index: number) => index < inputs.length / 2;
    const marked = inputs.map((copies, index) => copies.map((copy) => ({ ...copy, history: quiet(index) })));
    const reference = await openDatabase(join(dir.path, 'bulk-reference.db'));
    const store = createMailStore({ newId: sequentialIds('ref'), clock });
    for (const copies of marked) await reference.write((tx) => store.insertMany(tx, copies));

    const bulk = await openDatabase(join(dir.path, 'bulk.db'));
    const writer = createMailWriter(bulk, { maxBatch: 2 });
    const items = createMailStore({ newId: sequentialIds('blk'), clock });
    // All at once, bulk and durable writes interleaved: batches of bulk writes grow past maxBatch, durable ones do not.
    const results = await Promise.all(
      marked.map((copies, index) =>
        writer.write(items.toWriteItem(copies), { durable: index % 2 === 0 ? false : true }),
      ),
    );
    expect(results.map((copies) => copies.length)).toEqual(marked.map((copies) => copies.length));
    const expected = await snapshot(reference);
    const actual = await snapshot(bulk);
    expect(actual).toEqual(expected);
    const quietCopies = marked.filter((_, index) => quiet(index)).flat().length;
    expect(actual.events).toHaveLength(actual.messages.length - quietCopies);
    expect(quietCopies).toBeGreaterThan(0);
    await writer.close();
    void reference.close();
    void bulk.close();
  });

  it('fails only the message whose write fails; the rest of its batch commits, nothing of the failed one stays', async () => {
    const db = await openDatabase(join(dir.path, 'isolation.db'));
    // A fault half-way through one message (after its blobs, thread and row are written): its outbox event is refused.
    await db.write((tx) =>
      tx.run(
        sql.raw(
          `CREATE TRIGGER refuse_poison BEFORE INSERT ON outbox_events WHEN NEW.payload LIKE '%Unrelated%' BEGIN SELECT RAISE(ABORT, 'refused (injected)'); END`,
        ),
      ),
    );
    const writer = createMailWriter(db);
    const store = createMailStore({ newId: sequentialIds('iso'), clock });
    const outcomes = await Promise.allSettled(inputs.map((copies) => writer.write(store.toWriteItem(copies))));
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    const failure = (outcomes[2] as PromiseRejectedResult).reason as Error;
    expect(failure).toBeInstanceOf(MailWriteError);
    expect(failure.message).toContain('refused (injected)');

    // Same as storing the corpus without the failed message.
    const reference = await referenceDatabase('isolation-reference.db', (index) => index === 2);
    expect(await storedCounts(db)).toEqual(await storedCounts(reference));
    expect((await snapshot(db)).messages.map((message) => message.id)).not.toContain('grant_a:Unrelated');

    await writer.close();
    void db.close();
    void reference.close();
  });

  it('when its thread dies mid-batch, the batch fails, nothing of it stays, the lock is free and the next write works', async () => {
    const path = join(dir.path, 'killed.db');
    const db = await openDatabase(path);
    // A message whose outbox insert (its last statement, after its blobs, thread and row) takes most of a second:
    // the thread is stopped while it runs (a thread stops at its next instruction of JavaScript), before COMMIT.
    await db.write(async (tx) => {
      await tx.run(sql.raw('CREATE TABLE slow_rows (x INTEGER)'));
      await tx.run(
        sql.raw(
          'INSERT INTO slow_rows WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) SELECT i FROM n',
        ),
      );
      await tx.run(
        sql.raw(
          `CREATE TRIGGER slow_store BEFORE INSERT ON outbox_events WHEN NEW.payload LIKE '%Unrelated%' BEGIN SELECT count(*) FROM slow_rows a, slow_rows b, slow_rows c WHERE a.x + b.x + c.x > 0; END`,
        ),
      );
    });
    const before = await storedCounts(db);
    const exits: string[] = [];
    const writer = createMailWriter(db, { onExit: (reason) => exits.push(reason) });
    const store = createMailStore({ newId: sequentialIds('kill'), clock });
    const pending = writer.write(store.toWriteItem(inputs[2]!)).then(
      () => 'stored',
      (error: unknown) => error,
    );

    // Another connection sees the write lock taken: the thread is inside its transaction.
    const lock = writeLockProbe(path);
    await lock.untilHeld();
    await writer.terminate();

    const outcome = await pending;
    expect(outcome).toBeInstanceOf(MailWriteError);
    expect((outcome as Error).message).toMatch(/thread stopped/);
    // The owner is told, once (src/health.ts logs and counts it).
    expect(exits).toEqual([expect.stringMatching(/exit code 1/)]);
    expect(await storedCounts(db)).toEqual(before);
    expect(lock.held()).toBe(false);
    lock.close();

    // A new thread takes over; db.write is not blocked either.
    const [stored] = await writer.write(store.toWriteItem(inputs[0]!));
    expect(stored!.messageId).toMatch(/^kill_/);
    await db.write((tx) => tx.update(tables.messages).set({ starred: true }));
    expect(await storedCounts(db)).toEqual({
      ...before,
      messages: 1,
      threads: 1,
      references: 1,
      folders: 1,
      raws: 1,
      events: 1,
      fts: 1,
    });

    await writer.close();
    expect(exits).toHaveLength(1);
    void db.close();
  });

  it('shares the write lock with db.write: interleaved, both make progress and neither fails', async () => {
    const db = await openDatabase(join(dir.path, 'shared.db'));
    const writer = createMailWriter(db);
    const store = createMailStore({ newId: sequentialIds('mix'), clock });
    const writes: Promise<unknown>[] = [];
    for (let round = 0; round < 40; round++) {
      writes.push(writer.write(store.toWriteItem(inputs[round % inputs.length]!)));
      writes.push(
        db.write((tx) =>
          tx
            .insert(tables.applications)
            .values({ id: `app_${round}`, name: `app ${round}`, plan: 'trial', createdAt: 1, updatedAt: 1 }),
        ),
      );
    }
    const outcomes = await Promise.allSettled(writes);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    const [messages] = await db.orm.select({ n: count() }).from(tables.messages);
    const [applications] = await db.orm.select({ n: count() }).from(tables.applications);
    expect(messages!.n).toBe(
      inputs.slice(0, 40 % inputs.length).reduce((sum, copies) => sum + copies.length, 0) +
        Math.floor(40 / inputs.length) * inputs.flat().length,
    );
    expect(applications!.n).toBe(41);
    await writer.close();
    void db.close();
  });

  it('takes new mail without giving up the lock, but lets a waiting db.write in before mail that came after it', async () => {
    const db = await openDatabase(join(dir.path, 'fair.db'));
    const writer = createMailWriter(db);
    const store = createMailStore({ newId: sequentialIds('fair'), clock });
    const order: string[] = [];
    const mail = (label: string, round: number) =>
      writer.write(store.toWriteItem(inputs[round % inputs.length]!)).then(() => order.push(label));
    const early = Array.from({ length: 12 }, (_, round) => mail('early', round));
    // Mail keeps coming while a write of the event loop waits for the lock.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const waiting = db
      .write((tx) =>
        tx
          .insert(tables.applications)
          .values({ id: 'app_fair', name: 'fair', plan: 'trial', createdAt: 1, updatedAt: 1 }),
      )
      .then(() => order.push('db.write'));
    expect(db.lockWaiters()).toBeGreaterThan(0);
    const late = Array.from({ length: 12 }, (_, round) => mail('late', round));
    await Promise.all([...early, waiting, ...late]);
    // Mail sent after the db.write started waiting is stored after it: the thread does not keep the lock from it.
    expect(order.indexOf('db.write')).toBeGreaterThanOrEqual(0);
    expect(order.slice(0, order.indexOf('db.write'))).not.toContain('late');
    expect(order.filter((label) => label === 'late')).toHaveLength(12);
    expect(db.lockWaiters()).toBe(0);
    await writer.close();
    void db.close();
  });

  it('prepares simple messages on its own thread, storing what the event-loop store stores, and declines the others', async () => {
    const reference = await referenceDatabase('reference-raw.db');

    const prepared = await openDatabase(join(dir.path, 'prepared.db'));
    const writer = createMailWriter(prepared, { prepareModule: INGEST_PREPARE_MODULE });
    expect(writer.prepares).toBe(true);
    const ids = sequentialIds('raw');
    const fallback = createMailStore({ newId: sequentialIds('pool'), clock });
    const outcomes: boolean[] = [];
    for (const copies of inputs) {
      const shells = shellsOf(copies);
      const rowIds = copies.flatMap(() => [ids(), ids(), ids()]);
      const outcome = await writer.writeRaw({
        raw: copies[0]!.raw,
        meta: { copies: shells, ids: rowIds, at: Math.floor(clock.now().getTime() / 1000) },
        messageIds: rowIds.filter((_, index) => index % 3 === 0),
      });
      outcomes.push(outcome.prepared);
      if (outcome.prepared) {
        // What it reports: the ids it was given, and the sender for the follow-up (contacts).
        expect(outcome.results.map((result) => result.messageId)).toEqual(rowIds.filter((_, index) => index % 3 === 0));
        expect(outcome.summary).toEqual({ from: copies[0]!.parsed.from });
      } else {
        await writer.write(fallback.toWriteItem(copies));
      }
    }
    // Only the multipart message with an attachment needs the parser pool.
    expect(outcomes).toEqual([true, true, true, true, false, true]);
    expect(await snapshot(prepared)).toEqual(await snapshot(reference));

    // A writer without a prepare module refuses raw messages instead of storing them unparsed.
    const plain = createMailWriter(prepared);
    expect(plain.prepares).toBe(false);
    await expect(plain.writeRaw({ raw: inputs[0]![0]!.raw, meta: {}, messageIds: ['x'] })).rejects.toBeInstanceOf(
      MailWriteError,
    );
    await plain.close();
    await writer.close();
    void reference.close();
    void prepared.close();
  });

  it('prepares writes that need not be durable on a prepare thread of its own, storing the same; when that thread stops, its writes fail and the next write works', async () => {
    const { reference, db: prepared, writer, exits, ids, fallback, at } = await crashingWriter('bulk');
    const rawWrite = (raw: Buffer, copies: NewMessage[]) => {
      const shells = shellsOf(copies);
      const rowIds = copies.flatMap(() => [ids(), ids(), ids()]);
      const messageIds = rowIds.filter((_, index) => index % 3 === 0);
      return {
        messageIds,
        job: writer.writeRaw({ raw, meta: { copies: shells, ids: rowIds, at }, messageIds, durable: false }),
      };
    };
    // In order (the snapshot compares the order of storage too); the message the fast path declines is stored as
    // the inbound path would, from the parser pool.
    const outcomes: boolean[] = [];
    for (const copies of inputs) {
      const write = rawWrite(copies[0]!.raw, copies);
      const outcome = await write.job;
      outcomes.push(outcome.prepared);
      if (outcome.prepared) expect(outcome.results.map((result) => result.messageId)).toEqual(write.messageIds);
      else await writer.write(fallback.toWriteItem(copies));
    }
    expect(outcomes).toEqual([true, true, true, true, false, true]);
    expect(await snapshot(prepared)).toEqual(await snapshot(reference));

    // The prepare thread dies on a message: that write fails, the writer thread is started again with it.
    const before = await storedCounts(prepared);
    const poison = Buffer.from(
      inputs[0]![0]!.raw.toString().replace('Subject: ', 'Subject: CRASH-THE-PREPARE-THREAD '),
    );
    await expect(rawWrite(poison, inputs[0]!).job).rejects.toBeInstanceOf(MailWriteError);
    expect(exits.some((reason) => reason.includes('its prepare thread stopped'))).toBe(true);
    expect(await storedCounts(prepared)).toEqual(before);
    // And the writer goes on: a durable write, and another bulk one on a new prepare thread.
    await writer.write(fallback.toWriteItem(inputs[1]!));
    expect((await rawWrite(inputs[3]![0]!.raw, inputs[3]!).job).prepared).toBe(true);
    expect((await storedCounts(prepared)).messages).toBe(before.messages + inputs[1]!.length + inputs[3]!.length);
    await writer.close();
    void reference.close();
    void prepared.close();
  });

  it('stores a group of raw messages handed over together, each answered on its own (stored, declined with its bytes, failed), whole buffers moved and views copied; a group whose prepare thread stops fails whole, and the writer goes on', async () => {
    const { reference, db: grouped, writer, exits, ids, fallback, at } = await crashingWriter('group');
    const groupOf = (messages: { raw: Uint8Array; copies: NewMessage[]; rowIds?: string[] }[]) => {
      const rowIds = messages.map(({ copies, rowIds }) => rowIds ?? copies.flatMap(() => [ids(), ids(), ids()]));
      const metas = messages.map(({ copies }, index) => ({ copies: shellsOf(copies), ids: rowIds[index], at }));
      const messageIds = rowIds.map((row) => row.filter((_, index) => index % 3 === 0));
      return {
        messageIds,
        rowIds,
        outcomes: writer.writeRawGroup({ raws: messages.map(({ raw }) => raw), metas, messageIds }),
      };
    };
    // The first five together (the fifth, with an attachment, is declined and stored from the parser pool), then the
    // last alone: the same rows, in the same order, as the reference.
    // Each in a buffer of its own but the second, a view of a larger one (as Node's small Buffers are).
    const owned = inputs.slice(0, 5).map((copies) => new Uint8Array(copies[0]!.raw));
    const wider = new Uint8Array(owned[1]!.byteLength + 16);
    wider.set(owned[1]!, 8);
    owned[1] = wider.subarray(8, 8 + owned[1]!.byteLength);
    const first = groupOf(inputs.slice(0, 5).map((copies, index) => ({ raw: owned[index]!, copies })));
    const outcomes = await first.outcomes;
    expect(outcomes.map((outcome) => outcome.prepared && !('failed' in outcome))).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    // Whole buffers were moved to the thread (they read as empty now), the view was copied (the larger buffer is
    // whole), and the declined message's bytes came back.
    expect(owned.map((raw) => raw.byteLength)).toEqual([0, inputs[1]![0]!.raw.byteLength, 0, 0, 0]);
    expect(Buffer.from(owned[1])).toEqual(inputs[1]![0]!.raw);
    const declined = outcomes[4]!;
    expect(!declined.prepared && Buffer.from(declined.raw)).toEqual(inputs[4]![0]!.raw);
    outcomes.forEach((outcome, index) => {
      if (!outcome.prepared || !('results' in outcome)) return;
      expect(outcome.results.map((result) => result.messageId)).toEqual(first.messageIds[index]);
      // No summary comes back for a group's messages (nothing asks for it).
      expect(outcome.summary).toBeUndefined();
    });
    await writer.write(fallback.toWriteItem(inputs[4]!));
    const last = await groupOf([{ raw: inputs[5]![0]!.raw, copies: inputs[5]! }]).outcomes;
    expect(last.map((outcome) => outcome.prepared)).toEqual([true]);
    expect(await snapshot(grouped)).toEqual(await snapshot(reference));

    // A message that cannot be stored (its ids are taken) fails alone; the others of its group are stored, the
    // same buffer given twice among them (moved once, copied once).
    const before = await storedCounts(grouped);
    const twice = new Uint8Array(inputs[1]![0]!.raw);
    const mixed = await groupOf([
      { raw: inputs[0]![0]!.raw, copies: inputs[0]!, rowIds: first.rowIds[0]! },
      { raw: twice, copies: inputs[1]! },
      { raw: twice, copies: inputs[1]! },
    ]).outcomes;
    expect('failed' in mixed[0]! && mixed[0].failed).toBeInstanceOf(MailWriteError);
    expect(mixed.slice(1).map((outcome) => outcome.prepared && !('failed' in outcome))).toEqual([true, true]);
    expect((await storedCounts(grouped)).messages).toBe(before.messages + 2 * inputs[1]!.length);

    // The prepare thread dies on a message of a group: every message of it fails (none was stored), and the next
    // group is stored on a new thread.
    const poison = Buffer.from(
      inputs[0]![0]!.raw.toString().replace('Subject: ', 'Subject: CRASH-THE-PREPARE-THREAD '),
    );
    const counted = await storedCounts(grouped);
    const crashed = await groupOf([
      { raw: inputs[3]![0]!.raw, copies: inputs[3]! },
      { raw: poison, copies: inputs[0]! },
    ]).outcomes;
    expect(crashed.map((outcome) => 'failed' in outcome && outcome.failed instanceof MailWriteError)).toEqual([
      true,
      true,
    ]);
    expect(exits.some((reason) => reason.includes('its prepare thread stopped'))).toBe(true);
    expect(await storedCounts(grouped)).toEqual(counted);
    const after = await groupOf([{ raw: inputs[3]![0]!.raw, copies: inputs[3]! }]).outcomes;
    expect(after.map((outcome) => outcome.prepared && !('failed' in outcome))).toEqual([true]);
    expect((await storedCounts(grouped)).messages).toBe(counted.messages + inputs[3]!.length);
    await writer.close();
    void reference.close();
    void grouped.close();
  });

  it('starts its thread when warmed, before any write: warm resolves once it loaded, even while db.write holds the lock', async () => {
    const db = await openDatabase(join(dir.path, 'warm.db'));
    const writer = createMailWriter(db, { prepareModule: INGEST_PREPARE_MODULE });
    const ids = sequentialIds('warm');
    let warmed = false;
    // Loading takes no lock: the thread is ready while the event loop's transaction still holds it.
    await db.write(async () => {
      await writer.warm();
      warmed = true;
    });
    expect(warmed).toBe(true);
    // Again: the same thread, already loaded.
    await writer.warm();
    // Writes queued in one tick go to the thread together; each is answered on its own.
    const simple = inputs.filter((copies) => copies.length === 1);
    const outcomes = await Promise.all(
      simple.map((copies) => {
        const shells = shellsOf(copies);
        const rowIds = copies.flatMap(() => [ids(), ids(), ids()]);
        return writer.writeRaw({
          raw: copies[0]!.raw,
          meta: { copies: shells, ids: rowIds, at: Math.floor(clock.now().getTime() / 1000) },
          messageIds: rowIds.filter((_, index) => index % 3 === 0),
        });
      }),
    );
    expect(outcomes.map((outcome) => outcome.prepared)).toEqual(simple.map(() => true));
    const [messages] = await db.orm.select({ n: count() }).from(tables.messages);
    expect(messages!.n).toBe(simple.length);
    await writer.close();
    // A closed writer starts nothing, and says so at once.
    await writer.warm();
    await expect(writer.writeRaw({ raw: simple[0]![0]!.raw, meta: {}, messageIds: ['x'] })).rejects.toBeInstanceOf(
      MailWriteError,
    );
    void db.close();
  });

  it('rejects writes after close', async () => {
    const db = await openDatabase(join(dir.path, 'closed.db'));
    const writer = createMailWriter(db);
    await writer.close();
    const item: MailWriteItem = createMailStore({ newId: sequentialIds('closed'), clock }).toWriteItem(inputs[0]!);
    await expect(writer.write(item)).rejects.toBeInstanceOf(MailWriteError);
    void db.close();
  });
});
