/**
 * Paused sending and warm-up end to end, through the nylas SDK, MCP and the AI SDK tools.
 *
 * Bounces are real: each send leaves through a relay (an SMTP server on loopback) with a per-recipient VERP return
 * path, and a DSN in Postfix's style sent over SMTP to that return path is what the report intake records and tells
 * sending health of.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { NylasApiError, WebhookTriggers } from 'nylas';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { AppError, type Principal } from '../../src/index.js';
import { createMcpServer } from '../../tools/mcp.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { localExecutor } from '../../tools/executor.js';
import { fixedClock } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const DOMAIN = 'paused.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;

describe('paused sending: bounces pause a grant, sends get 403 sending_paused, the API resumes it', () => {
  let service: TestService;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let agent: string;
  let principal: Principal;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      // The domain's own thresholds are out of reach here: this is the grant's pause (test/e2e/domain-reputation.test.ts has the domain's).
      env: {
        AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true',
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
        AGENTPOST_PAUSE_MIN_SENT: '10',
        AGENTPOST_PAUSE_BOUNCE_RATE: '0.2',
        AGENTPOST_DOMAIN_PAUSE_MIN_SENT: '1000000',
      },
    });
    receiver = await startReceiver();
    agent = await createMailbox(service, AGENT);
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
    await sink?.close();
  });

  /** A hard bounce of one recipient of the agent: Postfix's DSN, over SMTP, to the return path the relay saw for it. */
  const bounce = async (recipient: string) => {
    const relayed = await eventually(async () => sink.messages.find((message) => message.rcptTo.includes(recipient)));
    const returnPath = relayed.mailFrom;
    const dsn = readFileSync(join(import.meta.dirname, '../fixtures/dsn/postfix-unknown-user.eml'), 'latin1')
      .replaceAll('bounce+abc@agentpost.example', returnPath)
      .replaceAll('user@example.com', recipient);
    const reply = await sendRaw(service.smtpPort, '', [returnPath], dsn);
    expect(reply.code).toBe(250);
  };
  const send = (to: string[]) =>
    service.nylas.messages.send({
      identifier: agent,
      requestBody: { to: to.map((email) => ({ email })), subject: 'Offer', body: 'Hello' },
    });

  it('pauses at the threshold (not below the minimum volume), shows it on the grant, and notifies grant.updated', async () => {
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.GrantUpdated], webhookUrl: receiver.url },
    });
    const recipients = Array.from({ length: 10 }, (_, index) => `person${index}@example.com`);
    // Nine recipients: under the minimum of 10, so even 100% bounces pause nothing.
    await send(recipients.slice(0, 9));
    for (const recipient of recipients.slice(0, 2)) await bounce(recipient);
    expect((await service.nylas.grants.find({ grantId: agent })).data).toMatchObject({ sending: { status: 'active' } });

    // The tenth: 2 of 10 is 20%, the threshold.
    await send(recipients.slice(9));
    await bounce(recipients[2]!);
    const { data: grant } = await service.nylas.grants.find({ grantId: agent });
    const sending = (grant as unknown as { sending: { status: string; reason: string; pausedAt: number } }).sending;
    expect(sending).toEqual({
      status: 'paused',
      reason: 'hard-bounce rate 30% (3 of 10 recipients) reached the threshold of 20% over the last 7 days (UTC)',
      pausedAt: expect.any(Number),
    });

    const [delivery] = await receiver.waitForDeliveries(1);
    expect(delivery!.headers['x-nylas-signature']).toBe(
      createHmac('sha256', webhook.webhookSecret).update(delivery!.body).digest('hex'),
    );
    expect(delivery!.json).toMatchObject({
      type: 'grant.updated',
      source: '/nylas/system',
      data: {
        object: { id: agent, sending: { status: 'paused', reason: sending.reason, paused_at: sending.pausedAt } },
      },
    });
  });

  it('refuses sends with 403 sending_paused over HTTP, MCP and the AI SDK, and nothing is relayed', async () => {
    // The two sends before the pause were relayed.
    const relayed = (await sink.waitFor(2)).length;
    const error = await sdkError(send(['late@example.com']));
    expect(error.statusCode).toBe(403);
    expect(error.type).toBe('sending_paused');
    expect(error.message).toMatch(
      /^Sending from agent@paused\.agentpost\.localhost is paused since .*: hard-bounce rate 30% .*resume sending with PATCH \/v3\/grants\/\{grant_id\} with \{"sending": \{"status": "active"\}\}/,
    );

    const [client, server] = InMemoryTransport.createLinkedPair();
    const mcp = new Client({ name: 'test', version: '1.0.0' });
    await Promise.all([
      createMcpServer({ executor: localExecutor(service.core, principal) }).connect(server),
      mcp.connect(client),
    ]);
    const result = await mcp.callTool({
      name: 'send_message',
      arguments: { grant_id: agent, to: [{ email: 'late@example.com' }], subject: 'x', body: 'x' },
    });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toMatch(
      /^forbidden \(sending_paused\): Sending from agent@paused/,
    );
    await mcp.close();

    // The AI SDK tools against the running service (the remote executor): the error keeps its type.
    const tools = createAgentpostTools({ url: service.url, apiKey: service.apiKey, grantId: agent });
    const thrown = await Promise.resolve(
      tools.send_message!.execute!(
        { to: [{ email: 'late@example.com' }], subject: 'x', body: 'x' },
        { toolCallId: 'call-1', messages: [] },
      ),
    ).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'forbidden', type: 'sending_paused' });
    expect(sink.messages.length).toBe(relayed);
    expect(sink.messages.flatMap((message) => message.rcptTo)).not.toContain('late@example.com');
  });

  it('resumes through grants.update (recorded with the request id), and the next send goes out', async () => {
    const bad = await sdkError(
      service.nylas.grants.update({ grantId: agent, requestBody: { sending: { status: 'paused' } } as never }),
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.message).toMatch(/sending\.status/);

    const resumed = await service.nylas.grants.update({
      grantId: agent,
      requestBody: { sending: { status: 'active' } } as never,
    });
    expect((resumed.data as unknown as { sending: unknown }).sending).toEqual({ status: 'active' });
    const changes = await service.core.deps.db.orm
      .select()
      .from(tables.sendingStateChanges)
      .where(eq(tables.sendingStateChanges.grantId, agent));
    expect(changes.map(({ state, actor }) => ({ state, actor }))).toEqual([
      { state: 'paused', actor: 'service' },
      { state: 'active', actor: resumed.requestId },
    ]);
    const delivery = await receiver.waitForDeliveries(2);
    expect(delivery[1]!.json.data.object.sending).toEqual({ status: 'active' });

    const before = sink.messages.length;
    const sent = await send(['again@example.com']);
    expect(sent.data.id).toBeDefined();
    await sink.waitFor(before + 1);
    // Another application's grant is not found, and nothing changes.
    const { apiKey } = await service.core.accounts.applications.createApplication({
      name: 'Other',
      plan: 'production',
    });
    const foreign = await sdkError(
      service.client(apiKey).grants.update({ grantId: agent, requestBody: { sending: { status: 'active' } } as never }),
    );
    expect(foreign.statusCode).toBe(404);
    expect(foreign).toBeInstanceOf(NylasApiError);
  });
});

describe("warm-up: a domain on its ramp sends up to the day's cap, then 429 until the next UTC day", () => {
  const clock = fixedClock('2026-03-30T09:00:00Z');
  let service: TestService;
  let sink: SmtpSink;
  let agent: string;
  let domainId: string;
  const WARM = 'warm.agentpost.localhost';

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}` },
      deps: { clock },
    });
    const created = await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Warm', domain_address: WARM, warm_up: true },
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({
      warm_up: true,
      warm_up_started_at: Math.floor(clock.now().getTime() / 1000),
    });
    domainId = created.body.data.id;
    agent = await createMailbox(service, `agent@${WARM}`);
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  const recipients = (count: number, prefix: string) =>
    Array.from({ length: count }, (_, index) => ({ email: `${prefix}${index}@example.com` }));
  const send = (count: number, prefix: string) =>
    request(service.url, 'POST', `/v3/grants/${agent}/messages/send`, {
      key: service.apiKey,
      body: { to: recipients(count, prefix), subject: 'Hi', body: 'Hello' },
    });

  it('allows 50 recipients on day 0, refuses the 51st with 429 and Retry-After, and allows again the next day', async () => {
    expect((await send(25, 'a')).status).toBe(200);
    expect((await send(24, 'b')).status).toBe(200);
    // 49 sent: a send of two would make 51 (its own recipients count).
    const over = await send(2, 'c');
    expect(over.status).toBe(429);
    expect(over.body.error.type).toBe('rate_limit_error');
    expect((await send(1, 'd')).status).toBe(200);
    // 50 sent: the 51st recipient of the day is refused.
    const refused = await send(1, 'e');
    expect(refused.status).toBe(429);
    // 09:00 UTC: the cap resets at midnight, 15 hours on.
    expect(refused.headers.get('retry-after')).toBe(String(15 * 3600));
    expect(refused.body.error.message).toBe(
      `The domain ${WARM} is warming up: on day 1 of its 28-day warm-up ramp it may send to 50 recipients a day (UTC); 50 were sent today and this send has 1, so nothing was sent. The cap resets at 2026-03-31T00:00:00.000Z (in 54000 seconds), to 50 recipients. Send again then, or to fewer recipients today.`,
    );
    const sent = await service.core.deps.db.orm
      .select()
      .from(tables.domainDailySends)
      .where(eq(tables.domainDailySends.domainId, domainId));
    expect(sent.map((row) => row.sent)).toEqual([50]);

    clock.advance(15 * 3600_000);
    expect((await send(1, 'f')).status).toBe(200);
  });

  it('reaches no cap after the ramp; turning warm-up off lifts the cap, on again restarts it', async () => {
    clock.advance(28 * 86_400_000);
    expect((await send(100, 'g')).status).toBe(200);
    const off = await request(service.url, 'PUT', `/v3/admin/domains/${domainId}`, {
      key: service.apiKey,
      body: { warm_up: false },
    });
    expect(off.body.data.warm_up).toBe(false);
    expect(off.body.data).not.toHaveProperty('warm_up_started_at');
    const on = await request(service.url, 'PUT', `/v3/admin/domains/${domainId}`, {
      key: service.apiKey,
      body: { warm_up: true },
    });
    expect(on.body.data).toMatchObject({ warm_up: true, warm_up_started_at: Math.floor(clock.now().getTime() / 1000) });
    // Day 0 again, and today already has 100: refused.
    const refused = await send(1, 'h');
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain(
      'on day 1 of its 28-day warm-up ramp it may send to 50 recipients a day (UTC); 100 were sent today',
    );
  });
});
