/**
 * @module storage/engine/mail-writer-worker
 * Runs in a worker thread (see mail-writer.ts, started by worker-module.ts): stores batches of inbound messages on its own connection to the
 * embedded database with the native `libsql` driver and statements prepared once, so neither the statements nor
 * the COMMIT's fsync (synchronous=FULL) run on the event loop. Per batch: one BEGIN IMMEDIATE and one COMMIT; a
 * message that fails is reported alone and the others are stored.
 *
 * Per copy of a message: its blobs (content-addressed: a blob already stored is not written again) or its row of
 * `message_raw`, its thread (the thread of the closest Message-ID it shares with earlier mail of the mailbox, read
 * in this transaction, else a new one), its sequence number, the thread's aggregates, the Message-IDs it brings,
 * the message row, its folder links, attachments, full-text entry and its `message.created` outbox event; per message,
 * the jobs that must follow it (its invitation, say), the rule-evaluation rows of its decisions, the daily counters it
 * adds to, and (a connected account's message) its `imap_messages` link.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import Database from 'libsql';
import type { MailPrepare, MailWriteItem, MailWriteResult } from './mail-writer.js';
import { foldIntoThread, newThread } from '../repositories/thread-aggregates.js';
import type { messages, threads } from '../schema/mail.js';

/** A column as mail-writer.ts describes it from the drizzle schema. */
interface Column {
  key: string;
  name: string;
  codec: 'plain' | 'json' | 'bool';
}
interface TableInfo {
  name: string;
  columns: Column[];
}
/** The thread's `workerData` (built by createMailWriter). */
interface WriterData {
  file: string;
  prepareModule?: string;
  busyTimeoutMs: number;
  maxBatch: number;
  maxBatchBytes: number;
  chunkBytes: number;
  tables: Record<
    | 'messages'
    | 'threads'
    | 'threadReferences'
    | 'attachments'
    | 'messageFolders'
    | 'outboxEvents'
    | 'jobs'
    | 'ruleEvaluations'
    | 'imapMessages',
    TableInfo
  >;
}
/** One entry of a batch as the thread receives it (`Entry` in mail-writer-state.ts), with its id (and index in its group, `sub`). */
type Entry = { id: number; sub?: number; durable?: false } & (
  { kind: 'item'; item: MailWriteItem; summary?: unknown } | { kind: 'raw'; raw: Uint8Array; meta: unknown }
);
/** What the thread answers for one entry (`EntryResult` in mail-writer-state.ts). */
type EntryResult =
  { ok: true; stored: MailWriteResult[]; summary?: unknown } | { ok: false; declined?: true; error?: string };
type ThreadRow = typeof threads.$inferSelect;
type MessageRow = typeof messages.$inferSelect;

const { file, busyTimeoutMs, chunkBytes, tables, prepareModule, maxBatch, maxBatchBytes } = workerData as WriterData;

/**
 * The caller's prepare module (see MailPrepare in mail-writer.ts): turns a raw message into the item to store, or
 * declines it.
 */
const prepare: MailPrepare | undefined = prepareModule
  ? ((await import(prepareModule)) as { prepare: MailPrepare }).prepare
  : undefined;

const db = new Database(file, { timeout: busyTimeoutMs });
// Checkpoints are mostly the checkpoint thread's (storage/engine/wal-checkpointer.ts, from 4 MB of log on), beside this one.
// Under a steady stream of batches its PASSIVE checkpoints never catch up with the last frames, and the log, which
// restarts from its beginning only once fully copied, would grow without bound; past 16 MB this thread finishes
// the copy itself after a COMMIT (little is left to copy by then), so the log stays around that size.
/** This file's page size (storage/db.ts gives a new file 16 KB; an older one keeps 4 KB): the thresholds are sizes in bytes. */
const filePageBytes = Number((db.prepare('PRAGMA page_size').raw().get() as unknown[])[0]) || 4096;
const CHECKPOINT_PAGES = Math.ceil((16 * 1024 * 1024) / filePageBytes);
/** The same while only writes that need not be durable come (a bulk load): fewer, larger copies, each page changed by many transactions copied once. */
const BULK_CHECKPOINT_PAGES = Math.ceil((64 * 1024 * 1024) / filePageBytes);
// FULL: each COMMIT syncs the log before the main thread hears of it (and answers 250). A batch of writes that
// need not be durable yet (`durable: false`, a connected account's initial sync) commits with NORMAL: no sync of
// the log, which the next durable commit of any connection syncs with it (see MailWriteOptions in mail-writer.ts).
db.exec('PRAGMA synchronous = FULL');
db.exec(`PRAGMA wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
let synchronousFull = true;
/** Durable (FULL, checkpoints past 16 MB) for a batch with any durable write; else NORMAL, past 64 MB. */
function setSynchronous(full: boolean): void {
  if (full === synchronousFull) return;
  db.exec(`PRAGMA synchronous = ${full ? 'FULL' : 'NORMAL'}`);
  db.exec(`PRAGMA wal_autocheckpoint = ${full ? CHECKPOINT_PAGES : BULK_CHECKPOINT_PAGES}`);
  synchronousFull = full;
}
db.exec('PRAGMA foreign_keys = ON');
// The pages a batch reads (index leaves, thread rows, the FTS structure) stay in this connection's cache instead of
// being read again from the log or the file (SQLite's default cache is 2 MB). Not much more: at every COMMIT SQLite
// walks the cache's hash table (pcache1TruncateUnsafe), which with 64 MB took 7% of this thread's time.
db.exec('PRAGMA cache_size = -8192');

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

function encode(column: Column, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (column.codec === 'json') return JSON.stringify(value);
  // The native driver aborts the process on a boolean parameter: never hand it one.
  if (column.codec === 'bool' || typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'object' && !(value instanceof Uint8Array))
    throw new TypeError(`mail writer: column ${column.name} got an object`);
  return value;
}

function decode(column: Column, value: unknown): unknown {
  if (value === null) return null;
  if (column.codec === 'json') return JSON.parse(value as string);
  if (column.codec === 'bool') return Boolean(value);
  return value;
}

function insertStatement(table: TableInfo, conflict = '') {
  const names = table.columns.map((column) => quote(column.name));
  const statement = db.prepare(
    `INSERT INTO ${quote(table.name)} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')}) ${conflict}`,
  );
  return (row: object) =>
    statement.run(table.columns.map((column) => encode(column, (row as Record<string, unknown>)[column.key])));
}

const threadKeyColumn = tables.threads.columns.find((column) => column.key === 'id');
if (!threadKeyColumn) throw new Error('mail writer: the threads table has no id column');
const updatableThreadColumns = tables.threads.columns.filter(
  (column) => column.key !== 'id' && column.key !== 'grantId' && column.key !== 'createdAt',
);

const statements = {
  begin: db.prepare('BEGIN IMMEDIATE'),
  commit: db.prepare('COMMIT'),
  rollback: db.prepare('ROLLBACK'),
  putBlob: db.prepare(
    'INSERT INTO blobs (hash, size, chunk_count, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
  ),
  putChunk: db.prepare('INSERT INTO blob_chunks (hash, seq, data) VALUES (?, ?, ?)'),
  // EXISTS, not `thread_id IN (SELECT id FROM threads)`: with that, SQLite may walk every thread of the database.
  threadOf: db
    .prepare(
      `SELECT r.thread_id FROM thread_references r WHERE r.grant_id = ? AND r.header_id = ? AND EXISTS (SELECT 1 FROM threads t WHERE t.id = r.thread_id) LIMIT 1`,
    )
    .raw(),
  thread: db
    .prepare(
      `SELECT ${tables.threads.columns.map((column) => quote(column.name)).join(', ')} FROM threads WHERE ${quote(threadKeyColumn.name)} = ?`,
    )
    .raw(),
  nextSeq: db.prepare('SELECT coalesce(max(seq), 0) + 1 FROM messages').raw(),
  putRaw: db.prepare('INSERT INTO message_raw (seq, data) VALUES (?, ?)'),
  search: db.prepare('INSERT INTO messages_fts (rowid, subject, addresses, body) VALUES (?, ?, ?, ?)'),
  insertMessage: insertStatement(tables.messages),
  upsertThread: insertStatement(
    tables.threads,
    `ON CONFLICT (${quote(threadKeyColumn.name)}) DO UPDATE SET ${updatableThreadColumns.map((column) => `${quote(column.name)} = excluded.${quote(column.name)}`).join(', ')}`,
  ),
  insertReference: insertStatement(tables.threadReferences, 'ON CONFLICT DO NOTHING'),
  insertAttachment: insertStatement(tables.attachments),
  insertFolder: insertStatement(tables.messageFolders),
  insertEvent: insertStatement({
    name: tables.outboxEvents.name,
    columns: tables.outboxEvents.columns.filter((column) => column.key !== 'seq'),
  }),
  insertJob: insertStatement(tables.jobs, 'ON CONFLICT DO NOTHING'),
  insertEvaluation: insertStatement(tables.ruleEvaluations),
  insertImapLink: insertStatement(tables.imapMessages),
  addUsage: db.prepare(
    'INSERT INTO grant_daily_usage (grant_id, day, received, sent) VALUES (?, ?, ?, ?) ON CONFLICT (grant_id, day) DO UPDATE SET received = received + excluded.received, sent = sent + excluded.sent',
  ),
};

/** Stores a blob unless one with its hash exists (then the bytes are the same). */
function putBlob({ hash, bytes }: { hash: string; bytes: Uint8Array }, createdAt: number): void {
  const chunkCount = Math.max(1, Math.ceil(bytes.length / chunkBytes));
  if (statements.putBlob.run([hash, bytes.length, chunkCount, createdAt]).changes === 0) return;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let seq = 0; seq < chunkCount; seq++)
    statements.putChunk.run([hash, seq, buffer.subarray(seq * chunkBytes, (seq + 1) * chunkBytes)]);
}

/**
 * The thread a copy joins: the thread of its closest Message-ID already known in its mailbox (a message earlier in
 * this batch included), else undefined.
 */
function knownThread(grantId: string, candidates: string[]): string | undefined {
  for (const candidate of candidates) {
    const row = statements.threadOf.get([grantId, candidate]) as unknown[] | undefined;
    if (row && typeof row[0] === 'string') return row[0];
  }
  return undefined;
}

/** A thread row, decoded as drizzle would (the columns follow its schema). */
function readThread(id: string): ThreadRow | undefined {
  const values = statements.thread.get([id]) as unknown[] | undefined;
  if (!values) return undefined;
  const row: Record<string, unknown> = {};
  tables.threads.columns.forEach((column, index) => {
    row[column.key] = decode(column, values[index]);
  });
  return row as ThreadRow;
}

/** The sequence number of the next message stored in the transaction under way. */
let nextSeq = 0;

/**
 * Stores one message (all its copies) in the transaction under way. Inputs are not changed (a batch may run twice).
 */
function storeMessage(item: MailWriteItem): MailWriteResult[] {
  for (const blob of item.blobs) putBlob(blob, item.createdAt);
  for (const job of item.jobs ?? []) statements.insertJob(job);
  for (const evaluation of item.evaluations ?? []) statements.insertEvaluation(evaluation);
  for (const usage of item.dailyUsage ?? [])
    statements.addUsage.run([usage.grantId, usage.day, usage.received, usage.sent]);
  const results = item.copies.map((copy) => {
    const existing = knownThread(copy.message.grantId, copy.threadCandidates);
    const thread = existing === undefined ? undefined : readThread(existing);
    const seq = nextSeq++;
    const message: MessageRow = { ...copy.message, seq, threadId: thread ? thread.id : copy.message.threadId };
    statements.upsertThread(thread ? foldIntoThread(thread, message) : newThread(message.threadId, message));
    for (const headerId of copy.references)
      statements.insertReference({ grantId: message.grantId, headerId, threadId: message.threadId });
    statements.insertMessage(message);
    if (copy.raw) statements.putRaw.run([seq, Buffer.from(copy.raw.buffer, copy.raw.byteOffset, copy.raw.byteLength)]);
    for (const folder of copy.folders) statements.insertFolder(folder);
    for (const attachment of copy.attachments) statements.insertAttachment(attachment);
    statements.search.run([seq, copy.search.subject, copy.search.addresses, copy.search.body]);
    const { event } = copy;
    if (event) {
      const payload =
        event.payload && typeof event.payload === 'object' && 'thread_id' in event.payload
          ? { ...event.payload, thread_id: message.threadId }
          : event.payload;
      statements.insertEvent({ ...event, payload });
    }
    return { messageId: message.id, threadId: message.threadId, seq };
  });
  // After the message rows, which the links refer to.
  for (const link of item.imapLinks ?? []) statements.insertImapLink(link);
  return results;
}

function describe(error: unknown): string {
  const message = error && typeof error === 'object' && 'message' in error ? String(error.message) : String(error);
  const code = error && typeof error === 'object' && 'code' in error ? ` (${String(error.code)})` : '';
  return `${message}${code}`.slice(0, 1000);
}

/** A message of a batch failed (the batch was rolled back). */
class MessageFailure extends Error {
  constructor(cause: unknown) {
    super(describe(cause));
  }
}

/**
 * Stores messages in one transaction: all of them, or (throwing) none.
 */
function transaction(items: MailWriteItem[]): EntryResult[] {
  statements.begin.run();
  try {
    // Read once per transaction: under BEGIN IMMEDIATE no other connection inserts messages until COMMIT.
    nextSeq = Number((statements.nextSeq.get() as unknown[])[0]);
    const results = items.map((item): EntryResult => {
      try {
        return { ok: true, stored: storeMessage(item) };
      } catch (error) {
        throw new MessageFailure(error);
      }
    });
    statements.commit.run();
    return results;
  } catch (error) {
    if (db.inTransaction) statements.rollback.run();
    throw error;
  }
}

/**
 * One batch in one transaction. No savepoint per message: FTS5 flushes its pending index data at every savepoint,
 * which would write one index segment per message instead of one per batch. When a message fails the batch is
 * rolled back and each message is stored alone, so only the guilty one fails (failures are rare). A failed COMMIT
 * fails the whole batch.
 */
function storeBatch(items: MailWriteItem[]): EntryResult[] {
  try {
    return transaction(items);
  } catch (error) {
    if (!(error instanceof MessageFailure)) throw error;
    return items.map((item): EntryResult => {
      try {
        return transaction([item])[0]!;
      } catch (alone) {
        return { ok: false, error: alone instanceof MessageFailure ? alone.message : describe(alone) };
      }
    });
  }
}

/**
 * The item of a batch entry: as given, or prepared here from its raw bytes (before BEGIN, so the write lock is not
 * held while messages are parsed). Undefined when the prepare module declines the message or fails on it.
 */
function itemOf(entry: Entry): { item: MailWriteItem; summary?: unknown } | undefined {
  if (entry.kind === 'item')
    return entry.summary === undefined ? { item: entry.item } : { item: entry.item, summary: entry.summary };
  if (!prepare) return undefined;
  try {
    return prepare(entry.raw, entry.meta);
  } catch {
    return undefined;
  }
}

/**
 * Writes received and not yet stored, in order. Writes that arrive while a transaction runs wait here and go
 * together into the next one (at most `maxBatch` writes and, unless one alone is larger, `maxBatchBytes`).
 */
const queue: Entry[] = [];
let scheduled = false;

/**
 * The bytes an entry brings to a batch: raw, or its blobs and the raw messages its copies store inline.
 */
function bytesOf(entry: Entry): number {
  if (entry.kind === 'raw') return entry.raw.byteLength;
  let bytes = 0;
  for (const blob of entry.item.blobs) bytes += blob.bytes.byteLength;
  for (const copy of entry.item.copies) bytes += copy.raw?.byteLength ?? 0;
  return bytes;
}

/** Stores the next batch of the queue in one transaction and answers for each of its writes. */
function drain() {
  scheduled = false;
  let bytes = 0;
  let size = 0;
  let durableSeen = false;
  // Writes that need not be durable (`durable: false`: a bulk load) go up to four times as many to a transaction,
  // until a durable one comes: that one waits for no more than `maxBatch` writes.
  while (size < queue.length && (size === 0 || bytes + bytesOf(queue[size]!) <= maxBatchBytes)) {
    const entry = queue[size]!;
    const durable = entry.durable !== false;
    if (size >= (durable || durableSeen ? maxBatch : maxBatch * 4)) break;
    durableSeen ||= durable;
    bytes += bytesOf(entry);
    size++;
  }
  const batch = queue.splice(0, size);
  let results: (EntryResult & { id: number; sub?: number })[];
  try {
    const prepared = batch.map((entry) => itemOf(entry));
    const items = prepared.flatMap((entry) => (entry ? [entry.item] : []));
    setSynchronous(batch.some((entry) => entry.durable !== false));
    const stored = items.length > 0 ? storeBatch(items) : [];
    let next = 0;
    results = prepared.map((entry, index): EntryResult & { id: number; sub?: number } => {
      const { id, sub } = batch[index]!;
      const at = sub === undefined ? { id } : { id, sub };
      if (!entry) return { ...at, ok: false, declined: true };
      const result = stored[next++]!;
      return { ...at, ...result, ...(result.ok && entry.summary !== undefined ? { summary: entry.summary } : {}) };
    });
  } catch (error) {
    results = batch.map((entry) => ({
      id: entry.id,
      ...(entry.sub === undefined ? {} : { sub: entry.sub }),
      ok: false,
      error: `storing the batch failed: ${describe(error)}`,
    }));
  }
  parentPort?.postMessage({ results });
  // Yield before the next batch, so writes sent meanwhile are received and join it.
  if (queue.length > 0) schedule();
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  setImmediate(drain);
}

/** Writes from the main thread, and from the prepare thread (mail-prepare-worker.ts) on the port the main thread sends once. */
const receive = (message: { entries?: Entry[]; port?: MessagePort }) => {
  message.port?.on('message', receive);
  if (!message.entries) return;
  queue.push(...message.entries);
  schedule();
};
parentPort?.on('message', receive);
// Loaded (its modules, the connection, the statements): the writer's `warm()` waits for this.
parentPort?.postMessage({ ready: true });
