/**
 * A webhook receiver, as a self-checking script: it answers the endpoint challenge, verifies every delivery's
 * signature with `verifyWebhookSignature` (Standard Webhooks headers, replay-checked, and the Nylas-compatible
 * `X-Nylas-Signature`), rejects forged posts with 400 and deduplicates on the notification id.
 *
 *   npx tsx examples/webhook-receiver.ts      # embedded: starts its own service on a free port
 *
 * Against a running service the receiver listens on 127.0.0.1, so that service must run with
 * AGENTPOST_ALLOW_PRIVATE_NETWORKS=true (loopback targets are refused otherwise):
 *   AGENTPOST_URL=http://127.0.0.1:3000 AGENTPOST_API_KEY=agp_... npx tsx examples/webhook-receiver.ts
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import NylasModule, { WebhookTriggers } from 'nylas';
import { loadConfig, verifyWebhookSignature } from '../server/embed.js'; // from 'agentpost' in an installed package
import { startService } from '../server/main.js';

// The SDK's type declarations are CommonJS; at run time the ESM default export is the client class.
const Nylas = ((NylasModule as unknown as { default?: unknown }).default ?? NylasModule) as typeof NylasModule.default;

const remoteUrl = process.env.AGENTPOST_URL || undefined;
const dir = mkdtempSync(join(tmpdir(), 'agentpost-webhooks-'));
const service = remoteUrl
  ? undefined
  : await startService(
      loadConfig({
        AGENTPOST_DATABASE_URL: `file:${join(dir, 'agentpost.db')}`,
        AGENTPOST_HTTP_PORT: '0',
        AGENTPOST_SMTP_PORT: '0',
        AGENTPOST_LOG_LEVEL: 'warn',
        AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
        AGENTPOST_WORKER_POLL_MS: '100',
      }),
    );
const apiUri = remoteUrl ?? service!.url!;
const apiKey = process.env.AGENTPOST_API_KEY || service!.generatedKey!;

// ---- The receiver: what your application runs. ----------------------------------------------------------
let secret = ''; // the webhook_secret returned on create; keep it in your secret store
const seen = new Set<string>();
const notifications: { type: string; object: Record<string, unknown> }[] = [];
let rejected = 0;

const receiver = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://receiver');
  // 1. The challenge: echo the value, exactly, with 200.
  if (request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'text/plain' }).end(url.searchParams.get('challenge') ?? '');
    return;
  }
  // 2. Deliveries: verify the raw body bytes before parsing them.
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    const verdict = verifyWebhookSignature({ secret, body, headers: request.headers, now: new Date() });
    const nylasVerdict = verifyWebhookSignature({ secret, body, headers: request.headers, scheme: 'nylas' });
    if (!verdict.valid || !nylasVerdict.valid) {
      rejected += 1;
      response.writeHead(400).end(verdict.reason ?? nylasVerdict.reason);
      return;
    }
    // Delivery is at-least-once: the same notification id may come again after a timeout; handle it once.
    if (!seen.has(verdict.id!)) {
      seen.add(verdict.id!);
      const notification = JSON.parse(body.toString('utf8')) as {
        type: string;
        data: { object: Record<string, unknown> };
      };
      notifications.push({ type: notification.type, object: notification.data.object });
    }
    response.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;

// ---- The application side: subscribe, then cause an event. ------------------------------------------------
const nylas = new Nylas({ apiKey, apiUri });
let webhookId: string | undefined;
try {
  const { data: webhook } = await nylas.webhooks.create({
    requestBody: {
      triggerTypes: [WebhookTriggers.GrantCreated],
      webhookUrl: receiverUrl,
      description: 'example receiver',
    },
  });
  webhookId = webhook.id;
  secret = webhook.webhookSecret;
  assert.equal(webhook.status, 'active');

  const suffix = Math.random().toString(36).slice(2, 8);
  const domain = `hooks-${suffix}.agentpost.localhost`;
  const registered = await fetch(`${apiUri}/v3/admin/domains`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Webhook example', domain_address: domain }),
  });
  assert.equal(registered.status, 200, await registered.clone().text());
  const { data: grant } = await nylas.auth.customAuthentication({
    requestBody: { provider: 'nylas', settings: { email: `agent@${domain}` } } as never,
  });

  // The signed grant.created notification arrives.
  const deadline = Date.now() + 20_000;
  while (!notifications.some((item) => item.object.id === grant.id)) {
    assert.ok(Date.now() < deadline, 'no grant.created notification within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(notifications.find((item) => item.object.id === grant.id)!.type, 'grant.created');

  // A forged post (no valid signature) is refused.
  const forged = await fetch(receiverUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'evt_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'webhook-signature': 'v1,AAAA',
    },
    body: JSON.stringify({ type: 'grant.deleted' }),
  });
  assert.equal(forged.status, 400);
  assert.equal(rejected, 1);
  console.log(
    `ok: verified ${notifications.length} signed notification(s) (${notifications.map((item) => item.type).join(', ')}); forged post rejected`,
  );
} finally {
  if (webhookId) await nylas.webhooks.destroy({ webhookId }).catch(() => undefined);
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
}
