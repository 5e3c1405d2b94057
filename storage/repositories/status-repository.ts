/**
 * @module storage/repositories/status-repository
 * What monitoring reads from the database: whether the database answers and carries every migration
 * (`/readyz`), and the counts `/metrics` reports at scrape time (jobs by kind and state).
 */
import { readFileSync, statSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { MIGRATIONS_FOLDER, type Database } from '../db.js';

/** The first 16 bytes of every SQLite database file (https://sqlite.org/fileformat.html, 1.3). */
const SQLITE_MAGIC = 'SQLite format 3\0';

/** The answer of a {@link DatabaseProbe}: `ok`, or why not. */
export type ProbeResult = { ok: true } | { ok: false; check: 'database' | 'migrations'; reason: string };

/** Checks, on demand, that the database is there and answers. */
export type DatabaseProbe = () => Promise<ProbeResult>;

/** `when` of the newest migration this build ships (drizzle-kit's journal), read once. */
function latestMigration(): number {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as {
    entries: { when: number }[];
  };
  return Math.max(0, ...journal.entries.map((entry) => entry.when));
}

/**
 * A probe of `db`. For an embedded file it first checks the file itself: that the path still names the file
 * opened at start (same device and inode: a file deleted, moved away or replaced would otherwise go unnoticed,
 * since the open connection keeps writing to the old one, and that data is lost at the next start), and that it
 * starts with the SQLite header (a file overwritten in place). Then, for any database, a query through the
 * service's own connection must answer, and the newest migration applied must be the newest this build ships.
 */
export function createDatabaseProbe(db: Database): DatabaseProbe {
  const expected = latestMigration();
  const file = db.file;
  const identity = file ? statSync(file) : undefined;
  return async () => {
    if (file && identity) {
      try {
        const now = await stat(file);
        if (now.ino !== identity.ino || now.dev !== identity.dev)
          return {
            ok: false,
            check: 'database',
            reason: `the database file ${file} was replaced or moved since start`,
          };
        const handle = await open(file, 'r');
        try {
          const header = Buffer.alloc(16);
          await handle.read(header, 0, 16, 0);
          if (header.toString('latin1') !== SQLITE_MAGIC)
            return {
              ok: false,
              check: 'database',
              reason: `the database file ${file} is not an SQLite database any more`,
            };
        } finally {
          await handle.close();
        }
      } catch (error) {
        return {
          ok: false,
          check: 'database',
          reason: `the database file ${file} cannot be read: ${(error as Error).message}`,
        };
      }
    }
    try {
      const result = await db.client.execute('SELECT max(created_at) FROM __drizzle_migrations');
      const applied = Number(result.rows[0]?.[0] ?? 0);
      if (applied < expected)
        return {
          ok: false,
          check: 'migrations',
          reason: 'migrations are not applied (the database is older than this build)',
        };
    } catch (error) {
      return { ok: false, check: 'database', reason: `the database does not answer: ${(error as Error).message}` };
    }
    return { ok: true };
  };
}

/** Live jobs by kind and state, at `nowMs`. States: `running` (leased), `due`, `scheduled` (later), `dead`. */
export async function countJobsByState(
  db: Database,
  nowMs: number,
): Promise<{ kind: string; state: 'running' | 'due' | 'scheduled' | 'dead'; count: number }[]> {
  const rows = await db.orm.all<{ kind: string; state: 'running' | 'due' | 'scheduled' | 'dead'; count: number }>(sql`
    SELECT kind,
      CASE WHEN dead_at IS NOT NULL THEN 'dead'
           WHEN lease_expires_at IS NOT NULL AND lease_expires_at > ${nowMs} THEN 'running'
           WHEN run_at <= ${nowMs} THEN 'due'
           ELSE 'scheduled' END AS state,
      count(*) AS count
    FROM jobs GROUP BY 1, 2`);
  return rows.map((row) => ({ kind: String(row.kind), state: row.state, count: Number(row.count) }));
}
