/**
 * @module storage/engine/mail-writer
 * The mail writer thread: stores inbound messages (blobs, thread, message, folder links, attachments, full-text
 * entry, `message.created` outbox event) for an embedded database on a worker thread (mail-writer-worker.ts)
 * with the native `libsql` driver and prepared statements, so the event loop spends nothing on SQL or fsync.
 *
 * Group commit: messages that arrive while a batch is being written go together in the next batch, one
 * transaction and one log sync for all of them; when one message fails, the others are stored without it. A write
 * resolves only after its COMMIT was synced (synchronous=FULL), so its caller may acknowledge the message.
 *
 * The lock: writes are handed to the thread as they come (those queued in one tick of the event loop in one message
 * between threads), and it goes from one transaction to the next without a round trip through the event loop.
 * Meanwhile it holds the process's write lock (`Database.exclusive`), so
 * `Database.write` on the event loop never meets it on SQLite's lock; as soon as such a write waits, no more mail
 * is handed over, the thread finishes what it has, the lock goes to the waiting write, and the mail that came
 * meanwhile waits for the next turn. If the thread dies, its connection goes with it (an open transaction is rolled
 * back); the messages it had not answered are then looked up, and those not stored fail; the next write starts a
 * new thread.
 *
 * A message comes either as rows ready to store (`write`) or raw (`writeRaw`): the thread then prepares it itself,
 * before BEGIN, with a module the caller names (`prepareModule`, src/mail/ingest-prepare.ts: parse and rows), or
 * declines it and the caller prepares it elsewhere. Storage never imports that module; it only loads it. Raw writes
 * that need not be durable (`durable: false`: a bulk load, such as a connected account's initial sync) are prepared
 * on a prepare thread of the writer's own (mail-prepare-worker.ts, started by the first of them), which hands them
 * to the writer thread over a channel of their own: parsing then runs beside the SQL instead of before it. The two
 * threads live and die together. Such writes also commit without syncing the log (see {@link MailWriteOptions}),
 * up to four times `maxBatch` to a transaction.
 *
 * The writer is plain functions over a small state made here: the batching under the write lock
 * (./mail-writer-lock.ts), the threads and their restarts (./mail-writer-threads.ts), the replies that settle writes
 * (./mail-writer-replies.ts), and what they share (./mail-writer-state.ts).
 */
import type { Worker } from 'node:worker_threads';
import { getTableColumns, getTableName, type Column, type Table } from 'drizzle-orm';
import type { Database } from '../db.js';
import { BLOB_CHUNK_BYTES } from '../repositories/blob-repository.js';
import { ruleEvaluations } from '../schema/admin.js';
import { imapMessages } from '../schema/connected.js';
import { jobs, outboxEvents } from '../schema/events.js';
import { attachments, messageFolders, messages, threadReferences, threads } from '../schema/mail.js';
import {
  MailWriteError,
  type MailRawOutcome,
  type MailRawGroupOutcome,
  type MailWriterOptions,
  type MailWriter,
} from './mail-writer-types.js';
import type { Pending, WriterState } from './mail-writer-state.js';
import { acquire, enqueue, pump } from './mail-writer-lock.js';
import { spawn } from './mail-writer-threads.js';

export { MailWriteError } from './mail-writer-types.js';
export type {
  MailWriteBlob,
  MailWriteCopy,
  MailWriteItem,
  DailyUsageIncrement,
  MailWriteResult,
  MailRawJob,
  MailRawGroup,
  MailWriteOptions,
  MailRawOutcome,
  MailRawGroupOutcome,
  MailPrepare,
  MailWriterOptions,
  MailWriter,
} from './mail-writer-types.js';

type Codec = 'plain' | 'json' | 'bool';
const CODECS: Record<string, Codec> = {
  SQLiteText: 'plain',
  SQLiteInteger: 'plain',
  SQLiteReal: 'plain',
  SQLiteNumeric: 'plain',
  SQLiteBlobBuffer: 'plain',
  SQLiteTextJson: 'json',
  SQLiteBlobJson: 'json',
  SQLiteBoolean: 'bool',
};

/** Column keys, SQL names and value encodings of a table, from its drizzle schema (so the thread follows it). */
function describeTable(table: Table) {
  const columns = Object.entries(getTableColumns(table)).map(([key, column]: [string, Column]) => {
    const codec = CODECS[column.columnType];
    if (!codec)
      throw new Error(
        `mail writer: column ${getTableName(table)}.${column.name} has type ${column.columnType}, which the writer thread cannot encode`,
      );
    return { key, name: column.name, codec };
  });
  return { name: getTableName(table), columns };
}

/** Creates the writer for the embedded database `db` (which must have a {@link Database.file}). The thread starts on first use. */
export function createMailWriter(db: Database, options: MailWriterOptions = {}): MailWriter {
  const file = db.file;
  if (!file)
    throw new Error('mail writer: the database is not an embedded file (use the mail store in a write transaction)');
  const batchTimeoutMs = options.batchTimeoutMs ?? 60_000;
  const workerData = {
    file,
    prepareModule: options.prepareModule?.href,
    busyTimeoutMs: options.busyTimeoutMs ?? 5_000,
    maxBatch: options.maxBatch ?? 64,
    maxBatchBytes: options.maxBatchBytes ?? 32 * 1024 * 1024,
    chunkBytes: BLOB_CHUNK_BYTES,
    tables: {
      messages: describeTable(messages),
      threads: describeTable(threads),
      threadReferences: describeTable(threadReferences),
      attachments: describeTable(attachments),
      messageFolders: describeTable(messageFolders),
      outboxEvents: describeTable(outboxEvents),
      jobs: describeTable(jobs),
      ruleEvaluations: describeTable(ruleEvaluations),
      imapMessages: describeTable(imapMessages),
    },
  };

  const state: WriterState = {
    db,
    options,
    batchTimeoutMs,
    workerData,
    pending: [],
    outstanding: new Map<number, Pending>(),
    nextEntry: 1,
    worker: undefined,
    session: undefined,
    acquiring: false,
    watchdog: undefined,
    closed: false,
    idle: undefined,
    exitReasons: new WeakMap<Worker, string>(),
    ready: new WeakSet<Worker>(),
    warming: new Map<Worker, (() => void)[]>(),
    preparers: new WeakMap<Worker, Worker>(),
    pumpDue: false,
    pump: () => pump(state),
    acquire: () => acquire(state),
  };

  return {
    async write(item, writeOptions) {
      const outcome = await enqueue<MailRawOutcome>(
        state,
        { kind: 'item', item, ...(writeOptions?.durable === false ? { durable: false as const } : {}) },
        [item.copies.map((copy) => copy.message.id)],
      );
      if (!outcome.prepared) throw new MailWriteError('the mail writer declined a prepared message');
      return outcome.results;
    },
    prepares: options.prepareModule !== undefined,
    warm() {
      if (state.closed) return Promise.resolve();
      const thread = (state.worker ??= spawn(state));
      if (state.ready.has(thread)) return Promise.resolve();
      return new Promise<void>((resolve) => state.warming.set(thread, [...(state.warming.get(thread) ?? []), resolve]));
    },
    writeRaw(job) {
      if (!options.prepareModule)
        return Promise.reject(
          new MailWriteError('the mail writer has no prepare module (MailWriterOptions.prepareModule)'),
        );
      // A copy in its own buffer, handed over without another: the caller keeps its bytes.
      return enqueue<MailRawOutcome>(
        state,
        {
          kind: 'raw',
          raw: new Uint8Array(job.raw),
          meta: job.meta,
          ...(job.durable === false ? { durable: false as const } : {}),
        },
        [job.messageIds],
      );
    },
    writeRawGroup(group) {
      if (!options.prepareModule)
        return Promise.reject(
          new MailWriteError('the mail writer has no prepare module (MailWriterOptions.prepareModule)'),
        );
      if (group.raws.length === 0) return Promise.resolve([]);
      // Moved when a buffer of its own (a copy of 6 KB messages cost the event loop a tenth of its time in a sync).
      // A buffer given twice is moved once (a buffer moved is gone from here: the second would not reach the thread).
      const moved = new Set<ArrayBufferLike>();
      const raws = group.raws.map((raw) => {
        const whole =
          raw.buffer instanceof ArrayBuffer &&
          raw.byteOffset === 0 &&
          raw.byteLength === raw.buffer.byteLength &&
          !moved.has(raw.buffer);
        if (!whole) return new Uint8Array(raw);
        moved.add(raw.buffer);
        return raw;
      });
      return enqueue<MailRawGroupOutcome[]>(
        state,
        { kind: 'raws', raws, metas: group.metas, durable: false },
        group.messageIds,
      );
    },
    async terminate() {
      await state.worker?.terminate();
    },
    async close() {
      state.closed = true;
      if (state.session || state.acquiring || state.pending.length > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, batchTimeoutMs);
          timer.unref();
          state.idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const thread = state.worker;
      state.worker = undefined;
      if (thread) await thread.terminate();
    },
  };
}
