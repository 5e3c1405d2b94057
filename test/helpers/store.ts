/** Looking at what the mail store wrote, from a test: row counts and the write lock. */
import Sqlite from 'libsql';
import { count } from 'drizzle-orm';
import { tables, type Database } from '../../storage/index.js';

/** How many rows each table a received message writes to holds (and the full-text index's entries). */
export async function storedCounts(db: Database) {
  const tally = async (
    table:
      | typeof tables.messages
      | typeof tables.threads
      | typeof tables.blobs
      | typeof tables.messageRaw
      | typeof tables.attachments
      | typeof tables.outboxEvents
      | typeof tables.threadReferences
      | typeof tables.messageFolders,
  ) => (await db.orm.select({ n: count() }).from(table))[0]!.n;
  const fts = (await db.client.execute('SELECT count(*) FROM messages_fts')).rows[0]![0];
  return {
    messages: await tally(tables.messages),
    threads: await tally(tables.threads),
    references: await tally(tables.threadReferences),
    folders: await tally(tables.messageFolders),
    attachments: await tally(tables.attachments),
    blobs: await tally(tables.blobs),
    raws: await tally(tables.messageRaw),
    events: await tally(tables.outboxEvents),
    fts: Number(fts),
  };
}

/** A connection of its own to the database `file`, that tells whether some other connection holds its write lock. */
export function writeLockProbe(file: string) {
  const probe = new Sqlite(file, { timeout: 0 });
  const held = () => {
    try {
      probe.exec('BEGIN IMMEDIATE');
      probe.exec('ROLLBACK');
      return false;
    } catch {
      return true;
    }
  };
  return {
    held,
    /** Waits until the lock is held (the writer is inside a transaction), or fails after `timeoutMs`. */
    async untilHeld(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!held()) {
        if (Date.now() > deadline) throw new Error('nobody took the write lock');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () => probe.close(),
  };
}
