/**
 * The webhook delivery runner (src/webhooks/delivery-runner.ts) on a real service and real loopback receivers:
 * a batch drain delivers every notification once and each grant's in event order; a failed notification holds
 * back only the later ones of its grant; a hanging endpoint does not hold back another; connections are reused.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../../storage/index.js';
import { recordEvent } from '../../../src/outbox/outbox.js';
import { fixedClock } from '../../helpers/clock.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { eventually, startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../../helpers/webhooks.js';

/** Long enough that the hanging endpoint's first attempts are still waiting when the healthy one has everything. */
const TIMEOUT_MS = 8_000;

describe('webhook delivery runner', () => {
  const clock = fixedClock('2026-03-30T00:30:00Z');
  let service: TestService;
  let applicationId: string;
  let receivers: WebhookReceiver[] = [];
  let eventCount = 0;

  const receiver = async () => {
    const started = await startReceiver();
    receivers.push(started);
    return started;
  };
  const subscribe = async (url: string) => {
    const { data } = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: ['message.updated' as never], webhookUrl: url },
    });
    return data.id;
  };
  /** Records `message.updated` events in one transaction: one per entry, for that grant, numbered in order. */
  const record = async (grants: readonly string[]) => {
    const numbered = grants.map((grant) => ({ grant, index: eventCount++ }));
    await service.core.deps.db.write(async (tx) => {
      for (const { grant, index } of numbered) {
        await recordEvent(tx, {
          id: `event-${index}`,
          applicationId,
          grantId: grant,
          type: 'message.updated',
          objectId: `message-${index}`,
          object: { id: `message-${index}`, grant_id: grant, object: 'message', index },
          createdAt: Math.floor(clock.now().getTime() / 1000),
        });
      }
    });
    return numbered;
  };
  const indexesOf = (deliveries: readonly ReceivedDelivery[], grant: string) =>
    deliveries.filter((item) => item.json.data.grant_id === grant).map((item) => item.json.data.object.index as number);
  const liveJobs = async () =>
    (await service.core.deps.db.orm.select().from(tables.jobs)).filter(
      (job) => job.kind === 'webhook.deliver' && job.deadAt === null,
    );

  beforeAll(async () => {
    service = await startTestService({
      env: {
        AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
        AGENTPOST_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        AGENTPOST_WORKER_POLL_MS: '50',
      },
      deps: { clock },
    });
    const [application] = await service.core.deps.db.orm
      .select({ id: tables.applications.id })
      .from(tables.applications);
    applicationId = application!.id;
  });
  afterEach(async () => {
    const { data } = await service.nylas.webhooks.list();
    for (const webhook of data) await service.nylas.webhooks.destroy({ webhookId: webhook.id });
    await Promise.all(receivers.map((item) => item.close()));
    receivers = [];
  });
  afterAll(async () => {
    await service?.close();
  });

  it('drains a backlog of many grants: every notification once, each grant in event order, connections reused', async () => {
    const endpoint = await receiver();
    await subscribe(endpoint.url);
    const grants = ['grant-a', 'grant-b', 'grant-c', 'grant-d', 'grant-e'];
    // Several transactions, so the backlog spans several dispatch batches and claims.
    const recorded = [];
    for (let batch = 0; batch < 6; batch += 1)
      recorded.push(
        ...(await record(Array.from({ length: 50 }, (_, index) => grants[(index * 7 + batch) % grants.length]!))),
      );
    const deliveries = await endpoint.waitForDeliveries(recorded.length, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(deliveries).toHaveLength(recorded.length);
    expect(new Set(deliveries.map((item) => item.json.id)).size).toBe(recorded.length);
    for (const grant of grants) {
      expect(indexesOf(deliveries, grant)).toEqual(
        recorded.filter((item) => item.grant === grant).map((item) => item.index),
      );
    }
    expect(deliveries.every((item) => item.json.webhook_delivery_attempt === 1)).toBe(true);
    // 300 POSTs over kept-alive connections: far fewer connections than requests (at most one per request in flight).
    expect(endpoint.connections).toBeGreaterThan(0);
    expect(endpoint.connections).toBeLessThanOrEqual(16);
    await eventually(async () => (await liveJobs()).length === 0, 5_000, 'the jobs deleted');
  });

  it('holds back only the later notifications of the grant whose notification failed, until its retry succeeds', async () => {
    const endpoint = await receiver();
    const webhookId = await subscribe(endpoint.url);
    let failedOnce = false;
    const xs: number[] = [];
    endpoint.respond = (delivery) => {
      if (!failedOnce && delivery.json.data.grant_id === 'grant-x' && delivery.json.data.object.index === xs[1]) {
        failedOnce = true;
        return 503;
      }
      return 200;
    };
    const recorded = await record([
      'grant-x',
      'grant-y',
      'grant-x',
      'grant-y',
      'grant-x',
      'grant-y',
      'grant-x',
      'grant-y',
    ]);
    xs.push(...recorded.filter((item) => item.grant === 'grant-x').map((item) => item.index));
    // grant-y goes on; grant-x stops at its failed second notification.
    await eventually(() => indexesOf(endpoint.deliveries, 'grant-y').length === 4, 10_000, 'grant-y delivered');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(indexesOf(endpoint.deliveries, 'grant-x')).toEqual([xs[0], xs[1]]);
    const waiting = await liveJobs();
    expect(waiting).toHaveLength(3);
    const failed = waiting.find((job) => job.attempts === 1)!;
    expect(failed.payload).toMatchObject({ webhook_id: webhookId, notification: { id: `event-${xs[1]}` } });
    // The two behind it were given back unrun: no attempt counted, no lease.
    expect(
      waiting.filter((job) => job.id !== failed.id).every((job) => job.attempts === 0 && job.leaseOwner === null),
    ).toBe(true);

    clock.set(new Date(failed.runAt).toISOString());
    service.background.wake();
    await eventually(() => indexesOf(endpoint.deliveries, 'grant-x').length === 5, 10_000, 'grant-x delivered');
    const received = endpoint.deliveries.filter((item) => item.json.data.grant_id === 'grant-x');
    expect(received.map((item) => [item.json.data.object.index, item.json.webhook_delivery_attempt])).toEqual([
      [xs[0], 1],
      [xs[1], 1],
      [xs[1], 2],
      [xs[2], 1],
      [xs[3], 1],
    ]);
    await eventually(async () => (await liveJobs()).length === 0, 5_000, 'the jobs deleted');
  });

  it('does not let a hanging endpoint hold back another endpoint', async () => {
    const hanging = await receiver();
    const healthy = await receiver();
    hanging.respond = () => new Promise<number>(() => undefined); // never answers: each attempt runs into the timeout
    await subscribe(hanging.url);
    await subscribe(healthy.url);
    const grants = Array.from({ length: 40 }, (_, index) => `grant-h${index}`);
    await record(grants);
    await healthy.waitForDeliveries(grants.length, TIMEOUT_MS / 2);
    // The hanging endpoint has as many requests in flight as one endpoint may (16), none of them answered yet.
    await eventually(() => hanging.deliveries.length >= 16, TIMEOUT_MS / 2, '16 requests in flight');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(hanging.deliveries).toHaveLength(16);
    // The healthy endpoint's jobs are done and deleted; the hanging one's wait, none failed yet.
    const hangingJobs = await liveJobs();
    expect(hangingJobs).toHaveLength(40);
    expect(hangingJobs.every((job) => job.lastError === null)).toBe(true);
  });
});
