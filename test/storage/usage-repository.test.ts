/**
 * The bytes of a grant's stored mail (`storedBytesOf`, read for a policy's `limit_storage_total`): every copy counts,
 * other grants' mail does not, and the sum is read from the covering index `messages_grant_size_idx` alone, not from
 * message rows (whose inline bodies push `raw_size` onto overflow pages: at 15,000 10 KB messages the row scan held
 * the event loop for about 100 ms).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrate, storedBytesOf, tables, type Database } from '../../storage/index.js';
import { tempDir } from '../helpers/service.js';

describe('the stored bytes of a grant', () => {
  const dir = tempDir();
  let db: Database;

  beforeAll(async () => {
    db = await createDb({ url: `file:${join(dir.path, 'usage.db')}` });
    await migrate(db);
    await db.write(async (tx) => {
      await tx
        .insert(tables.applications)
        .values({ id: 'app', name: 'usage', plan: 'trial', createdAt: 1, updatedAt: 1 });
      for (const id of ['one', 'two', 'empty'])
        await tx.insert(tables.grants).values({
          id,
          applicationId: 'app',
          provider: 'nylas',
          email: `${id}@usage.test`,
          createdAt: 1,
          updatedAt: 1,
        });
      const body = 'x'.repeat(12_000);
      const sizes = { one: [10_240, 2_048, 7], two: [99] };
      let seq = 0;
      for (const [grantId, list] of Object.entries(sizes)) {
        for (const rawSize of list) {
          seq++;
          await tx.insert(tables.messages).values({
            id: `m${seq}`,
            grantId,
            threadId: `t${seq}`,
            seq,
            date: seq,
            body,
            rawSize,
            createdAt: 1,
            updatedAt: 1,
          });
        }
      }
    });
  });
  afterAll(() => {
    void db.close();
    dir.remove();
  });

  it("sums the grant's own messages, zero for none", async () => {
    expect(await storedBytesOf(db.orm, 'one')).toBe(10_240 + 2_048 + 7);
    expect(await storedBytesOf(db.orm, 'two')).toBe(99);
    expect(await storedBytesOf(db.orm, 'empty')).toBe(0);
  });

  it('reads the covering index, not the message rows', async () => {
    const plan = await db.client.execute({
      sql: 'EXPLAIN QUERY PLAN SELECT coalesce(sum(raw_size), 0) FROM messages WHERE grant_id = ?',
      args: ['one'],
    });
    const details = plan.rows.map((row) => row.detail as string);
    expect(details.join('\n')).toMatch(/USING COVERING INDEX messages_grant_size_idx \(grant_id=\?\)/);
  });
});
