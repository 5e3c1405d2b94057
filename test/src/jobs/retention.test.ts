/**
 * Retention: old outbox events and dead jobs are deleted in bounded chunks, the newest event always stays, and
 * webhook subscriptions still start after the newest event. Real libSQL file, real webhook receiver on loopback.
 */
import { asc, eq, isNull } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tables, type Database } from '../../../storage/index.js';
import { startBackgroundWork, type BackgroundWork, type Principal } from '../../../src/index.js';
import { eventRecorder } from '../../../src/outbox/outbox.js';
import {
  createRetention,
  DEAD_JOB_RETENTION_MS,
  DISPATCHED_EVENT_RETENTION_MS,
  UNDISPATCHED_EVENT_RETENTION_MS,
} from '../../../src/background/retention.js';
import { fixedClock, sequentialIds } from '../../helpers/clock.js';
import { createTestCore } from '../../helpers/service.js';
import { eventually, startReceiver, type WebhookReceiver } from '../../helpers/webhooks.js';

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;
const T0 = '2026-03-30T00:00:00Z';
const DOMAIN = 'retention.agentpost.localhost';

describe('retention purge', () => {
  let clock: ReturnType<typeof fixedClock>;
  let env: Awaited<ReturnType<typeof createTestCore>>;
  let principal: Principal;
  let receiver: WebhookReceiver | undefined;
  let background: BackgroundWork | undefined;

  beforeEach(async () => {
    clock = fixedClock(T0);
    env = await createTestCore({ clock, newId: sequentialIds('r') }, { AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' });
    principal = { applicationId: await env.core.accounts.applications.defaultApplicationId(), via: 'local' };
  });
  afterEach(async () => {
    await background?.stop();
    background = undefined;
    await receiver?.close();
    receiver = undefined;
    env.close();
  });

  const retention = (db: Database = env.db, chunkRows?: number) =>
    createRetention(
      { db, clock },
      { interested: () => env.core.notifications.outbox.interested(), ...(chunkRows ? { chunkRows } : {}) },
    );
  /** Records `count` events now, through the outbox's own recorder; returns their seqs. */
  const record = async (count: number): Promise<number[]> => {
    const recordEvent = eventRecorder(env.core.deps);
    const before = await maxSeq();
    await env.db.write(async (tx) => {
      for (let index = 0; index < count; index++) {
        await recordEvent(tx, {
          applicationId: principal.applicationId,
          type: 'grant.updated',
          object: { id: `obj_${before + index}` },
        });
      }
    });
    return (await seqs()).filter((seq) => seq > before);
  };
  const seqs = async () =>
    (
      await env.db.orm
        .select({ seq: tables.outboxEvents.seq })
        .from(tables.outboxEvents)
        .orderBy(asc(tables.outboxEvents.seq))
    ).map((row) => row.seq);
  const maxSeq = async () => (await seqs()).at(-1) ?? 0;
  const jobIds = async () =>
    (await env.db.orm.select({ id: tables.jobs.id }).from(tables.jobs)).map((row) => row.id).sort();
  /** A job of kind `test` given up now (no worker runs in these tests). */
  const deadJob = async (): Promise<string> => {
    const { id } = await env.core.jobs.queue.enqueue({ kind: 'test', payload: {} });
    const [claimed] = await env.core.jobs.queue.claim({ owner: 'tester', kinds: ['test'], limit: 1, leaseMs: 60_000 });
    expect(claimed?.id).toBe(id);
    expect(await env.core.jobs.queue.giveUp(claimed!, 'tester', 'no more')).toBe(true);
    return id;
  };
  const createWebhook = async (triggerTypes: ('grant.created' | 'grant.updated')[]) => {
    receiver = await startReceiver();
    const created = await env.core.notifications.webhooks.create(principal, {
      webhook_url: receiver.url,
      trigger_types: triggerTypes,
    });
    const [row] = await env.db.orm.select().from(tables.webhooks).where(eq(tables.webhooks.id, created.id));
    return row!;
  };

  it('deletes events dispatched more than 24 h ago and keeps younger ones and the newest event', async () => {
    expect(DISPATCHED_EVENT_RETENTION_MS).toBe(24 * HOUR);
    const first = await record(3);
    expect(await env.core.notifications.outbox.dispatchBatch()).toBe(3);
    clock.advance(HOUR);
    const second = await record(2);
    expect(await env.core.notifications.outbox.dispatchBatch()).toBe(2);

    clock.advance(23 * HOUR); // the first batch was dispatched exactly 24 h ago: not more
    expect(await retention().purge()).toEqual({
      dispatchedEvents: 0,
      undispatchedEvents: 0,
      deadJobs: 0,
      lapsedClaims: 0,
    });
    expect(await seqs()).toEqual([...first, ...second]);

    clock.advance(SECOND);
    expect(await retention().purge()).toEqual({
      dispatchedEvents: 3,
      undispatchedEvents: 0,
      deadJobs: 0,
      lapsedClaims: 0,
    });
    expect(await seqs()).toEqual(second);

    clock.advance(30 * DAY); // every row is old now; the newest stays
    expect(await retention().purge()).toEqual({
      dispatchedEvents: 1,
      undispatchedEvents: 0,
      deadJobs: 0,
      lapsedClaims: 0,
    });
    expect(await seqs()).toEqual([second[1]]);
  });

  it('deletes undispatched events after the 72 h give-up window while no webhook is delivering, never the newest', async () => {
    expect(UNDISPATCHED_EVENT_RETENTION_MS).toBe(72 * HOUR);
    const old = await record(2);
    clock.advance(HOUR);
    const younger = await record(1);
    clock.advance(HOUR);
    const newest = await record(1);

    clock.set(new Date(new Date(T0).getTime() + 72 * HOUR).toISOString()); // exactly the window: kept
    expect((await retention().purge()).undispatchedEvents).toBe(0);
    expect(await seqs()).toEqual([...old, ...younger, ...newest]);

    clock.advance(SECOND);
    expect(await retention().purge()).toEqual({
      dispatchedEvents: 0,
      undispatchedEvents: 2,
      deadJobs: 0,
      lapsedClaims: 0,
    });
    expect(await seqs()).toEqual([...younger, ...newest]);

    clock.advance(30 * DAY);
    expect((await retention().purge()).undispatchedEvents).toBe(1);
    expect(await seqs()).toEqual(newest);
  });

  it('keeps old undispatched events while a webhook is delivering (they are still owed), and deletes them once it is paused', async () => {
    const webhook = await createWebhook(['grant.updated']);
    const owed = await record(3);
    expect(owed[0]).toBeGreaterThan(webhook.startSeq);
    clock.advance(UNDISPATCHED_EVENT_RETENTION_MS + HOUR); // e.g. the service was down

    expect((await retention().purge()).undispatchedEvents).toBe(0);
    expect(await seqs()).toEqual(owed);

    await env.core.notifications.webhooks.update(principal, { webhook_id: webhook.id, status: 'pause' });
    expect((await retention().purge()).undispatchedEvents).toBe(2);
    expect(await seqs()).toEqual([owed[2]]);
  });

  it('deletes dead jobs 7 days after they were given up; queued and retrying jobs stay', async () => {
    expect(DEAD_JOB_RETENTION_MS).toBe(7 * DAY);
    const firstDead = await deadJob();
    const queued = await env.core.jobs.queue.enqueue({ kind: 'queued', payload: {} });
    const retrying = await env.core.jobs.queue.enqueue({ kind: 'retrying', payload: {} });
    const [claimed] = await env.core.jobs.queue.claim({
      owner: 'tester',
      kinds: ['retrying'],
      limit: 1,
      leaseMs: 60_000,
    });
    expect(
      await env.core.jobs.queue.retry(claimed!, 'tester', new Date(clock.now().getTime() + 30 * DAY), 'later'),
    ).toBe(true);
    clock.advance(2 * DAY);
    const secondDead = await deadJob();
    const all = [firstDead, queued.id, retrying.id, secondDead].sort();

    clock.advance(5 * DAY); // the first was given up exactly 7 days ago: not more
    expect((await retention().purge()).deadJobs).toBe(0);
    expect(await jobIds()).toEqual(all);

    clock.advance(1);
    expect(await retention().purge()).toEqual({
      dispatchedEvents: 0,
      undispatchedEvents: 0,
      deadJobs: 1,
      lapsedClaims: 0,
    });
    expect(await jobIds()).toEqual(all.filter((id) => id !== firstDead));

    clock.advance(60 * DAY);
    expect((await retention().purge()).deadJobs).toBe(1);
    expect(await jobIds()).toEqual([queued.id, retrying.id].sort());
  });

  it("deletes thread claims a day after they lapsed, never a live one or a test-mode application's", async () => {
    const now = clock.now().getTime();
    await env.db.write(async (tx) => {
      await tx.insert(tables.applications).values({
        id: 'test_mode_app',
        name: 'on a test clock',
        plan: 'trial',
        createdAt: 1,
        updatedAt: 1,
        testClockAt: now,
      });
      const claim = (threadId: string, expiresAt: number, applicationId = principal.applicationId) => ({
        grantId: 'grant_gone',
        threadId,
        applicationId,
        tokenHash: 'h',
        keyName: 'agent',
        expiresAt,
        createdAt: expiresAt - HOUR,
      });
      await tx
        .insert(tables.threadClaims)
        .values([
          claim('lapsed_long_ago', now - 2 * DAY),
          claim('lapsed_lately', now - HOUR),
          claim('live', now + HOUR),
          claim('test_mode', now - 2 * DAY, 'test_mode_app'),
        ]);
    });
    const left = async () =>
      (await env.db.orm.select({ id: tables.threadClaims.threadId }).from(tables.threadClaims))
        .map((row) => row.id)
        .sort();
    expect(await retention().purge()).toMatchObject({ lapsedClaims: 1 });
    expect(await left()).toEqual(['lapsed_lately', 'live', 'test_mode']);
    clock.advance(DAY);
    expect(await retention().purge()).toMatchObject({ lapsedClaims: 1 });
    expect(await left()).toEqual(['live', 'test_mode']);
  });

  it('deletes 2,500 rows in transactions of at most 1,000, letting other writes in between', async () => {
    const recorded = await record(2_500);
    expect(await env.core.notifications.outbox.dispatchBatch(3_000)).toBe(2_500);
    clock.advance(DISPATCHED_EVENT_RETENTION_MS + HOUR);

    const commits: string[] = [];
    let other: Promise<void> | undefined;
    const recordEvent = eventRecorder(env.core.deps);
    const counting: Database = {
      ...env.db,
      async write(work) {
        const result = await env.db.write(work);
        commits.push(`purge:${(result as unknown[]).length}`);
        // A write queued right after the first chunk commits: it must not wait for the whole purge.
        other ??= env.db
          .write((tx) =>
            recordEvent(tx, { applicationId: principal.applicationId, type: 'grant.updated', object: { id: 'other' } }),
          )
          .then(() => void commits.push('other'));
        return result;
      },
    };
    const purged = await retention(counting).purge();
    await other;
    const otherSeq = await maxSeq();

    // The other event became the newest, so the previously newest row went too.
    expect(purged).toEqual({ dispatchedEvents: 2_500, undispatchedEvents: 0, deadJobs: 0, lapsedClaims: 0 });
    expect(commits).toEqual(['purge:1000', 'other', 'purge:1000', 'purge:500']);
    expect(otherSeq).toBeGreaterThan(recorded.at(-1)!);
    expect(await seqs()).toEqual([otherSeq]);
  });

  it('walks undispatched events page by page in seq order and stops at the first page that reaches a young one', async () => {
    await record(5);
    clock.advance(UNDISPATCHED_EVENT_RETENTION_MS);
    const young = await record(3);
    clock.advance(2 * HOUR);

    const deletedPerWrite: number[] = [];
    const counting: Database = {
      ...env.db,
      async write(work) {
        const result = await env.db.write(work);
        deletedPerWrite.push((result as unknown[]).length);
        return result;
      },
    };
    expect(await retention(counting, 2).purge()).toEqual({
      dispatchedEvents: 0,
      undispatchedEvents: 5,
      deadJobs: 0,
      lapsedClaims: 0,
    });
    expect(deletedPerWrite).toEqual([2, 2, 1]);
    expect(await seqs()).toEqual(young);
  });

  it('a webhook created after a purge starts after the newest event and gets only new events', async () => {
    await env.core.accounts.domains.ensureVerified(principal.applicationId, [DOMAIN]);
    const old = await record(5);
    clock.advance(UNDISPATCHED_EVENT_RETENTION_MS + HOUR);
    expect((await retention().purge()).undispatchedEvents).toBe(4);
    expect(await seqs()).toEqual([old[4]]);

    const webhook = await createWebhook(['grant.created', 'grant.updated']);
    expect(webhook.startSeq).toBe(old[4]);
    const { grant } = await env.core.accounts.grants.create(principal, {
      provider: 'nylas',
      settings: { email: `agent@${DOMAIN}` },
    });
    const [created] = await env.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(eq(tables.outboxEvents.type, 'grant.created'));
    expect(created!.seq).toBeGreaterThan(old[4]!);

    background = startBackgroundWork(env.core, { pollIntervalMs: 20 });
    await receiver!.waitForDeliveries(1);
    // Everything pending is fanned out and delivered: the kept old event (seq = start_seq) was not owed.
    await eventually(
      async () => {
        const pending = await env.db.orm
          .select()
          .from(tables.outboxEvents)
          .where(isNull(tables.outboxEvents.dispatchedAt));
        return pending.length === 0 && (await jobIds()).length === 0;
      },
      10_000,
      'outbox dispatched and deliveries done',
    );
    expect(
      receiver!.deliveries.map((delivery) => [delivery.json.type, delivery.json.id, delivery.json.data.object.id]),
    ).toEqual([['grant.created', created!.id, grant.id]]);
  });

  it('runs from the background role: once shortly after start, and again when woken', async () => {
    await record(3);
    expect(await env.core.notifications.outbox.dispatchBatch()).toBe(3);
    const dead = await deadJob();
    clock.advance(DEAD_JOB_RETENTION_MS + HOUR);
    const later = await record(2);
    expect(await env.core.notifications.outbox.dispatchBatch()).toBe(2);
    const live = await env.core.jobs.queue.enqueue({
      kind: 'nobody-handles-this',
      payload: {},
      runAt: new Date(clock.now().getTime() + 30 * DAY),
    });

    background = startBackgroundWork(env.core, { pollIntervalMs: 20, purgeFirstDelayMs: 20 });
    await eventually(async () => (await seqs()).length === 2, 10_000, 'first purge');
    expect(await seqs()).toEqual(later);
    expect(await jobIds()).toEqual([live.id]);
    expect(await jobIds()).not.toContain(dead);

    clock.advance(DISPATCHED_EVENT_RETENTION_MS + HOUR);
    background.wake();
    await eventually(async () => (await seqs()).length === 1, 10_000, 'purge on wake');
    expect(await seqs()).toEqual([later[1]]);
    expect(await jobIds()).toEqual([live.id]);
  });
});
