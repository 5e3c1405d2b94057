/**
 * Operations endpoints on the real service: `/livez` (and its alias `/healthz`), `/readyz` against a database that
 * really goes away and comes back, `/metrics` behind its token with counts that match what was done (SMTP in,
 * outbound through a relay, webhooks, jobs, HTTP), and the access log.
 */
import { rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/index.js';
import { createService } from '../../server/main.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { startTestService, tempDir, testConfig, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const TOKEN = 'metrics-token-for-the-operations-test';

/** A logger that keeps every line. */
function recordingLogger(): Logger & { lines: { level: string; message: string; fields: Record<string, unknown> }[] } {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, message, fields });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** The samples of a Prometheus exposition: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) out.set(match[1]!, Number(match[2]));
  }
  return out;
}

describe('operations endpoints', () => {
  let service: TestService;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  const logger = recordingLogger();

  beforeAll(async () => {
    sink = await startSmtpSink();
    receiver = await startReceiver();
    service = await startTestService({
      env: {
        AGENTPOST_METRICS_TOKEN: TOKEN,
        AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
        AGENTPOST_WORKER_POLL_MS: '100',
      },
      deps: { logger },
    });
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
    await receiver?.close();
  });

  it('/livez and /healthz answer 200 with the threads record; /readyz is ready', async () => {
    for (const path of ['/livez', '/healthz']) {
      const response = await request(service.url, 'GET', path);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ok', threads: {} });
    }
    const ready = await request(service.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: 'ready',
      checks: { database: 'ok', migrations: 'ok', workers: 'ok' },
      threads: {},
    });
  });

  it('/metrics needs the bearer token', async () => {
    expect((await request(service.url, 'GET', '/metrics')).status).toBe(401);
    expect((await request(service.url, 'GET', '/metrics', { key: 'not-the-metrics-token-at-all' })).status).toBe(401);
    // An API key of the service is not the metrics token either.
    expect((await request(service.url, 'GET', '/metrics', { key: service.apiKey })).status).toBe(401);
    const response = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
  });

  it('/readyz answers 503 while the database file is gone and 200 once it is back', async () => {
    const folder = dirname(service.config.databaseUrl.slice('file:'.length));
    await rename(folder, `${folder}-away`);
    try {
      const away = await request(service.url, 'GET', '/readyz');
      expect(away.status).toBe(503);
      expect(away.body.status).toBe('not ready');
      expect(away.body.checks.database).toContain('cannot be read');
      // Liveness is not readiness: the process still answers.
      expect((await request(service.url, 'GET', '/livez')).status).toBe(200);
    } finally {
      await rename(`${folder}-away`, folder);
    }
    expect((await request(service.url, 'GET', '/readyz')).status).toBe(200);
  });

  it('/metrics counts match what was done: SMTP in, outbound attempts, webhooks, jobs and HTTP requests', async () => {
    const before = samples(
      await (await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text(),
    );
    const email = 'ops@metrics.agentpost.localhost';
    const grantId = await createMailbox(service, email);
    await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl: receiver.url },
    });
    // The first notification fails (a 500), every other one is taken.
    let posts = 0;
    receiver.respond = () => (++posts === 1 ? 500 : 200);

    // SMTP: 5 messages accepted, 2 sessions refused at RCPT (unknown mailbox).
    for (let index = 0; index < 5; index++) {
      const reply = await sendRaw(
        service.smtpPort,
        'alice@example.com',
        [email],
        `Subject: Number ${index}\r\nFrom: alice@example.com\r\n\r\nHello ${index}\r\n`,
      );
      expect(reply.code).toBe(250);
    }
    for (let index = 0; index < 2; index++) {
      const reply = await sendRaw(
        service.smtpPort,
        'alice@example.com',
        ['nobody@metrics.agentpost.localhost'],
        'Subject: x\r\n\r\nx\r\n',
      );
      expect(reply.code).toBe(550);
    }

    // Outbound through the relay: one recipient taken, one deferred (451).
    sink.onRecipient = (address) =>
      address === 'later@example.org' ? { code: 451, message: '4.3.0 try again later' } : undefined;
    await service.nylas.messages.send({
      identifier: grantId,
      requestBody: { to: [{ email: 'bob@example.com' }], subject: 'Out 1', body: 'one' },
    });
    await service.nylas.messages.send({
      identifier: grantId,
      requestBody: { to: [{ email: 'later@example.org' }], subject: 'Out 2', body: 'two' },
    });
    await sink.waitFor(1);

    // 5 inbound messages → 5 notifications (the sent copies are message.created too: 7), one of them failed once
    // and was retried.
    const notifications = 7;
    await receiver.waitForDeliveries(notifications + 1, 15_000);
    const scrape = async () =>
      samples(await (await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text());
    const delta = (after: Map<string, number>, name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    // Job outcomes are recorded just after the POST returns: wait until every run is counted.
    const after = await eventually(async () => {
      const current = await scrape();
      const deferredDone = delta(current, 'agentpost_outbound_attempts_total{route="remote",outcome="deferred"}') === 1;
      return delta(current, 'agentpost_job_runs_total{kind="webhook.deliver",outcome="done"}') === notifications &&
        deferredDone
        ? current
        : undefined;
    }, 10_000);

    expect(delta(after, 'agentpost_smtp_sessions_total')).toBe(7);
    expect(delta(after, 'agentpost_smtp_replies_total{stage="greeting",code="220"}')).toBe(7);
    expect(delta(after, 'agentpost_smtp_replies_total{stage="mail",code="250"}')).toBe(7);
    expect(delta(after, 'agentpost_smtp_replies_total{stage="rcpt",code="250"}')).toBe(5);
    expect(delta(after, 'agentpost_smtp_replies_total{stage="rcpt",code="550"}')).toBe(2);
    expect(delta(after, 'agentpost_smtp_replies_total{stage="data",code="250"}')).toBe(5);
    expect(delta(after, 'agentpost_smtp_ingest_seconds_count')).toBe(5);

    expect(delta(after, 'agentpost_outbound_attempts_total{route="remote",outcome="delivered"}')).toBe(1);
    expect(delta(after, 'agentpost_outbound_attempts_total{route="remote",outcome="deferred"}')).toBe(1);
    expect(delta(after, 'agentpost_outbound_failures_total{route="remote",permanent="false"}')).toBe(1);
    // The deferred message waits for its next attempt: one delivery in the queue, scheduled.
    expect(after.get('agentpost_outbound_queue_depth')).toBe(1);
    expect(after.get('agentpost_jobs{kind="mail.deliver",state="scheduled"}')).toBe(1);

    expect(delta(after, 'agentpost_webhook_deliveries_total{outcome="delivered"}')).toBe(notifications);
    expect(delta(after, 'agentpost_webhook_deliveries_total{outcome="failed"}')).toBe(1);
    expect(delta(after, 'agentpost_webhook_failures_total')).toBe(1);
    expect(delta(after, 'agentpost_webhook_lag_seconds_count')).toBe(notifications);
    expect(delta(after, 'agentpost_job_runs_total{kind="webhook.deliver",outcome="retry"}')).toBe(1);
    // The failed notification was retried (5 s later) and taken: 8 POSTs of 7 notifications, no job left.
    expect(new Set(receiver.deliveries.map((delivery) => delivery.json.id)).size).toBe(notifications);
    expect(after.get('agentpost_jobs{kind="webhook.deliver",state="scheduled"}') ?? 0).toBe(0);

    expect(
      delta(
        after,
        'agentpost_http_request_duration_seconds_count{method="POST",route="/v3/grants/:grant_id/messages/send",status="200"}',
      ),
    ).toBe(2);
    expect(
      delta(
        after,
        'agentpost_http_request_duration_seconds_count{method="POST",route="/v3/connect/custom",status="201"}',
      ),
    ).toBe(1);
    // Process metrics come along.
    expect(after.has('process_cpu_user_seconds_total')).toBe(true);
  });

  it('logs one access line per request: method, route pattern, status, ms, request id, application', async () => {
    logger.lines.length = 0;
    const response = await request(service.url, 'GET', '/v3/grants/nope/messages', { key: service.apiKey });
    expect(response.status).toBe(404);
    await request(service.url, 'GET', '/no/such/route');
    const access = logger.lines.filter((line) => line.message === 'request');
    expect(access).toHaveLength(2);
    expect(access[0]).toMatchObject({
      level: 'info',
      fields: {
        method: 'GET',
        route: '/v3/grants/:grant_id/messages',
        status: 404,
        ms: expect.any(Number),
        request_id: response.headers.get('x-request-id'),
        application: await service.core.accounts.applications.defaultApplicationId(),
      },
    });
    expect(access[1]!.fields).toMatchObject({ route: 'unmatched', status: 404, application: null });
  });
});

describe('/readyz of a service whose workers have not started', () => {
  it('answers 503 naming the workers, and /metrics is off without a token', async () => {
    const dir = tempDir();
    const service = await createService(testConfig(`file:${dir.path}/agentpost.db`));
    try {
      const ready = await service.app.request('/readyz');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({
        status: 'not ready',
        checks: { database: 'ok', migrations: 'ok', workers: 'not started' },
        threads: {},
      });
      const metrics = await service.app.request('/metrics');
      expect(metrics.status).toBe(404);
      expect(((await metrics.json()) as { error: { message: string } }).error.message).toContain(
        'AGENTPOST_METRICS_TOKEN',
      );
    } finally {
      await service.close();
      dir.remove();
    }
  });
});
