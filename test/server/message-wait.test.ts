/**
 * Waiting for a message (issue 40, item 3) through the running service: a sign-up mail delivered over SMTP 300 ms
 * after the call answers it with its code and its verification link (raw HTTP, the MCP client over Streamable HTTP,
 * the AI SDK tool); an earlier message that already matched answers at once; the timeout is a 408 in the Nylas shape;
 * a key scoped to another grant gets a 404; and 100 idle waits cost no measurable CPU.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import type { Principal } from '../../src/index.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'wait.agentpost.localhost';
const ALPHA = `alpha@${DOMAIN}`;
const BETA = `beta@${DOMAIN}`;
type Json = Record<string, unknown>;

/** A sign-up mail as a service sends it: a code, a verification link wrapped in click tracking, an unsubscribe link. */
function signUpMail(to: string, subject: string, code: string): string {
  const html = `<html><body><p>Welcome to Acme!</p><p>Your verification code is <b>${code}</b>.</p>
<p><a href="https://click.acme.example/track/click?id=1&amp;url=https%3A%2F%2Fapp.acme.example%2Fverify%3Ft%3Dabc">Verify your email</a></p>
<p><a href="https://acme.example/unsubscribe?u=1">Unsubscribe</a></p></body></html>`;
  return [
    'From: Acme <no-reply@acme.example>',
    `To: ${to}`,
    `Subject: ${subject}`,
    `Message-ID: <${Math.random().toString(36).slice(2)}@acme.example>`,
    'MIME-Version: 1.0',
    'Content-Type: text/html; charset=utf-8',
    '',
    html,
    '',
  ].join('\r\n');
}

describe('wait_for_message', () => {
  let service: TestService;
  let alpha: string;
  let beta: string;
  let principal: Principal;
  const auth = (key = service.apiKey) => ({ authorization: `Bearer ${key}` });
  const deliverLater = (to: string, subject: string, code: string) =>
    new Promise<number>((resolve, reject) => {
      setTimeout(() => {
        sendRaw(service.smtpPort, 'no-reply@acme.example', [to], signUpMail(to, subject, code)).then(
          (reply) => resolve(reply.code),
          reject,
        );
      }, 300);
    });

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    alpha = await createMailbox(service, ALPHA);
    beta = await createMailbox(service, BETA);
    principal = await service.core.accounts.applications.authenticateApiKey(service.apiKey);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('HTTP: answers the sign-up mail delivered 300 ms after the call, with its code and verification link', async () => {
    const waiting = fetch(
      `${service.url}/v3/grants/${alpha}/messages/wait?from=no-reply@acme.example&subject=welcome&timeout=30`,
      {
        headers: auth(),
      },
    );
    const [response, smtp] = await Promise.all([waiting, deliverLater(ALPHA, 'Welcome to Acme', '482913')]);
    expect(smtp).toBe(250);
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: Json & { codes: Json[]; links: Json[] } };
    expect(data).toMatchObject({ object: 'message', grant_id: alpha, subject: 'Welcome to Acme' });
    expect(String(data.body)).toContain('482913');
    expect(data.codes[0]).toMatchObject({ value: '482913', where: 'body' });
    expect(data.links[0]).toMatchObject({ url: 'https://app.acme.example/verify?t=abc', text: 'Verify your email' });
    expect(data.links.at(-1)).toMatchObject({ url: 'https://acme.example/unsubscribe?u=1' });
  });

  it('answers at once with a matching message already stored (received after received_after)', async () => {
    const since = Math.floor(Date.now() / 1000) - 60;
    const answered = await request(
      service.url,
      'GET',
      `/v3/grants/${alpha}/messages/wait?subject=WELCOME&received_after=${since}&timeout=1`,
      { key: service.apiKey },
    );
    expect(answered.status, answered.text).toBe(200);
    expect((answered.body.data as Json).subject).toBe('Welcome to Acme');
  });

  it('MCP over Streamable HTTP: the tool answers the code and the link', async () => {
    const client = new Client({ name: 'wait-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers: auth() } }),
    );
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name)).toContain('wait_for_message');
    const [result, smtp] = await Promise.all([
      client.callTool({
        name: 'wait_for_message',
        arguments: { grant_id: alpha, subject: 'Confirm your account', timeout: 30 },
      }),
      deliverLater(ALPHA, 'Confirm your account', 'K7Q2ZP'),
    ]);
    expect(smtp).toBe(250);
    expect(result.isError).toBeFalsy();
    const content = result.structuredContent as Json & { codes: Json[]; links: Json[] };
    expect(content.codes[0]?.value).toBe('K7Q2ZP');
    expect(content.links[0]?.url).toBe('https://app.acme.example/verify?t=abc');
    await client.close();
  });

  it('AI SDK: the tool answers the code', async () => {
    const tools = createAgentpostTools({ core: service.core, principal, grantId: beta });
    const [result] = await Promise.all([
      tools.wait_for_message!.execute!(
        { subject: 'Your PIN', timeout: 30 },
        { toolCallId: 'call-1', messages: [] },
      ) as Promise<Json>,
      deliverLater(BETA, 'Your PIN', '7301'),
    ]);
    expect(JSON.stringify(result)).toContain('7301');
  });

  it('answers 408 request_timeout in the Nylas shape when nothing arrives', async () => {
    const answered = await request(
      service.url,
      'GET',
      `/v3/grants/${alpha}/messages/wait?subject=never-sent&timeout=1`,
      {
        key: service.apiKey,
      },
    );
    expect(answered.status).toBe(408);
    expect(answered.body).toMatchObject({ request_id: expect.any(String), error: { type: 'request_timeout' } });
    expect((answered.body.error as Json).message).toContain('received_after=');
  });

  it('answers 404 to a key scoped to another grant', async () => {
    const made = await request(service.url, 'POST', '/v3/api-keys', {
      key: service.apiKey,
      body: { name: 'beta only', scope: { grant_ids: [beta] } },
    });
    expect(made.status, made.text).toBe(201);
    const key = (made.body.data as { key: string }).key;
    const answered = await request(service.url, 'GET', `/v3/grants/${alpha}/messages/wait?timeout=1`, { key });
    expect(answered.status, answered.text).toBe(404);
  });

  it('100 idle waits cost no measurable CPU beside the idle service', async () => {
    const cpuOver2s = async () => {
      const before = process.cpuUsage();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000;
    };
    const reference = await cpuOver2s();
    // Counts the subscriptions the waits open on the service's event hub.
    const hub = service.core.notifications.stream;
    const open = hub.open.bind(hub);
    let opened = 0;
    Object.assign(hub, {
      open: async (...args: Parameters<typeof open>) => {
        const subscription = await open(...args);
        opened++;
        return subscription;
      },
    });
    const controllers = Array.from({ length: 100 }, () => new AbortController());
    const waits = controllers.map((controller, index) =>
      fetch(`${service.url}/v3/grants/${alpha}/messages/wait?subject=idle-${index}&timeout=60`, {
        headers: auth(),
        signal: controller.signal,
      }).catch(() => undefined),
    );
    // Every wait has subscribed (and checked the stored messages) once the hub holds its 100 streams.
    await eventually(async () => (opened >= 100 ? true : undefined));
    Object.assign(hub, { open });
    const waiting = await cpuOver2s();
    console.log(
      `100 idle waits: ${waiting.toFixed(1)} ms CPU over 2 s; the idle service alone: ${reference.toFixed(1)} ms`,
    );
    expect(waiting).toBeLessThan(reference + 200);
    for (const controller of controllers) controller.abort();
    await Promise.all(waits);
  });
});
