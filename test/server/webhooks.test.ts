import { createHmac } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { WebhookTriggers } from 'nylas';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { verifyWebhookSignature, type Job } from '../../src/index.js';
import { fixedClock } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { eventually, recordingNotifier, startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';
import { sdkError } from '../helpers/sdk.js';

/** The rejection of an SDK call, which must be a NylasApiError. */

const TIMEOUT_MS = 400;

describe('webhooks through the nylas SDK, delivered to real loopback receivers', () => {
  const clock = fixedClock('2026-03-30T00:30:00Z');
  const notifier = recordingNotifier();
  let service: TestService;
  let receivers: WebhookReceiver[] = [];
  let grantCount = 0;

  const receiver = async () => {
    const started = await startReceiver();
    receivers.push(started);
    return started;
  };
  /** A new Agent Account: records grant.created. */
  const createGrant = async () => {
    grantCount += 1;
    const created = await service.nylas.auth.customAuthentication({
      requestBody: { provider: 'nylas', settings: { email: `agent${grantCount}@hooks.agentpost.localhost` } },
    });
    return created.data.id;
  };
  /** The delivery job of a webhook (there is one at a time in these tests), as stored. */
  const deliveryJob = async (webhookId: string): Promise<Job | undefined> => {
    const rows = await service.core.deps.db.orm.select().from(tables.jobs);
    return rows.find((row) => row.kind === 'webhook.deliver' && row.payload.webhook_id === webhookId);
  };
  /** Waits until attempt `attempt` has been recorded, then moves the clock to the retry time and wakes the worker. */
  const advanceToRetry = async (webhookId: string, attempt: number) => {
    const job = await eventually(
      async () => {
        const current = await deliveryJob(webhookId);
        return current && current.attempts === attempt && current.leaseOwner === null && current.deadAt === null
          ? current
          : undefined;
      },
      10_000,
      `attempt ${attempt} recorded`,
    );
    expect(job.runAt).toBeGreaterThan(clock.now().getTime());
    clock.set(new Date(job.runAt).toISOString());
    service.background.wake();
    return job;
  };
  const webhookRow = async (id: string) =>
    (await service.core.deps.db.orm.select().from(tables.webhooks)).find((row) => row.id === id)!;

  beforeAll(async () => {
    service = await startTestService({
      env: {
        AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true',
        AGENTPOST_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        AGENTPOST_WORKER_POLL_MS: '50',
      },
      deps: { clock, notifier },
    });
    const domain = await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Hooks', domain_address: 'hooks.agentpost.localhost' },
    });
    expect(domain.status).toBe(200);
  });
  afterEach(async () => {
    // Each test owns its subscriptions: remove them so the next test's events reach only its own.
    const { data } = await service.nylas.webhooks.list();
    for (const webhook of data) await service.nylas.webhooks.destroy({ webhookId: webhook.id });
    await Promise.all(receivers.map((item) => item.close()));
    receivers = [];
  });
  afterAll(async () => {
    await service?.close();
  });

  it('creates (after the challenge), lists, finds, updates, rotates and deletes webhooks with the SDK', async () => {
    const endpoint = await receiver();
    const { data: created } = await service.nylas.webhooks.create({
      requestBody: {
        triggerTypes: [WebhookTriggers.MessageCreated, WebhookTriggers.EventUpdated],
        webhookUrl: endpoint.url,
        description: 'inbox watcher',
        notificationEmailAddresses: ['ops@example.com'],
      },
    });
    expect(endpoint.challenges).toHaveLength(1);
    expect(endpoint.challenges[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(created).toMatchObject({
      triggerTypes: ['message.created', 'event.updated'],
      webhookUrl: endpoint.url,
      description: 'inbox watcher',
      status: 'active',
      notificationEmailAddresses: ['ops@example.com'],
      createdAt: Math.floor(clock.now().getTime() / 1000),
    });
    expect(created.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const listed = await service.nylas.webhooks.list();
    expect(listed.data.map((item) => item.id)).toEqual([created.id]);
    expect(listed.data[0]).not.toHaveProperty('webhookSecret');
    const found = await service.nylas.webhooks.find({ webhookId: created.id });
    expect(found.data).toMatchObject({ id: created.id, status: 'active' });
    expect(found.data).not.toHaveProperty('webhookSecret');

    const updated = await service.nylas.webhooks.update({
      webhookId: created.id,
      requestBody: { description: 'renamed', triggerTypes: [WebhookTriggers.GrantCreated] },
    });
    expect(updated.data).toMatchObject({ description: 'renamed', triggerTypes: ['grant.created'], status: 'active' });
    expect(endpoint.challenges).toHaveLength(1); // no switch to active, same URL: no new challenge

    const paused = await service.nylas.webhooks.update({
      webhookId: created.id,
      requestBody: { status: 'pause' } as never,
    });
    expect(paused.data.status).toBe('pause');
    const resumed = await service.nylas.webhooks.update({
      webhookId: created.id,
      requestBody: { status: 'active' } as never,
    });
    expect(resumed.data.status).toBe('active');
    expect(endpoint.challenges).toHaveLength(2); // the switch to active was challenged

    const rotated = await service.nylas.webhooks.rotateSecret({ webhookId: created.id });
    expect(rotated.data.webhookSecret).toMatch(/^whsec_/);
    expect(rotated.data.webhookSecret).not.toBe(created.webhookSecret);

    const addresses = await service.nylas.webhooks.ipAddresses();
    expect(Array.isArray(addresses.data.ipAddresses)).toBe(true);
    expect(addresses.data.updatedAt).toBe(Math.floor(clock.now().getTime() / 1000));

    const deleted = await service.nylas.webhooks.destroy({ webhookId: created.id });
    expect(deleted.data).toEqual({ status: 'success' });
    expect((await sdkError(service.nylas.webhooks.find({ webhookId: created.id }))).statusCode).toBe(404);
    expect((await service.nylas.webhooks.list()).data).toEqual([]);
  });

  it('validates trigger types against the full list and the URL', async () => {
    const endpoint = await receiver();
    const bad = await sdkError(
      service.nylas.webhooks.create({
        requestBody: { triggerTypes: ['message.exploded' as WebhookTriggers], webhookUrl: endpoint.url },
      }),
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.message).toContain('trigger_types.0: "message.exploded" is not a webhook trigger type');
    const none = await sdkError(
      service.nylas.webhooks.create({ requestBody: { triggerTypes: [], webhookUrl: endpoint.url } }),
    );
    expect(none.message).toContain('trigger_types');
    const url = await sdkError(
      service.nylas.webhooks.create({
        requestBody: { triggerTypes: [WebhookTriggers.GrantCreated], webhookUrl: 'mailto:ops@example.com' },
      }),
    );
    expect(url.message).toContain('webhook_url');
    // Every trigger the SDK knows is accepted.
    const all = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: Object.values(WebhookTriggers), webhookUrl: endpoint.url },
    });
    expect(all.data.triggerTypes).toHaveLength(Object.values(WebhookTriggers).length);
    expect(endpoint.challenges).toHaveLength(1);
  });

  it('refuses a webhook whose endpoint does not echo the challenge exactly, in time, with 200 and without a redirect', async () => {
    const endpoint = await receiver();
    const other = await receiver();
    const create = () =>
      service.nylas.webhooks.create({
        requestBody: { triggerTypes: [WebhookTriggers.GrantCreated], webhookUrl: endpoint.url },
      });

    endpoint.onChallenge = (value, response) => response.writeHead(200).end(`${value}\n`);
    expect((await sdkError(create())).message).toContain(
      'verification failed: it answered 200 but the body was not exactly the challenge value',
    );

    endpoint.onChallenge = (value, response) => response.writeHead(404).end(value);
    const notFound = await sdkError(create());
    expect(notFound.statusCode).toBe(400);
    expect(notFound.message).toContain('it answered HTTP 404');

    // The challenge's own 10-second deadline: test/server/webhook-challenge-deadline.test.ts.

    endpoint.onChallenge = (value, response) =>
      response.writeHead(302, { location: `${other.url}?challenge=${value}` }).end();
    expect((await sdkError(create())).message).toContain('redirects are not followed');
    expect(other.challenges).toEqual([]);

    expect((await service.nylas.webhooks.list()).data).toEqual([]);
    expect(endpoint.challenges).toHaveLength(3);

    // A failed challenge on a switch to active leaves the webhook paused.
    endpoint.onChallenge = (value, response) => response.writeHead(200).end(value);
    const { data: webhook } = await create();
    await service.nylas.webhooks.update({ webhookId: webhook.id, requestBody: { status: 'pause' } as never });
    endpoint.onChallenge = (_value, response) => response.writeHead(500).end();
    expect(
      (
        await sdkError(
          service.nylas.webhooks.update({ webhookId: webhook.id, requestBody: { status: 'active' } as never }),
        )
      ).message,
    ).toContain('HTTP 500');
    expect((await service.nylas.webhooks.find({ webhookId: webhook.id })).data.status).toBe('pause');
    // So does a new URL that fails its challenge: nothing changes.
    other.onChallenge = (_value, response) => response.writeHead(403).end();
    expect(
      (
        await sdkError(
          service.nylas.webhooks.update({
            webhookId: webhook.id,
            requestBody: { webhookUrl: other.url, status: 'active' } as never,
          }),
        )
      ).message,
    ).toContain('HTTP 403');
    expect((await service.nylas.webhooks.find({ webhookId: webhook.id })).data).toMatchObject({
      webhookUrl: endpoint.url,
      status: 'pause',
    });
  });

  it('delivers signed notifications that the receiver verifies with both schemes', async () => {
    const endpoint = await receiver();
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: {
        triggerTypes: [WebhookTriggers.GrantCreated, WebhookTriggers.GrantUpdated],
        webhookUrl: endpoint.url,
      },
    });
    const grantId = await createGrant();
    const [delivery] = await endpoint.waitForDeliveries(1);
    const applicationId = await service.core.accounts.applications.defaultApplicationId();

    expect(delivery!.json).toMatchObject({
      specversion: '1.0',
      type: 'grant.created',
      source: '/nylas/system',
      time: Math.floor(clock.now().getTime() / 1000),
      webhook_delivery_attempt: 1,
      data: {
        application_id: applicationId,
        grant_id: grantId,
        object: { id: grantId, email: `agent${grantCount}@hooks.agentpost.localhost` },
      },
    });
    const headers = delivery!.headers;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toBe(delivery!.json.id);
    // Independent checks with node:crypto over the exact body bytes.
    expect(headers['x-nylas-signature']).toBe(
      createHmac('sha256', webhook.webhookSecret).update(delivery!.body).digest('hex'),
    );
    const key = Buffer.from(webhook.webhookSecret.slice('whsec_'.length), 'base64');
    const signed = `${String(headers['webhook-id'])}.${String(headers['webhook-timestamp'])}.${delivery!.body.toString('utf8')}`;
    expect(headers['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);
    // And with the core's receiver helper.
    const now = clock.now();
    expect(verifyWebhookSignature({ secret: webhook.webhookSecret, body: delivery!.body, headers, now })).toMatchObject(
      { valid: true, id: delivery!.json.id },
    );
    expect(
      verifyWebhookSignature({ secret: webhook.webhookSecret, body: delivery!.body, headers, scheme: 'nylas' }).valid,
    ).toBe(true);
    expect(verifyWebhookSignature({ secret: 'whsec_AAAA', body: delivery!.body, headers, now }).valid).toBe(false);

    await service.nylas.grants.update({ grantId, requestBody: { name: 'Renamed' } as never });
    const [, updated] = await endpoint.waitForDeliveries(2);
    expect(updated!.json).toMatchObject({ type: 'grant.updated', data: { object: { id: grantId, name: 'Renamed' } } });
    expect(updated!.json.id).not.toBe(delivery!.json.id);
    await eventually(async () => (await deliveryJob(webhook.id)) === undefined, 5_000, 'jobs completed');
  });

  it('sends a new webhook only the events recorded after it was created', async () => {
    const before = await createGrant(); // no webhook yet: this event waits undispatched
    const endpoint = await receiver();
    await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.GrantCreated], webhookUrl: endpoint.url },
    });
    const after = await createGrant();
    await endpoint.waitForDeliveries(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(endpoint.deliveries.map((item) => item.json.data.object.id)).toEqual([after]);
    expect(before).not.toBe(after);
  });

  it('gzips bodies for compressed_delivery and signs the compressed bytes', async () => {
    const endpoint = await receiver();
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: {
        triggerTypes: [WebhookTriggers.GrantCreated],
        webhookUrl: endpoint.url,
        compressedDelivery: true,
      } as never,
    });
    expect(webhook).toMatchObject({ compressedDelivery: true });
    const grantId = await createGrant();
    const [delivery] = await endpoint.waitForDeliveries(1);
    expect(delivery!.headers['content-encoding']).toBe('gzip');
    expect(delivery!.headers['x-nylas-signature']).toBe(
      createHmac('sha256', webhook.webhookSecret).update(delivery!.body).digest('hex'),
    );
    expect(
      verifyWebhookSignature({
        secret: webhook.webhookSecret,
        body: delivery!.body,
        headers: delivery!.headers,
        now: clock.now(),
      }).valid,
    ).toBe(true);
    expect(JSON.parse(gunzipSync(delivery!.body).toString('utf8'))).toMatchObject({
      type: 'grant.created',
      data: { object: { id: grantId } },
    });
  });

  it('retries a failing endpoint with backoff; the same notification arrives with attempt 4 and one webhook-id', async () => {
    const endpoint = await receiver();
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.GrantCreated], webhookUrl: endpoint.url },
    });
    let answered = 0;
    endpoint.respond = () => (++answered <= 3 ? 500 : 200);
    const started = clock.now().getTime();
    await createGrant();
    for (const attempt of [1, 2, 3]) await advanceToRetry(webhook.id, attempt);
    const deliveries = await endpoint.waitForDeliveries(4);
    expect(deliveries.map((item) => item.json.webhook_delivery_attempt)).toEqual([1, 2, 3, 4]);
    expect(new Set(deliveries.map((item) => item.headers['webhook-id'])).size).toBe(1);
    expect(new Set(deliveries.map((item) => item.json.id)).size).toBe(1);
    // Exponential backoff: 5 s, 5 min, 30 min after the failed attempts.
    expect(clock.now().getTime() - started).toBe(5_000 + 5 * 60_000 + 30 * 60_000);
    // Each attempt is signed afresh, with the time of that attempt.
    const startSeconds = Math.floor(started / 1000);
    expect(deliveries.map((item) => Number(item.headers['webhook-timestamp']) - startSeconds)).toEqual([
      0, 5, 305, 2105,
    ]);
    for (const item of deliveries) {
      expect(item.headers['x-nylas-signature']).toBe(
        createHmac('sha256', webhook.webhookSecret).update(item.body).digest('hex'),
      );
    }
    await eventually(async () => (await deliveryJob(webhook.id)) === undefined, 5_000, 'the job completed');
    // Three failures within 35 minutes are a blip, not an outage: still active, nobody emailed.
    expect((await service.nylas.webhooks.find({ webhookId: webhook.id })).data.status).toBe('active');
    expect((await webhookRow(webhook.id)).consecutiveFailures).toBe(0);
    expect(notifier.sent.filter((email) => email.subject.includes(webhook.id))).toEqual([]);
  });

  it('marks an endpoint down for the whole window failing, then failed, emailing each time, and stops delivering', async () => {
    const endpoint = await receiver();
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: {
        triggerTypes: [WebhookTriggers.GrantCreated],
        webhookUrl: endpoint.url,
        notificationEmailAddresses: ['ops@example.com', 'dev@example.com'],
      },
    });
    endpoint.respond = () => 503;
    const started = clock.now().getTime();
    await createGrant();
    const statuses: string[] = [];
    let attempt = 1;
    while ((await webhookRow(webhook.id)).status !== 'failed') {
      const job = await eventually(
        async () => {
          const current = await deliveryJob(webhook.id);
          return current && current.leaseOwner === null && current.attempts === attempt ? current : undefined;
        },
        10_000,
        `attempt ${attempt}`,
      );
      statuses.push((await webhookRow(webhook.id)).status);
      if (job.deadAt !== null) break;
      clock.set(new Date(job.runAt).toISOString());
      service.background.wake();
      attempt += 1;
      expect(attempt).toBeLessThan(20);
    }
    // Attempts at 0, 5 s, 5 min, 35 min (failing: ≥ 3 failures over ≥ 15 min) … and the last exactly 72 h in.
    expect(statuses.slice(0, 4)).toEqual(['active', 'active', 'active', 'failing']);
    expect(clock.now().getTime() - started).toBe(72 * 3600_000);
    const row = await webhookRow(webhook.id);
    expect(row).toMatchObject({ status: 'failed', lastError: 'HTTP 503' });
    expect(endpoint.deliveries).toHaveLength(attempt);
    const job = await eventually(
      async () => {
        const current = await deliveryJob(webhook.id);
        return current?.deadAt ? current : undefined;
      },
      5_000,
      'the job given up',
    );
    expect(job.lastError).toContain('now failed');

    const emails = await eventually(
      () => {
        const mine = notifier.sent.filter((email) => email.subject.includes(webhook.id));
        return mine.length === 2 ? mine : undefined;
      },
      5_000,
      'two alert emails',
    );
    expect(emails.map((email) => email.subject)).toEqual([
      `Webhook ${webhook.id} is failing`,
      `Webhook ${webhook.id} is failed`,
    ]);
    expect(emails[0]!.to).toEqual(['ops@example.com', 'dev@example.com']);
    expect(emails[1]!.text).toContain('no more notifications are sent');

    // A failed webhook gets no new notifications…
    await createGrant();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(endpoint.deliveries).toHaveLength(attempt);
    // …until it is set active again, which challenges the endpoint.
    const challenges = endpoint.challenges.length;
    const resumed = await service.nylas.webhooks.update({
      webhookId: webhook.id,
      requestBody: { status: 'active' } as never,
    });
    expect(resumed.data.status).toBe('active');
    expect(endpoint.challenges).toHaveLength(challenges + 1);
    expect((await webhookRow(webhook.id)).consecutiveFailures).toBe(0);
  });

  it('does not follow redirects and does not let a slow endpoint hold a delivery beyond the timeout', async () => {
    const endpoint = await receiver();
    const elsewhere = await receiver();
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.GrantCreated], webhookUrl: endpoint.url },
    });
    endpoint.respond = (_delivery, response) => {
      response.writeHead(307, { location: elsewhere.url }).end();
    };
    await createGrant();
    const first = await advanceToRetry(webhook.id, 1);
    expect(first.lastError).toBe('HTTP 307 (redirects are not followed)');
    expect(elsewhere.deliveries).toEqual([]);

    endpoint.respond = async (_delivery, response) => {
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS + 500));
      if (!response.destroyed) response.writeHead(200).end();
    };
    const second = await advanceToRetry(webhook.id, 2);
    expect(second.lastError).toBe(`no complete response within ${TIMEOUT_MS} ms`);
    expect(endpoint.deliveries).toHaveLength(2);
  });

  it("keeps each application's webhooks to itself (404 for another application)", async () => {
    const endpoint = await receiver();
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.GrantCreated], webhookUrl: endpoint.url },
    });
    const { apiKey } = await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' });
    const other = service.client(apiKey);
    expect((await other.webhooks.list()).data).toEqual([]);
    expect((await sdkError(other.webhooks.find({ webhookId: webhook.id }))).statusCode).toBe(404);
    expect(
      (await sdkError(other.webhooks.update({ webhookId: webhook.id, requestBody: { description: 'mine now' } })))
        .statusCode,
    ).toBe(404);
    expect((await sdkError(other.webhooks.rotateSecret({ webhookId: webhook.id }))).statusCode).toBe(404);
    expect((await sdkError(other.webhooks.destroy({ webhookId: webhook.id }))).statusCode).toBe(404);
    expect((await service.nylas.webhooks.find({ webhookId: webhook.id })).data.description).toBeUndefined();

    // The other application's events do not reach this application's webhook.
    const otherEndpoint = await receiver();
    await other.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.GrantCreated], webhookUrl: otherEndpoint.url },
    });
    await createGrant();
    await endpoint.waitForDeliveries(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(otherEndpoint.deliveries).toEqual([]);
    for (const item of (await other.webhooks.list()).data) await other.webhooks.destroy({ webhookId: item.id });
  });
});

describe('webhook target safety without AGENTPOST_ALLOW_PRIVATE_WEBHOOKS', () => {
  let service: TestService;
  let endpoint: WebhookReceiver;
  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
    endpoint = await startReceiver();
  });
  afterAll(async () => {
    await endpoint?.close();
    await service?.close();
  });

  it('refuses http, private, link-local and loopback targets, also behind a DNS name, before any request', async () => {
    const port = new URL(endpoint.url).port;
    service.dns.hosts.set('loopback.example.com', ['127.0.0.1']);
    service.dns.hosts.set('metadata.example.com', ['169.254.169.254']);
    const refusal = async (webhookUrl: string) => {
      const error = await sdkError(
        service.nylas.webhooks.create({ requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl } }),
      );
      expect(error.statusCode).toBe(400);
      return error.message;
    };
    expect(await refusal('http://169.254.169.254/')).toContain('https only');
    expect(await refusal('http://10.0.0.1/')).toContain('https only');
    expect(await refusal(endpoint.url)).toContain('https only');
    expect(await refusal('https://169.254.169.254/latest/meta-data/')).toContain(
      '169.254.169.254 is a private, loopback, link-local or reserved address',
    );
    expect(await refusal('https://10.0.0.1/')).toContain('10.0.0.1 is a private');
    expect(await refusal(`https://127.0.0.1:${port}/hook`)).toContain('127.0.0.1 is a private');
    expect(await refusal(`https://loopback.example.com:${port}/hook`)).toContain(
      'loopback.example.com resolves to 127.0.0.1',
    );
    expect(await refusal('https://metadata.example.com/')).toContain('resolves to 169.254.169.254');
    expect(await refusal('https://[::ffff:127.0.0.1]/')).toContain('is a private');
    expect(await refusal('https://nowhere.example.com/')).toContain('could not be resolved');
    expect(endpoint.challenges).toEqual([]);
    expect((await service.nylas.webhooks.list()).data).toEqual([]);
  });
});
