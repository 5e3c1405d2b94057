/**
 * The kill switch (issue 37, item 6) through every face: `POST /v3/grants/{id}/suspend` with a reason stops, from the
 * next request on, the grant's sends over HTTP (the nylas SDK), MCP (the client SDK, in memory and over Streamable
 * HTTP) and the AI SDK tools, its writes (drafts, events, contacts, message changes), and a scheduled send that falls
 * due (it waits, and leaves after the resume); every refusal names the reason. Resuming restores them all. The grant
 * shows `suspended_at` and `suspended_reason`; `grant.suspended` and `grant.resumed` are recorded for webhooks.
 */
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tables } from '../../storage/index.js';
import type { Principal } from '../../src/index.js';
import { createMcpServer } from '../../tools/mcp.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { localExecutor } from '../../tools/executor.js';
import { fixedClock } from '../helpers/clock.js';
import { unfencedClient, unfencedTools } from '../helpers/fence.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'halt.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;
const PEER = `peer@${DOMAIN}`;
const REASON = 'runaway agent: 40 replies in a minute';

describe('the kill switch', () => {
  const clock = fixedClock('2026-05-04T09:00:00Z');
  let service: TestService;
  let principal: Principal;
  let agent: string;
  let peer: string;

  beforeAll(async () => {
    service = await startTestService({ deps: { clock }, env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
    agent = await createMailbox(service, AGENT);
    peer = await createMailbox(service, PEER);
  });
  afterAll(async () => {
    await service?.close();
  });

  const call = (method: string, path: string, body?: unknown) =>
    request(service.url, method, path, { key: service.apiKey, ...(body !== undefined ? { body } : {}) });
  const suspend = (reason = REASON) => call('POST', `/v3/grants/${agent}/suspend`, { reason });
  const resume = () => call('POST', `/v3/grants/${agent}/resume`);
  const inbox = async (subject: string) =>
    (await service.nylas.messages.list({ identifier: peer, queryParams: { subject } })).data;
  const sendOverHttp = (subject: string) =>
    service.nylas.messages.send({ identifier: agent, requestBody: { to: [{ email: PEER }], subject, body: 'Hello' } });

  async function mcpClients() {
    const server = createMcpServer({ executor: localExecutor(service.core, principal), grantId: agent });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const local = unfencedClient(new Client({ name: 'kill-switch', version: '1.0.0' }));
    await Promise.all([server.connect(serverTransport), local.connect(clientTransport)]);
    const remote = unfencedClient(new Client({ name: 'kill-switch-http', version: '1.0.0' }));
    await remote.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp?grant_id=${agent}`), {
        requestInit: { headers: { authorization: `Bearer ${service.apiKey}` } },
      }),
    );
    return { local, remote };
  }
  const mcpSend = (client: Client, subject: string) =>
    client.callTool({ name: 'send_message', arguments: { to: [{ email: PEER }], subject, body: 'Hello' } });
  const aiTools = () => unfencedTools(createAgentpostTools({ core: service.core, principal, grantId: agent }));
  const aiSend = (subject: string) =>
    aiTools().send_message!.execute!(
      { to: [{ email: PEER }], subject, body: 'Hello' },
      { toolCallId: `call-${subject}`, messages: [] },
    );

  it('shows the suspension on the grant, records both webhooks, and is refused without admin', async () => {
    const suspended = await suspend();
    expect(suspended.status, suspended.text).toBe(200);
    expect(suspended.body.data).toMatchObject({
      id: agent,
      suspended_at: Math.floor(clock.now().getTime() / 1000),
      suspended_reason: REASON,
    });
    const found = await service.nylas.grants.find({ grantId: agent });
    expect(found.data).toMatchObject({ suspendedReason: REASON });
    const resumed = await resume();
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.suspended_at).toBeUndefined();
    expect(resumed.body.data.suspended_reason).toBeUndefined();
    const events = await service.core.deps.db.orm
      .select({ type: tables.outboxEvents.type })
      .from(tables.outboxEvents)
      .where(and(eq(tables.outboxEvents.grantId, agent)));
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['grant.suspended', 'grant.resumed']));

    const reader = await call('POST', '/v3/api-keys', { name: 'reader', permissions: ['mail.read', 'mail.send'] });
    const refused = await request(service.url, 'POST', `/v3/grants/${agent}/suspend`, {
      key: reader.body.data.key,
      body: { reason: 'not mine to say' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain('admin');
    expect((await call('POST', `/v3/grants/${agent}/suspend`, {})).status).toBe(400);
  });

  it("stops every face's send from the next request, naming the reason, and resuming restores them", async () => {
    const { local, remote } = await mcpClients();
    try {
      expect(await suspend()).toMatchObject({ status: 200 });
      const overHttp = await sdkError(sendOverHttp('http while suspended'));
      expect(overHttp.statusCode).toBe(403);
      expect(overHttp.message).toContain(REASON);
      for (const client of [local, remote]) {
        const result = await mcpSend(client, 'mcp while suspended');
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result.content)).toContain(REASON);
      }
      await expect(aiSend('ai while suspended')).rejects.toThrow(REASON);

      expect(await resume()).toMatchObject({ status: 200 });
      await sendOverHttp('http resumed');
      for (const [index, client] of [local, remote].entries()) {
        const result = await mcpSend(client, `mcp resumed ${index}`);
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      }
      await aiSend('ai resumed');
      for (const subject of ['http resumed', 'mcp resumed 0', 'mcp resumed 1', 'ai resumed'])
        expect(await eventually(async () => (await inbox(subject))[0])).toBeTruthy();
      for (const subject of ['http while suspended', 'mcp while suspended', 'ai while suspended'])
        expect(await inbox(subject)).toHaveLength(0);
    } finally {
      await local.close();
      await remote.close();
    }
  });

  it('refuses every write on the grant with the reason (drafts, events, contacts, message changes); reads go on', async () => {
    const message = (await sendOverHttp('before the suspension')).data;
    const calendar = (await service.nylas.calendars.list({ identifier: agent })).data[0]!;
    await suspend();
    try {
      const writes = [
        call('POST', `/v3/grants/${agent}/drafts`, { subject: 'Draft', body: 'x' }),
        call('POST', `/v3/grants/${agent}/events?calendar_id=${calendar.id}`, {
          title: 'Meeting',
          when: { start_time: 1_800_000_000, end_time: 1_800_003_600 },
        }),
        call('POST', `/v3/grants/${agent}/contacts`, { given_name: 'Ada' }),
        call('PUT', `/v3/grants/${agent}/messages/${message.id}`, { unread: false }),
        call('POST', `/v3/grants/${agent}/folders`, { name: 'Suspended' }),
      ];
      for (const answer of await Promise.all(writes)) {
        expect(answer.status, answer.text).toBe(403);
        expect(answer.body.error.type).toBe('grant_suspended');
        expect(answer.body.error.message).toContain(REASON);
      }
      // MCP and the AI SDK meet the same admission.
      const tools = aiTools();
      await expect(
        tools.create_draft!.execute!({ subject: 'Draft', body: 'x' }, { toolCallId: 'draft', messages: [] }),
      ).rejects.toThrow(REASON);
      expect((await call('GET', `/v3/grants/${agent}/messages?limit=1`)).status).toBe(200);
    } finally {
      await resume();
    }
    expect((await call('POST', `/v3/grants/${agent}/drafts`, { subject: 'Draft', body: 'x' })).status).toBe(200);
  });

  it('under read_only the same admission refuses drafts, calendar and contact writes, naming the mode; message changes go on', async () => {
    const message = (await sendOverHttp('before read_only')).data;
    const setMode = (mode: string | null) =>
      service.core.deps.db.write((tx) =>
        tx.update(tables.grants).set({ oversightMode: mode }).where(eq(tables.grants.id, agent)),
      );
    await setMode('read_only');
    try {
      for (const answer of await Promise.all([
        call('POST', `/v3/grants/${agent}/drafts`, { subject: 'Draft', body: 'x' }),
        call('POST', `/v3/grants/${agent}/contacts`, { given_name: 'Ada' }),
        call('POST', `/v3/grants/${agent}/calendars`, { name: 'Side' }),
      ])) {
        expect(answer.status, answer.text).toBe(403);
        expect(answer.body.error.type).toBe('oversight_read_only');
        expect(answer.body.error.message).toContain('read_only');
      }
      expect((await call('PUT', `/v3/grants/${agent}/messages/${message.id}`, { starred: true })).status).toBe(200);
    } finally {
      await setMode(null);
    }
  });

  it('a scheduled send due while suspended waits, is not failed, and leaves after the resume', async () => {
    const now = Math.floor(clock.now().getTime() / 1000);
    const scheduled = await service.nylas.messages.send({
      identifier: agent,
      requestBody: { to: [{ email: PEER }], subject: 'Scheduled halt', body: 'Later', sendAt: now + 600 },
    });
    const scheduleId = (scheduled.data as unknown as { scheduleId: string }).scheduleId;
    await suspend();
    clock.advance(601_000);
    service.background.wake();
    // The job ran and put itself back: still pending, nothing delivered.
    await eventually(async () => {
      const [job] = await service.core.deps.db.orm
        .select({ lastError: tables.jobs.lastError, attempts: tables.jobs.attempts })
        .from(tables.jobs)
        .where(eq(tables.jobs.dedupeKey, `mail.send_scheduled:${scheduleId}`));
      return job && job.attempts >= 1 && job.lastError !== null ? job : undefined;
    });
    const waiting = await service.nylas.messages.findScheduledMessage({ identifier: agent, scheduleId });
    expect(waiting.data.status.code).toBe('pending');
    expect(await inbox('Scheduled halt')).toHaveLength(0);

    await resume();
    const arrived = await eventually(async () => (await inbox('Scheduled halt'))[0]);
    expect(arrived.body).toContain('Later');
    const done = await service.nylas.messages.findScheduledMessage({ identifier: agent, scheduleId });
    expect(done.data.status.code).toBe('success');
  });
});
