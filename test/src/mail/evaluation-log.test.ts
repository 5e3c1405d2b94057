/**
 * The log of rule-evaluation rows decided outside a message's transaction (src/mail/stages/evaluation-log.ts): a row
 * taken by a message's transaction is not written again, and a row is written by itself only once it has waited
 * FLUSH_MS (100 ms) untaken, so a steady stream of mail, where every row rides with the next message, makes no
 * transaction of its own. Timers and `performance.now()` are faked: the test steps time, it does not wait for it.
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { evaluationRow, type EvaluationRow } from '../../../src/admin/audit.js';
import { createLogger } from '../../../src/index.js';
import { createEvaluationLog } from '../../../src/mail/stages/evaluation-log.js';
import { createDb, migrate, tables, type Database } from '../../../storage/index.js';
import { tempDir } from '../../helpers/service.js';

describe('the evaluation log', () => {
  const dir = tempDir();
  let db: Database;
  let next = 0;

  beforeAll(async () => {
    db = await createDb({ url: `file:${join(dir.path, 'log.db')}` });
    await migrate(db);
    await db.write(async (tx) => {
      await tx
        .insert(tables.applications)
        .values({ id: 'app', name: 'log', plan: 'trial', createdAt: 1, updatedAt: 1 });
      await tx.insert(tables.grants).values({
        id: 'grant',
        applicationId: 'app',
        provider: 'nylas',
        email: 'me@log.test',
        createdAt: 1,
        updatedAt: 1,
      });
    });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(() => {
    void db.close();
    dir.remove();
  });

  const row = (): EvaluationRow =>
    evaluationRow(() => `evaluation_${++next}`, {
      applicationId: 'app',
      grantId: 'grant',
      stage: 'smtp_rcpt',
      input: { from_address: 'a@b.test' },
      matchedRuleIds: [],
      appliedActions: {},
      at: 1,
    });
  const written = async () =>
    (await db.orm.select({ id: tables.ruleEvaluations.id }).from(tables.ruleEvaluations))
      .map((entry) => entry.id)
      .sort();
  /** Lets the faked timers run `ms` on, and the writes they start finish. */
  const step = async (ms: number) => {
    await vi.advanceTimersByTimeAsync(ms);
    // setImmediate is not faked: turns of the event loop for a write the timer started to finish.
    for (let turn = 0; turn < 50; turn++) await new Promise((done) => setImmediate(done));
  };

  it('writes a row left waiting once it has waited 100 ms, not before, and never one a message took', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const log = createEvaluationLog({ db, logger: createLogger('silent') });
    const before = await written();

    const taken = row();
    log.later([taken]);
    await step(60);
    // A message's transaction takes it (and would write it).
    expect(log.take()).toEqual([taken]);

    const late = row();
    await step(30);
    log.later([late]);
    // 100 ms after the first row: the timer fires, but the row waiting came 10 ms ago.
    await step(10);
    expect(await written()).toEqual(before);
    await step(80);
    expect(await written()).toEqual(before);
    // 100 ms after it came, it is written by itself; the taken row is not.
    await step(15);
    expect(await written()).toEqual([...before, late.id].sort());
    expect(log.take()).toEqual([]);
  });

  it('writes everything waiting at once when asked (shutdown, tests)', async () => {
    const log = createEvaluationLog({ db, logger: createLogger('silent') });
    const rows = [row(), row()];
    log.later(rows);
    await log.flush();
    expect(await written()).toEqual(expect.arrayContaining(rows.map((entry) => entry.id)));
  });
});
