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
 */
import { MessageChannel, type Worker } from 'node:worker_threads';
import { getTableColumns, getTableName, inArray, type Column, type Table } from 'drizzle-orm';
import type { Database } from '../db.js';
import { BLOB_CHUNK_BYTES } from '../repositories/blob-repository.js';
import { ruleEvaluations } from '../schema/admin.js';
import { imapMessages } from '../schema/connected.js';
import { jobs, outboxEvents } from '../schema/events.js';
import { attachments, messageFolders, messages, threadReferences, threads } from '../schema/mail.js';
import { startWorker, workerModule } from './worker-module.js';
import {
  MailWriteError,
  type MailWriteItem,
  type MailWriteResult,
  type MailRawOutcome,
  type MailRawGroupOutcome,
  type MailWriterOptions,
  type MailWriter,
} from './mail-writer-types.js';

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

const WORKER_MODULE = workerModule(import.meta.url, 'mail-writer-worker');
const PREPARE_MODULE = workerModule(import.meta.url, 'mail-prepare-worker');

/**
 * One entry of a batch as the thread receives it. A group (`raws`: a {@link MailRawGroup}, never durable) goes to
 * the prepare thread, which hands its messages on one by one, each answered with the group's id and its index (`sub`).
 */
type Entry = (
  | { kind: 'item'; item: MailWriteItem }
  | { kind: 'raw'; raw: Uint8Array; meta: unknown }
  | { kind: 'raws'; raws: Uint8Array[]; metas: unknown[] }
) & { durable?: false };

interface Pending {
  entry: Entry;
  /** Ids of the entry's messages, for {@link inDoubt}: those of each message of a group. */
  messageIds: string[][];
  /** A group's outcomes as they come, and how many are still to come. */
  group?: { results: (EntryResult | undefined)[]; left: number };
  resolve(outcome: MailRawOutcome | MailRawGroupOutcome[]): void;
  reject(error: Error): void;
}

type EntryResult =
  | { ok: true; stored: MailWriteResult[]; summary?: unknown }
  | { ok: false; declined?: true; error?: string; raw?: Uint8Array };
type Reply = { results: (EntryResult & { id: number; sub?: number })[] } | { ready: true };

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

  /** Writes not yet handed to the thread. */
  const pending: Pending[] = [];
  /** Writes handed to the thread, by entry id, until their result (or the end of the thread) settles them. */
  const outstanding = new Map<number, Pending>();
  let nextEntry = 1;
  let worker: Worker | undefined;
  /** While the thread has work: the process's write lock is held, and this gives it back. */
  let session: { thread: Worker; release(): void } | undefined;
  let acquiring = false;
  /** Stops a thread that has answered nothing for `batchTimeoutMs` while it has work. */
  let watchdog: NodeJS.Timeout | undefined;
  let closed = false;
  let idle: (() => void) | undefined;

  const failure = (result: EntryResult | undefined) =>
    new MailWriteError(`storing the message failed: ${result && !result.ok ? result.error : 'no result'}`);
  function settle(entry: Pending, result: EntryResult | undefined) {
    if (result?.ok) entry.resolve({ prepared: true, results: result.stored, summary: result.summary });
    else if (result?.declined) entry.resolve({ prepared: false });
    else entry.reject(failure(result));
  }
  /** Settles a group once each of its messages has a result (those missing: failed). */
  function settleGroup(entry: Pending, results: (EntryResult | undefined)[]) {
    entry.resolve(
      results.map((result): MailRawGroupOutcome => {
        if (result?.ok) return { prepared: true, results: result.stored, summary: result.summary };
        if (result?.declined && result.raw) return { prepared: false, raw: result.raw };
        return { prepared: true, failed: failure(result) };
      }),
    );
  }

  function armWatchdog(thread: Worker) {
    clearTimeout(watchdog);
    watchdog =
      outstanding.size > 0
        ? setTimeout(() => stopThread(thread, `it answered nothing for ${batchTimeoutMs} ms`), batchTimeoutMs)
        : undefined;
  }

  /** Stops a thread that will not finish on its own; its exit handler settles its writes. */
  const exitReasons = new WeakMap<Worker, string>();
  function stopThread(thread: Worker, reason: string) {
    exitReasons.set(thread, reason);
    void thread.terminate();
  }

  /** Threads that said they loaded, and those waiting in {@link MailWriter.warm} for one to load (or stop). */
  const ready = new WeakSet<Worker>();
  const warming = new Map<Worker, (() => void)[]>();
  function loaded(thread: Worker, ok = true) {
    if (ok) ready.add(thread);
    for (const resolve of warming.get(thread) ?? []) resolve();
    warming.delete(thread);
  }
  /**
   * The prepare thread of each writer thread (mail-prepare-worker.ts), started by the first raw write that need not
   * be durable (a bulk load): those are prepared there and handed on to the writer, which then spends its time on
   * SQL alone. Durable raw writes (mail arriving over SMTP) are prepared on the writer thread itself: for them one
   * more hop between threads cost more than it saved (about a tenth of the ingest rate on two cores).
   */
  const preparers = new WeakMap<Worker, Worker>();

  /** Results of writes, from the writer thread or (declined messages) its prepare thread. */
  function answered(thread: Worker, reply: Reply, from: Worker = thread) {
    if ('ready' in reply) {
      if (from === thread) loaded(thread);
      return;
    }
    for (const result of reply.results) {
      const entry = outstanding.get(result.id);
      if (!entry) continue;
      const { group } = entry;
      if (group && result.sub !== undefined) {
        if (group.results[result.sub] !== undefined) continue;
        group.results[result.sub] = result;
        if (--group.left > 0) continue;
        outstanding.delete(result.id);
        settleGroup(entry, group.results);
        continue;
      }
      outstanding.delete(result.id);
      settle(entry, result);
    }
    armWatchdog(thread);
    pump();
  }

  /**
   * The prepare thread of `writer`, joined to it by a channel of their own. It lives and dies with the writer: when
   * it stops on its own, the writer is stopped too, and the writes in flight are settled from the database.
   */
  function spawnPreparer(writer: Worker, prepareModule: URL): Worker {
    const preparer = startWorker(PREPARE_MODULE, { execArgv: [], workerData: { prepareModule: prepareModule.href } });
    preparer.unref();
    const channel = new MessageChannel();
    writer.postMessage({ port: channel.port1 }, [channel.port1]);
    preparer.postMessage({ port: channel.port2 }, [channel.port2]);
    preparer.on('message', (reply: Reply) => answered(writer, reply, preparer));
    let reason = 'it exited';
    preparer.on('error', (error) => {
      reason = error.message;
    });
    preparer.on('exit', (code) => {
      if (exitReasons.has(preparer)) return;
      stopThread(writer, `its prepare thread stopped: ${reason} (exit code ${code})`);
    });
    return preparer;
  }

  function spawn(): Worker {
    const thread = startWorker(WORKER_MODULE, { execArgv: [], workerData });
    thread.unref();
    thread.on('message', (reply: Reply) => answered(thread, reply));
    let reason = 'it exited';
    thread.on('error', (error) => {
      reason = error.message;
    });
    thread.once('exit', () => {
      reason = exitReasons.get(thread) ?? reason;
    });
    thread.on('exit', (code) => {
      loaded(thread, false);
      const preparer = preparers.get(thread);
      if (preparer) {
        exitReasons.set(preparer, 'its writer thread stopped');
        void preparer.terminate();
      }
      if (worker === thread) worker = undefined;
      if (!closed) options.onExit?.(`${reason} (exit code ${code})`);
      if (session?.thread !== thread) return;
      // The thread's connection is gone, and with it any transaction it had not committed.
      clearTimeout(watchdog);
      const doubtful = [...outstanding.values()];
      outstanding.clear();
      const held = session;
      session = undefined;
      void inDoubt(doubtful, `${reason} (exit code ${code})`)
        .then(
          (results) =>
            doubtful.forEach((entry, index) => {
              const found = results[index]!;
              if (entry.group)
                settleGroup(
                  entry,
                  entry.group.results.map((known, sub) => known ?? found[sub]),
                );
              else settle(entry, found[0]);
            }),
          (error: unknown) =>
            doubtful.forEach((entry) =>
              entry.reject(
                new MailWriteError(`the mail writer thread stopped, and what it stored is unknown: ${String(error)}`),
              ),
            ),
        )
        .finally(() => {
          held.release();
          if (pending.length > 0) acquire();
          else idle?.();
        });
    });
    return thread;
  }

  /**
   * The outcomes of writes whose thread ended before it answered: their COMMIT may or may not have happened, so the
   * database says which messages are stored (a batch commits whole; a message of it that failed alone is absent).
   */
  async function inDoubt(entries: Pending[], why: string): Promise<EntryResult[][]> {
    const ids = entries.flatMap((entry) => entry.messageIds.flat());
    const found = new Map<string, MailWriteResult>();
    for (let index = 0; index < ids.length; index += 500) {
      const rows = await db.orm
        .select({ messageId: messages.id, threadId: messages.threadId, seq: messages.seq })
        .from(messages)
        .where(inArray(messages.id, ids.slice(index, index + 500)));
      for (const row of rows) found.set(row.messageId, row);
    }
    return entries.map((entry) =>
      entry.messageIds.map((messageIds): EntryResult => {
        const stored = messageIds.map((id) => found.get(id));
        // A raw entry found stored has lost its summary with the thread: the caller goes without it.
        return stored.length > 0 && stored.every((row) => row !== undefined)
          ? { ok: true, stored: stored }
          : { ok: false, error: `the mail writer thread stopped: ${why}` };
      }),
    );
  }

  /** Takes the process's write lock for a session of the thread's work (behind the writes already waiting for it). */
  function acquire() {
    if (acquiring || session) return;
    acquiring = true;
    void db.exclusive(
      () =>
        new Promise<void>((release) => {
          acquiring = false;
          session = { thread: (worker ??= spawn()), release };
          pump();
        }),
    );
  }

  /** Hands the thread the writes not yet given, one message, so it stores them in its next transaction. */
  function post(entries: Pending[]) {
    const thread = session!.thread;
    const message = entries.map((entry) => {
      const id = nextEntry++;
      outstanding.set(id, entry);
      return { id, ...entry.entry };
    });
    // Raw messages that need not be durable go to the prepare thread, which hands them on to the writer prepared;
    // the rest to the writer. Raw bytes go over without a copy (each is a copy of its own, see writeRaw).
    const bulk: (typeof message)[number][] = [];
    const rest: (typeof message)[number][] = [];
    for (const entry of message)
      (options.prepareModule && (entry.kind === 'raws' || (entry.kind === 'raw' && entry.durable === false))
        ? bulk
        : rest
      ).push(entry);
    const buffers = (part: typeof message) => [
      ...new Set(
        part.flatMap((entry) =>
          entry.kind === 'raw'
            ? [entry.raw.buffer as ArrayBuffer]
            : entry.kind === 'raws'
              ? entry.raws.map((raw) => raw.buffer as ArrayBuffer)
              : [],
        ),
      ),
    ];
    /** Sends one part; what cannot be sent to a thread was not written, and fails alone (the other part goes on). */
    const send = (part: typeof message, to: () => Worker) => {
      if (part.length === 0) return;
      try {
        to().postMessage({ entries: part }, buffers(part));
      } catch (error) {
        for (const { id } of part) {
          const entry = outstanding.get(id);
          outstanding.delete(id);
          const why = new MailWriteError(
            `storing the batch failed: ${error instanceof Error ? error.message : String(error)}`,
          );
          if (entry?.group)
            settleGroup(
              entry,
              entry.group.results.map((known) => known ?? { ok: false, error: why.message }),
            );
          else entry?.reject(why);
        }
      }
    };
    send(rest, () => thread);
    send(bulk, () => {
      let preparer = preparers.get(thread);
      if (!preparer) preparers.set(thread, (preparer = spawnPreparer(thread, options.prepareModule!)));
      return preparer;
    });
    // Nothing sent: pump, which called this, gives the lock back.
    if (outstanding.size > 0 && !watchdog) armWatchdog(thread);
  }

  /**
   * Moves the work on. The thread takes writes as they come, without a round trip through the event loop between
   * its transactions (writes that arrive while it is busy go together into its next one), for as long as nobody
   * else waits for the write lock; then it finishes what it has, the lock goes to the waiting writes, and the
   * writes still pending wait for the next turn.
   */
  function pump() {
    if (!session) {
      if (pending.length > 0) acquire();
      return;
    }
    if (pending.length > 0 && db.lockWaiters() === 0) post(pending.splice(0));
    if (outstanding.size > 0) return;
    const held = session;
    session = undefined;
    clearTimeout(watchdog);
    watchdog = undefined;
    held.release();
    if (pending.length > 0) acquire();
    else idle?.();
  }

  /** Set while a {@link pump} is due at the end of this tick. */
  let pumpDue = false;
  function enqueue<T extends MailRawOutcome | MailRawGroupOutcome[]>(entry: Entry, messageIds: string[][]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (closed) return reject(new MailWriteError('the mail writer is closed'));
      const group =
        entry.kind === 'raws'
          ? { results: new Array<EntryResult | undefined>(entry.raws.length).fill(undefined), left: entry.raws.length }
          : undefined;
      pending.push({
        entry,
        messageIds,
        ...(group ? { group } : {}),
        resolve: resolve as (outcome: MailRawOutcome | MailRawGroupOutcome[]) => void,
        reject,
      });
      // Writes queued in the same tick (a sync hands over many messages at once) reach the thread in one message.
      if (pumpDue) return;
      pumpDue = true;
      queueMicrotask(() => {
        pumpDue = false;
        pump();
      });
    });
  }

  return {
    async write(item, writeOptions) {
      const outcome = await enqueue<MailRawOutcome>(
        { kind: 'item', item, ...(writeOptions?.durable === false ? { durable: false as const } : {}) },
        [item.copies.map((copy) => copy.message.id)],
      );
      if (!outcome.prepared) throw new MailWriteError('the mail writer declined a prepared message');
      return outcome.results;
    },
    prepares: options.prepareModule !== undefined,
    warm() {
      if (closed) return Promise.resolve();
      const thread = (worker ??= spawn());
      if (ready.has(thread)) return Promise.resolve();
      return new Promise<void>((resolve) => warming.set(thread, [...(warming.get(thread) ?? []), resolve]));
    },
    writeRaw(job) {
      if (!options.prepareModule)
        return Promise.reject(
          new MailWriteError('the mail writer has no prepare module (MailWriterOptions.prepareModule)'),
        );
      // A copy in its own buffer, handed over without another: the caller keeps its bytes.
      return enqueue<MailRawOutcome>(
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
        { kind: 'raws', raws, metas: group.metas, durable: false },
        group.messageIds,
      );
    },
    async terminate() {
      await worker?.terminate();
    },
    async close() {
      closed = true;
      if (session || acquiring || pending.length > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, batchTimeoutMs);
          timer.unref();
          idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const thread = worker;
      worker = undefined;
      if (thread) await thread.terminate();
    },
  };
}
