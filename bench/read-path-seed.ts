/**
 * Databases for bench/read-path.bench.ts, made once and kept in a cache folder (`$TMPDIR/agentpost-bench-reads-v1`,
 * or BENCH_READS_CACHE) for the next run: one mailbox of 10 KB messages (the newest 50 are about 562 KB of JSON) and
 * one of 50 short messages, at 200, 20,000 and 100,000 messages in the large mailbox. The first 200 messages are
 * received through the real inbound path (parsed, threaded, indexed); the larger mailboxes are copies of those rows
 * made with batched `INSERT … SELECT` on the native driver (new ids, older dates), which takes seconds, not the
 * minutes 100,000 deliveries would.
 */
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'libsql';
import { createService } from '../server/main.js';
import { loadConfig } from '../src/index.js';

/** The API key of the seeded default application. */
export const BENCH_API_KEY = 'agp_bench_key_for_the_default_application';
export const BENCH_DOMAIN = 'bench.agentpost.localhost';
/** The mailbox of 10 KB messages, and the one of short messages. */
export const LARGE_MAILBOX = `agent@${BENCH_DOMAIN}`;
export const SHORT_MAILBOX = `short@${BENCH_DOMAIN}`;
/** Messages received through the inbound path into the large mailbox (the rest are copies). */
const RECEIVED = 200;
const SHORT_MESSAGES = 50;

/** The first column of the first row of a query (the native driver's `pluck` does not apply to `get`). */
export function scalar(db: Sqlite.Database, sql: string, ...params: unknown[]): unknown {
  const row = db.prepare(sql).raw(true).get(params) as unknown[] | undefined;
  return row?.[0];
}

/** Where the cached databases live. */
export function cacheDir(): string {
  const dir = process.env.BENCH_READS_CACHE ?? join(tmpdir(), 'agentpost-bench-reads-v1');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A plain-text message of about `size` bytes of body (readable text, lines of 76 characters). */
function mime(index: number, to: string, size: number): string {
  const words = [
    'agent',
    'calendar',
    'meeting',
    'invoice',
    'report',
    'schedule',
    'project',
    'update',
    'follow',
    'review',
    'draft',
    'summary',
  ];
  const lines: string[] = [];
  let length = 0;
  let word = index;
  while (length < size) {
    let line = '';
    while (line.length < 70) line += `${words[word++ % words.length]} `;
    lines.push(line.trimEnd());
    length += line.length + 1;
  }
  const body = size <= 100 ? `Hi, see you at ${(index % 12) + 1} pm? (${index})` : lines.join('\r\n');
  return [
    `From: Sender ${index % 7} <sender${index % 7}@example.com>`,
    `To: ${to}`,
    `Subject: Bench message ${index}`,
    `Message-ID: <bench-${to}-${index}@example.com>`,
    `Date: ${new Date(Date.UTC(2025, 0, 1) + index * 60_000).toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
  ].join('\r\n');
}

/** The base database: application, domain, both mailboxes, 200 received 10 KB messages and 50 short ones. */
async function seedBase(file: string): Promise<void> {
  const service = await createService(
    loadConfig({
      AGENTPOST_DATABASE_URL: `file:${file}`,
      AGENTPOST_HTTP_PORT: '0',
      AGENTPOST_SMTP_PORT: '0',
      AGENTPOST_API_KEY: BENCH_API_KEY,
      AGENTPOST_LOG_LEVEL: 'silent',
      AGENTPOST_DOMAINS: BENCH_DOMAIN,
    }),
  );
  try {
    const headers = { authorization: `Bearer ${BENCH_API_KEY}`, 'content-type': 'application/json' };
    for (const email of [LARGE_MAILBOX, SHORT_MAILBOX]) {
      const response = await service.app.request('/v3/connect/custom', {
        method: 'POST',
        headers,
        body: JSON.stringify({ provider: 'nylas', settings: { email } }),
      });
      if (!response.ok) throw new Error(`creating ${email} failed: ${response.status} ${await response.text()}`);
    }
    const deliver = async (to: string, index: number, size: number) => {
      const result = await service.core.mail.inbound.deliverInbound({
        rawMime: mime(index, to, size),
        envelope: { mailFrom: 'sender@example.com', rcptTo: [to] },
      });
      if (result.deliveries.length !== 1)
        throw new Error(`delivery to ${to} failed: ${JSON.stringify(result.rejected)}`);
    };
    for (let index = 0; index < RECEIVED; index += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, offset) => deliver(LARGE_MAILBOX, index + offset, 10_240)));
    }
    for (let index = 0; index < SHORT_MESSAGES; index++) await deliver(SHORT_MAILBOX, index, 40);
  } finally {
    await service.close();
  }
}

/**
 * Grows the large mailbox of `file` to `total` messages: copies of its received rows (and their folder rows), with
 * new ids and sequence numbers and dates older than every received one, in transactions of 5,000 rows.
 */
function grow(file: string, total: number): void {
  const db = new Sqlite(file);
  try {
    db.exec('PRAGMA journal_mode = WAL');
    const grant = scalar(db, 'SELECT grant_id FROM messages ORDER BY seq LIMIT 1') as string;
    const columns = (db.prepare('PRAGMA table_info(messages)').all() as { name: string }[]).map(
      (column) => column.name,
    );
    const originals = scalar(db, 'SELECT count(*) FROM messages WHERE grant_id = ?', grant) as number;
    const lastOriginal = scalar(db, 'SELECT max(seq) FROM messages') as number;
    // Integers we make are written into the SQL; the mailbox id is bound.
    const expression = (column: string, round: number, base: number) =>
      column === 'id'
        ? `m.id || '_c${round}'`
        : column === 'seq'
          ? `${base} + m.seq`
          : column === 'date' || column === 'created_at' || column === 'updated_at'
            ? `m."${column}" - ${round * 86_400}`
            : `m."${column}"`;
    const maxSeq = () => scalar(db, 'SELECT max(seq) FROM messages') as number;
    let count = originals;
    let round = 1;
    while (count < total) {
      db.exec('BEGIN');
      for (let inTx = 0; inTx < 5_000 / originals && count < total; inTx++, round++) {
        const base = maxSeq();
        db.prepare(
          `INSERT INTO messages (${columns.map((column) => `"${column}"`).join(', ')}) SELECT ${columns.map((column) => expression(column, round, base)).join(', ')} FROM messages m WHERE m.grant_id = ? AND m.seq <= ${lastOriginal}`,
        ).run([grant]);
        db.prepare(
          `INSERT INTO message_folders (message_id, grant_id, folder_id, unread) SELECT f.message_id || '_c${round}', f.grant_id, f.folder_id, f.unread FROM message_folders f JOIN messages m ON m.id = f.message_id WHERE m.grant_id = ? AND m.seq <= ${lastOriginal}`,
        ).run([grant]);
        count += originals;
      }
      db.exec('COMMIT');
    }
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** Folds the write-ahead log into the database file, so that the file alone is the whole database. */
function settle(file: string): void {
  const db = new Sqlite(file);
  try {
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** The database files by size of the large mailbox (200, 20,000, 100,000), made when missing from the cache. */
export async function seededDatabases(sizes: readonly number[]): Promise<Map<number, string>> {
  const dir = cacheDir();
  const base = join(dir, `mailbox-${RECEIVED}.db`);
  if (!existsSync(base)) {
    const partial = join(dir, 'partial-base.db');
    for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true });
    await seedBase(partial);
    settle(partial);
    renameSync(partial, base);
    for (const suffix of ['-wal', '-shm']) rmSync(partial + suffix, { force: true });
  }
  const files = new Map<number, string>();
  for (const size of sizes) {
    const target = join(dir, `mailbox-${size}.db`);
    if (size > RECEIVED && !existsSync(target)) {
      const partial = join(dir, `partial-${size}.db`);
      copyFileSync(base, partial);
      grow(partial, size);
      for (const suffix of ['-wal', '-shm']) rmSync(partial + suffix, { force: true });
      renameSync(partial, target);
    }
    files.set(size, target);
  }
  return files;
}

/** A scratch copy of a cached database (for runs that write to it, such as ingest). */
export function scratchCopy(file: string, name: string): string {
  const target = join(cacheDir(), `scratch-${name}.db`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(target + suffix, { force: true });
  copyFileSync(file, target);
  return target;
}
