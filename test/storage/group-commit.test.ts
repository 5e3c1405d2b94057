import { join } from 'node:path';
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createGroupCommit, migrate, tables, type Database, type Tx } from '../../storage/index.js';
import { tempDir } from '../helpers/service.js';

describe('group commit', () => {
  const dir = tempDir();
  let db: Database;
  let writes = 0;
  let failCommit = false;

  beforeAll(async () => {
    const real = await createDb({ url: `file:${join(dir.path, 'group.db')}` });
    await migrate(real);
    db = {
      ...real,
      durableWrite: (work) => {
        writes++;
        return real.durableWrite(async (tx) => {
          const result = await work(tx);
          if (failCommit) throw new Error('commit failed (injected)');
          return result;
        });
      },
    };
  });
  afterAll(() => {
    void db.close();
    dir.remove();
  });

  /** Inserts one application per item; an item named `fail…` throws after its insert. */
  const writer = async (tx: Tx, ids: string[]) => {
    for (const id of ids) {
      await tx.insert(tables.applications).values({ id, name: id, plan: 'trial', createdAt: 1, updatedAt: 1 });
      if (id.startsWith('fail')) throw new Error(`${id} fails`);
    }
    return ids.map((id) => `stored ${id}`);
  };
  const exists = async (id: string) =>
    (await db.orm.select({ n: count() }).from(tables.applications).where(eq(tables.applications.id, id)))[0]!.n === 1;

  it('writes items that arrive together in one transaction, each resolving after the commit', async () => {
    const group = createGroupCommit(db, writer);
    writes = 0;
    const ids = Array.from({ length: 20 }, (_, index) => `together-${index}`);
    expect(await Promise.all(ids.map((id) => group.run(id)))).toEqual(ids.map((id) => `stored ${id}`));
    expect(writes).toBe(1);
    for (const id of ids) expect(await exists(id)).toBe(true);
  });

  it('holds a batch open while more items are coming, up to its hold time', async () => {
    let coming = true;
    const group = createGroupCommit(db, writer, { moreComing: () => coming, maxHoldMs: 1_000 });
    writes = 0;
    const first = group.run('held-1');
    await new Promise((resolve) => setTimeout(resolve, 30));
    coming = false;
    const second = group.run('held-2');
    expect(await Promise.all([first, second])).toEqual(['stored held-1', 'stored held-2']);
    expect(writes).toBe(1);
  });

  it('fails only the failing item of a batch and stores the others', async () => {
    const group = createGroupCommit(db, writer);
    const results = await Promise.allSettled([group.run('kept-1'), group.run('fail-1'), group.run('kept-2')]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await exists('kept-1')).toBe(true);
    expect(await exists('kept-2')).toBe(true);
    expect(await exists('fail-1')).toBe(false);
  });

  it('rejects every item of a batch whose commit fails, and stores none of them', async () => {
    const group = createGroupCommit(db, writer);
    failCommit = true;
    try {
      const results = await Promise.allSettled([group.run('lost-1'), group.run('lost-2')]);
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    } finally {
      failCommit = false;
    }
    expect(await exists('lost-1')).toBe(false);
    expect(await exists('lost-2')).toBe(false);
    expect(await group.run('after-failure')).toBe('stored after-failure');
  });

  it('durableWrite commits on its own connection and the pool reads the result at once', async () => {
    await db.durableWrite((tx) =>
      tx
        .insert(tables.applications)
        .values({ id: 'durable', name: 'durable', plan: 'trial', createdAt: 1, updatedAt: 1 }),
    );
    expect(await exists('durable')).toBe(true);
    // Ordinary writes still queue with it.
    await db.write((tx) =>
      tx.update(tables.applications).set({ name: 'renamed' }).where(eq(tables.applications.id, 'durable')),
    );
    const [row] = await db.orm.select().from(tables.applications).where(eq(tables.applications.id, 'durable'));
    expect(row!.name).toBe('renamed');
  });
});
