import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createJobQueue, createWorker, createLogger, type Job, type JobQueue } from '../../../src/index.js';
import { createTestCore } from '../../helpers/service.js';
import { fixedClock, sequentialIds } from '../../helpers/clock.js';
import { eventually } from '../../helpers/webhooks.js';

const logger = createLogger('silent');

describe('job queue', () => {
  let clock: ReturnType<typeof fixedClock>;
  let env: Awaited<ReturnType<typeof createTestCore>>;
  let queue: JobQueue;

  beforeEach(async () => {
    clock = fixedClock('2026-03-30T00:00:00Z');
    env = await createTestCore({ clock, newId: sequentialIds('job') });
    queue = createJobQueue({ db: env.db, clock, newId: sequentialIds('q') });
  });
  afterEach(() => env.close());

  const claimOne = async (owner: string, leaseMs = 1_000) =>
    (await queue.claim({ owner, kinds: ['test'], limit: 1, leaseMs }))[0];

  it('enqueues once per dedupe key while the job exists, and again after it completed', async () => {
    const first = await queue.enqueue({ kind: 'test', payload: { n: 1 }, dedupeKey: 'k' });
    const again = await queue.enqueue({ kind: 'test', payload: { n: 2 }, dedupeKey: 'k' });
    expect(first.created).toBe(true);
    expect(again).toEqual({ id: first.id, created: false });
    const job = await claimOne('a');
    expect(job?.payload).toEqual({ n: 1 });
    expect(await queue.complete(job!, 'a')).toBe(true);
    expect(await queue.find(first.id)).toBeUndefined();
    expect((await queue.enqueue({ kind: 'test', payload: { n: 3 }, dedupeKey: 'k' })).created).toBe(true);
  });

  it('leases a job to one owner; after the lease lapses another owner takes it and the first loses it', async () => {
    await queue.enqueue({ kind: 'test', payload: {} });
    const held = await claimOne('a', 1_000);
    expect(held).toMatchObject({ leaseOwner: 'a', attempts: 1, leaseExpiresAt: clock.now().getTime() + 1_000 });
    expect(await claimOne('b')).toBeUndefined();
    expect(await queue.nextClaimableAt(['test'])).toBe(clock.now().getTime() + 1_000);

    clock.advance(1_000); // the worker holding it "crashed"
    const retaken = await claimOne('b');
    expect(retaken).toMatchObject({ id: held!.id, leaseOwner: 'b', attempts: 2 });
    expect(await queue.complete(held!, 'a')).toBe(false);
    expect(await queue.retry(held!, 'a', clock.now(), 'late')).toBe(false);
    expect(await queue.complete(retaken!, 'b')).toBe(true);
  });

  it('does not run a job before run_at; retry moves run_at; a given-up job is never claimed again', async () => {
    const later = new Date(clock.now().getTime() + 60_000);
    await queue.enqueue({ kind: 'test', payload: {}, runAt: later });
    await queue.enqueue({ kind: 'other', payload: {} });
    expect(await claimOne('a')).toBeUndefined();
    expect(await queue.nextClaimableAt(['test'])).toBe(later.getTime());
    clock.set(later.toISOString());
    const job = await claimOne('a');
    expect(job).toBeDefined();
    expect(await queue.retry(job!, 'a', new Date(later.getTime() + 5_000), 'HTTP 500')).toBe(true);
    expect(await claimOne('a')).toBeUndefined();
    clock.advance(5_000);
    const second = await claimOne('a');
    expect(second).toMatchObject({ attempts: 2, lastError: 'HTTP 500' });
    expect(await queue.giveUp(second!, 'a', 'enough')).toBe(true);
    clock.advance(24 * 3600_000);
    expect(await claimOne('a')).toBeUndefined();
    expect(await queue.find(second!.id)).toMatchObject({
      deadAt: clock.now().getTime() - 24 * 3600_000,
      lastError: 'enough',
      leaseOwner: null,
    });
  });

  it('never hands one job to two claimers, even when they claim at the same time', async () => {
    for (let index = 0; index < 40; index += 1) await queue.enqueue({ kind: 'test', payload: { index } });
    const other = createJobQueue({ db: env.db, clock, newId: sequentialIds('other') });
    const claims = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        (index % 2 === 0 ? queue : other).claim({ owner: `w${index}`, kinds: ['test'], limit: 3, leaseMs: 60_000 }),
      ),
    );
    const ids = claims.flat().map((job) => job.id);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
  });

  it('claims ordered jobs as a prefix of each key, one holder per key at a time, waiting behind a retry, batch-settling successes', async () => {
    const keys = ['a', 'a', 'b', 'a', 'c', 'b'];
    await env.db.write((tx) =>
      queue.enqueueManyIn(
        tx,
        keys.map((key, index) => ({ kind: 'ordered', payload: { key, index }, orderKey: `w ${key}` })),
      ),
    );
    const names = (jobs: readonly Job[]) =>
      jobs.map((job) => `${(job.payload as { key: string }).key}${(job.payload as { index: number }).index}`);
    const claim = (owner: string, options: { maxKeys?: number; maxPerKey?: number } = {}) =>
      queue
        .settleAndClaimOrdered([], { owner, kind: 'ordered', limit: 10, leaseMs: 600_000, ...options })
        .then((result) => result.claimed);

    // Two keys at most, two jobs of a key at most: a prefix of a and of b, in enqueue order.
    const first = await claim('one', { maxKeys: 2, maxPerKey: 2 });
    expect(names(first)).toEqual(['a0', 'a1', 'b2', 'b5']);
    // Another claimer gets only c: a and b are held (a3 and b5 wait behind their held jobs).
    const second = await claim('two');
    expect(names(second)).toEqual(['c4']);
    expect(await claim('three')).toEqual([]);

    // a0 done, a1 failed (retry in a minute), b2 done, b5 given back unrun: one transaction. a3 waits behind a1;
    // b5 is claimed again, its attempt not counted twice.
    const retryAt = new Date(clock.now().getTime() + 60_000);
    const { settled, claimed } = await queue.settleAndClaimOrdered(
      [
        { job: first[0]!, owner: 'one', outcome: { type: 'done' } },
        { job: first[1]!, owner: 'one', outcome: { type: 'retry', at: retryAt, error: 'HTTP 503' } },
        { job: first[2]!, owner: 'one', outcome: { type: 'done' } },
        { job: first[3]!, owner: 'one', outcome: { type: 'release' } },
        { job: second[0]!, owner: 'wrong owner', outcome: { type: 'done' } },
      ],
      { owner: 'one', kind: 'ordered', limit: 10, leaseMs: 600_000 },
    );
    expect(settled).toEqual([true, true, true, true, false]);
    expect(names(claimed)).toEqual(['b5']);
    expect(claimed[0]!.attempts).toBe(1);

    // When a1's retry is due, a1 comes first and a3 after it.
    clock.set(retryAt.toISOString());
    expect(names(await claim('four'))).toEqual(['a1', 'a3']);
  });
});

describe('worker', () => {
  let env: Awaited<ReturnType<typeof createTestCore>>;
  beforeEach(async () => {
    env = await createTestCore();
  });
  afterEach(() => env.close());

  it('wakes on an in-process enqueue, respects the concurrency limit and stops after the jobs in progress', async () => {
    const clock = { now: () => new Date() };
    const queue = createJobQueue({ db: env.db, clock, newId: sequentialIds('w') });
    let running = 0;
    let most = 0;
    const done: number[] = [];
    const worker = createWorker({
      queue,
      clock,
      logger,
      owner: 'worker-1',
      concurrency: 3,
      pollIntervalMs: 60_000, // only the enqueue wake-up can start these jobs in time
      handlers: {
        async sleep(job: Job) {
          running += 1;
          most = Math.max(most, running);
          await new Promise((resolve) => setTimeout(resolve, 30));
          running -= 1;
          done.push(job.payload.index as number);
        },
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first poll has found nothing
    for (let index = 0; index < 10; index += 1) await queue.enqueue({ kind: 'sleep', payload: { index } });
    await eventually(() => done.length === 10, 10_000, 'ten jobs');
    expect(most).toBe(3);
    expect(await queue.nextClaimableAt(['sleep'])).toBeUndefined();

    await queue.enqueue({ kind: 'sleep', payload: { index: 10 } });
    await eventually(() => running === 1, 5_000, 'a running job');
    await worker.stop();
    expect(running).toBe(0);
    expect(done).toContain(10);
  });

  it('retries a handler that throws with backoff, then gives up after maxAttempts', async () => {
    const clock = fixedClock('2026-03-30T00:00:00Z');
    const queue = createJobQueue({ db: env.db, clock, newId: sequentialIds('t') });
    let calls = 0;
    const worker = createWorker({
      queue,
      clock,
      logger,
      owner: 'worker-2',
      pollIntervalMs: 10,
      maxAttempts: 3,
      backoffMs: (attempt) => attempt * 1_000,
      handlers: {
        async flaky() {
          calls += 1;
          throw new Error(`boom ${calls}`);
        },
      },
    });
    const { id } = await queue.enqueue({ kind: 'flaky', payload: {} });
    await eventually(async () => (await queue.find(id))?.lastError === 'boom 1', 5_000, 'first failure');
    expect((await queue.find(id))?.runAt).toBe(clock.now().getTime() + 1_000);
    clock.advance(1_000);
    await eventually(async () => (await queue.find(id))?.lastError === 'boom 2', 5_000, 'second failure');
    expect((await queue.find(id))?.runAt).toBe(clock.now().getTime() + 2_000);
    clock.advance(2_000);
    await eventually(
      async () => (await queue.find(id))?.deadAt !== null && (await queue.find(id))?.deadAt !== undefined,
      5_000,
      'given up',
    );
    expect(await queue.find(id)).toMatchObject({ attempts: 3, lastError: 'boom 3' });
    clock.advance(3_600_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toBe(3);
    await worker.stop();
  });

  it('two workers on one database run each job exactly once', async () => {
    const clock = { now: () => new Date() };
    const queue = createJobQueue({ db: env.db, clock, newId: sequentialIds('p') });
    const runs = new Map<number, number>();
    const handlers = {
      async count(job: Job) {
        const index = job.payload.index as number;
        runs.set(index, (runs.get(index) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 2));
      },
    };
    for (let index = 0; index < 100; index += 1) await queue.enqueue({ kind: 'count', payload: { index } });
    const workers = [1, 2].map((n) =>
      createWorker({
        queue: createJobQueue({ db: env.db, clock, newId: sequentialIds(`x${n}`) }),
        clock,
        logger,
        owner: `w${n}`,
        pollIntervalMs: 5,
        concurrency: 4,
        handlers,
      }),
    );
    await eventually(() => runs.size === 100, 10_000, 'all jobs');
    await Promise.all(workers.map((worker) => worker.stop()));
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
  });
});
