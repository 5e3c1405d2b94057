/**
 * Reputation per sending domain end to end (issue 23 part 3): two domains, each with grants. Real bounces (Postfix's
 * DSN over SMTP to the VERP return path the relay saw) on one domain pause that domain's grants only, with 403
 * `sending_paused` naming the domain over HTTP (nylas SDK), MCP and the AI SDK tools; the other domain keeps sending; a signed
 * `domain.updated` webhook is delivered; resuming through the domains API lets the domain send again.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ServiceAccountSigner } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { AppError, type Principal } from '../../src/index.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { createMcpServer } from '../../tools/mcp.js';
import { localExecutor } from '../../tools/executor.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const ALPHA = 'alpha.agentpost.localhost';
const BETA = 'beta.agentpost.localhost';

describe('reputation per sending domain: bounces on one domain pause its grants only', () => {
  let service: TestService;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let secret: string;
  let alpha1: string;
  let alpha2: string;
  let beta1: string;
  let alphaId: string;
  let betaId: string;
  let principal: Principal;
  // The SDK's Manage Domains calls are signed with a service account.
  let signer: ServiceAccountSigner;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      env: {
        AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true',
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
        // No grant reaches its own minimum: what pauses here is the domain's total.
        AGENTPOST_PAUSE_MIN_SENT: '1000',
        AGENTPOST_DOMAIN_PAUSE_MIN_SENT: '10',
        AGENTPOST_DOMAIN_PAUSE_BOUNCE_RATE: '0.2',
        AGENTPOST_WORKER_POLL_MS: '50',
      },
    });
    receiver = await startReceiver();
    alpha1 = await createMailbox(service, `one@${ALPHA}`);
    alpha2 = await createMailbox(service, `two@${ALPHA}`);
    beta1 = await createMailbox(service, `one@${BETA}`);
    const credentials = await service.core.accounts.applications.createServiceAccount(
      await service.core.accounts.applications.defaultApplicationId(),
    );
    signer = new ServiceAccountSigner({
      privateKeyPem: credentials.private_key,
      privateKeyId: credentials.private_key_id,
    });
    const { data: domains } = await service.nylas.domains.list({ signer });
    alphaId = domains.find((domain) => domain.domainAddress === ALPHA)!.id!;
    betaId = domains.find((domain) => domain.domainAddress === BETA)!.id!;
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: ['domain.updated' as never], webhookUrl: receiver.url },
    });
    secret = webhook.webhookSecret;
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
    await sink?.close();
  });

  const send = (grant: string, to: string[]) =>
    service.nylas.messages.send({
      identifier: grant,
      requestBody: { to: to.map((email) => ({ email })), subject: 'Offer', body: 'Hello' },
    });
  /** A hard bounce of one recipient: Postfix's DSN, over SMTP, to the return path the relay saw for it. */
  const bounce = async (recipient: string) => {
    const relayed = await eventually(async () => sink.messages.find((message) => message.rcptTo.includes(recipient)));
    const dsn = readFileSync(join(import.meta.dirname, '../fixtures/dsn/postfix-unknown-user.eml'), 'latin1')
      .replaceAll('bounce+abc@agentpost.example', relayed.mailFrom)
      .replaceAll('user@example.com', recipient);
    expect((await sendRaw(service.smtpPort, '', [relayed.mailFrom], dsn)).code).toBe(250);
  };
  const people = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, index) => `${prefix}${index}@example.com`);
  type Wire = {
    sending: { status: string; reason?: string; pausedAt?: number };
    reputation: { sent: number; hardBounces: number; bounceRate: number; windowDays: number };
  };
  const domain = async (id: string) =>
    (await service.nylas.domains.find({ domainId: id, signer })).data as unknown as Wire;

  it('counts every grant of a domain together, and pauses the domain when its total crosses the threshold', async () => {
    await send(alpha1, people('a', 5));
    await send(alpha2, people('b', 5));
    await send(beta1, people('c', 5));
    await bounce('a0@example.com');
    expect(await domain(alphaId)).toMatchObject({
      sending: { status: 'active' },
      reputation: { sent: 10, hardBounces: 1, bounceRate: 0.1, windowDays: 7 },
    });
    // The second bounce, of the other grant's send: 2 of 10 is the domain's 20%, though each grant is under its minimum.
    await bounce('b0@example.com');
    const alpha = await domain(alphaId);
    expect(alpha.sending).toEqual({
      status: 'paused',
      reason: 'hard-bounce rate 20% (2 of 10 recipients) reached the threshold of 20% over the last 7 days (UTC)',
      pausedAt: expect.any(Number),
    });
    expect(alpha.reputation).toMatchObject({ sent: 10, hardBounces: 2, bounceRate: 0.2 });
    expect(await domain(betaId)).toMatchObject({
      sending: { status: 'active' },
      reputation: { sent: 5, hardBounces: 0 },
    });
    // The grants themselves are not paused: it is their domain.
    expect((await service.nylas.grants.find({ grantId: alpha2 })).data).toMatchObject({
      sending: { status: 'active' },
    });

    const [delivery] = await receiver.waitForDeliveries(1);
    expect(delivery!.headers['x-nylas-signature']).toBe(
      createHmac('sha256', secret).update(delivery!.body).digest('hex'),
    );
    expect(delivery!.json).toMatchObject({
      type: 'domain.updated',
      data: {
        object: {
          id: alphaId,
          domain_address: ALPHA,
          sending: { status: 'paused', reason: alpha.sending.reason },
          reputation: { sent: 10, hard_bounces: 2 },
        },
      },
    });
  });

  it('refuses every grant on the paused domain with 403 sending_paused naming it (HTTP, MCP, AI SDK); the other domain sends', async () => {
    const relayed = sink.messages.length;
    for (const grant of [alpha1, alpha2]) {
      const error = await sdkError(send(grant, ['late@example.com']));
      expect(error.statusCode).toBe(403);
      expect(error.type).toBe('sending_paused');
      expect(error.message).toMatch(
        new RegExp(
          `^Sending from the domain ${ALPHA.replaceAll('.', '\\.')} is paused since .*: the domain's hard-bounce rate 20% .* resume the domain with PUT /v3/admin/domains/${alphaId} with`,
        ),
      );
    }
    const [client, server] = InMemoryTransport.createLinkedPair();
    const mcp = new Client({ name: 'test', version: '1.0.0' });
    await Promise.all([
      createMcpServer({ executor: localExecutor(service.core, principal) }).connect(server),
      mcp.connect(client),
    ]);
    const result = await mcp.callTool({
      name: 'send_message',
      arguments: { grant_id: alpha2, to: [{ email: 'late@example.com' }], subject: 'x', body: 'x' },
    });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toMatch(
      /^forbidden \(sending_paused\): Sending from the domain alpha\.agentpost\.localhost is paused/,
    );
    await mcp.close();
    // The AI SDK tools against the running service (the remote executor): the error keeps its type.
    const tools = createAgentpostTools({ url: service.url, apiKey: service.apiKey, grantId: alpha1 });
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
    expect((thrown as AppError).message).toContain(`Sending from the domain ${ALPHA} is paused`);

    const sent = await send(beta1, ['still@example.com']);
    expect(sent.data.id).toBeDefined();
    await sink.waitFor(relayed + 1);
    expect(sink.messages.flatMap((message) => message.rcptTo)).not.toContain('late@example.com');
  });

  it('resumes through the domains API (recorded with the request id, domain.updated), and the domain sends again', async () => {
    // Another application cannot see, let alone resume, the domain.
    const other = await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'production' });
    const otherCredentials = await service.core.accounts.applications.createServiceAccount(other.application.id);
    const otherSigner = new ServiceAccountSigner({
      privateKeyPem: otherCredentials.private_key,
      privateKeyId: otherCredentials.private_key_id,
    });
    const foreign = await sdkError(
      service.client(other.apiKey).domains.update({
        domainId: alphaId,
        requestBody: { sending: { status: 'active' } } as never,
        signer: otherSigner,
      }),
    );
    expect(foreign.statusCode).toBe(404);
    const bad = await sdkError(
      service.nylas.domains.update({
        domainId: alphaId,
        requestBody: { sending: { status: 'paused' } } as never,
        signer,
      }),
    );
    expect(bad.statusCode).toBe(400);

    const resumed = await service.nylas.domains.update({
      domainId: alphaId,
      requestBody: { sending: { status: 'active' } } as never,
      signer,
    });
    expect((resumed.data as unknown as Wire).sending).toEqual({ status: 'active' });
    // The measurement starts afresh: the rates count what is sent after the resume.
    expect((await domain(alphaId)).reputation).toMatchObject({ sent: 0, hardBounces: 0, bounceRate: 0 });
    const changes = await service.core.deps.db.orm
      .select()
      .from(tables.domainSendingStateChanges)
      .where(eq(tables.domainSendingStateChanges.domainId, alphaId));
    expect(changes.map(({ state, actor }) => ({ state, actor }))).toEqual([
      { state: 'paused', actor: 'service' },
      { state: 'active', actor: resumed.requestId },
    ]);
    const deliveries = await receiver.waitForDeliveries(2);
    expect(deliveries[1]!.json).toMatchObject({
      type: 'domain.updated',
      data: { object: { id: alphaId, sending: { status: 'active' } } },
    });

    const before = sink.messages.length;
    expect((await send(alpha2, ['again@example.com'])).data.id).toBeDefined();
    await sink.waitFor(before + 1);
  });
});
