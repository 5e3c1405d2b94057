/**
 * The access log (issue 36): every operation call on every face, with its outcome, read through
 * `GET /v3/access-log` (filters, cursor paging, the NDJSON export). Through the nylas SDK, raw fetch, the MCP client
 * SDK over Streamable HTTP and the AI SDK tools, against the real service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { createMcpServer } from '../../tools/mcp.js';
import { remoteExecutor } from '../../tools/executor.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';
import type { Principal } from '../../src/index.js';

interface Entry {
  id: string;
  time: number;
  api_key_id: string | null;
  api_key_name: string | null;
  principal: string | null;
  face: string;
  client: { name: string | null; version: string | null; session: string | null } | null;
  tool: string | null;
  operation: string;
  grant_id: string | null;
  object_ids: Record<string, string>;
  status: number;
  error_type: string | null;
  address: string | null;
  request_id: string | null;
}

describe('access log', () => {
  let service: TestService;
  let principal: Principal;
  let grantId: string;
  let keyId: string;
  const auth = () => ({ authorization: `Bearer ${service.apiKey}` });
  const log = async (query = ''): Promise<{ data: Entry[]; next_cursor?: string }> => {
    const response = await fetch(`${service.url}/v3/access-log${query}`, { headers: auth() });
    expect(response.status).toBe(200);
    return (await response.json()) as { data: Entry[]; next_cursor?: string };
  };

  beforeAll(async () => {
    service = await startTestService({
      env: { AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true', AGENTPOST_WORKER_POLL_MS: '50' },
    });
    principal = await service.core.accounts.applications.authenticateApiKey(service.apiKey);
    keyId = principal.key!.id;
    await service.core.accounts.domains.create(principal, { name: 'Log', domain_address: 'log.agentpost.localhost' });
    const { grant } = await service.core.accounts.grants.create(principal, {
      provider: 'nylas',
      settings: { email: 'log@log.agentpost.localhost' },
    });
    grantId = grant.id;
  });
  afterAll(async () => {
    await service.close();
  });

  /** An MCP client over Streamable HTTP at /mcp, introducing itself as test-host 1.2.3. */
  async function mcpOverHttp() {
    const client = new Client({ name: 'test-host', version: '1.2.3' });
    const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
      requestInit: { headers: auth() },
    });
    await client.connect(transport);
    return { client, transport };
  }

  /** The AI SDK tools in-process, as the application's key. */
  const aiTools = () => createAgentpostTools({ core: service.core, principal });
  const execute = (tools: ReturnType<typeof aiTools>, name: string, input: Record<string, unknown>) =>
    tools[name]!.execute!(input, { toolCallId: 'call-1', messages: [] }) as Promise<unknown>;

  it('records HTTP calls with their key, face and outcome: 200, 404 and a 401 of a revoked key', async () => {
    await service.nylas.folders.list({ identifier: grantId });
    const missing = await fetch(`${service.url}/v3/grants/${grantId}/messages/nope`, { headers: auth() });
    expect(missing.status).toBe(404);
    const missingId = missing.headers.get('x-request-id');
    const made = await fetch(`${service.url}/v3/api-keys`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'revoked later', permissions: ['mail.read'] }),
    });
    const created = ((await made.json()) as { data: { id: string; key: string } }).data;
    // A permission the key lacks: a 403 recorded against it.
    const forbidden = await fetch(`${service.url}/v3/grants/${grantId}/folders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Nope' }),
    });
    expect(forbidden.status).toBe(403);
    const revoked = await fetch(`${service.url}/v3/api-keys/${created.id}`, { method: 'DELETE', headers: auth() });
    expect(revoked.status).toBe(200);
    const refused = await fetch(`${service.url}/v3/grants/${grantId}/folders`, {
      headers: { authorization: `Bearer ${created.key}` },
    });
    expect(refused.status).toBe(401);

    const { data } = await log();
    const folders = data.find((entry) => entry.operation === 'list_folders')!;
    expect(folders).toMatchObject({
      face: 'http',
      api_key_id: keyId,
      principal: 'api_key',
      grant_id: grantId,
      status: 200,
      error_type: null,
      tool: null,
      client: null,
    });
    expect(folders.address).toBe('127.0.0.1');
    const notFound = data.find((entry) => entry.operation === 'get_message')!;
    expect(notFound).toMatchObject({
      status: 404,
      error_type: 'not_found_error',
      object_ids: { message_id: 'nope' },
      request_id: missingId,
    });
    expect(data.find((entry) => entry.operation === 'create_folder')).toMatchObject({
      status: 403,
      error_type: 'forbidden',
      api_key_id: created.id,
      api_key_name: 'revoked later',
    });
    const unauthorized = data.find((entry) => entry.operation === 'authenticate')!;
    expect(unauthorized).toMatchObject({
      status: 401,
      face: 'http',
      api_key_id: created.id,
      api_key_name: 'revoked later',
      principal: null,
    });
  });

  it('records an MCP call over Streamable HTTP with its client, session and tool', async () => {
    const { client, transport } = await mcpOverHttp();
    const result = await client.callTool({ name: 'list_folders', arguments: { grant_id: grantId } });
    expect(result.isError).toBeFalsy();
    const session = transport.sessionId;
    expect(session).toBeTruthy();
    await client.close();

    const { data } = await log('?operation=list_folders&limit=5');
    expect(data[0]).toMatchObject({
      face: 'mcp',
      tool: 'list_folders',
      client: { name: 'test-host', version: '1.2.3', session },
      api_key_id: keyId,
      grant_id: grantId,
      status: 200,
      address: '127.0.0.1',
    });
    expect(data[0]!.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('records an AI SDK tool call with face ai-sdk and its tool, failures too', async () => {
    const tools = aiTools();
    await execute(tools, 'list_folders', { grant_id: grantId });
    await expect(execute(tools, 'get_message', { grant_id: grantId, message_id: 'absent' })).rejects.toThrow();
    const { data } = await log('?limit=2');
    expect(data.map((entry) => [entry.face, entry.tool, entry.operation, entry.status, entry.error_type])).toEqual([
      ['ai-sdk', 'get_message', 'get_message', 404, 'not_found_error'],
      ['ai-sdk', 'list_folders', 'list_folders', 200, null],
    ]);
  });

  it('filters, pages with page_token and exports every match as NDJSON', async () => {
    for (let index = 0; index < 5; index++) await service.nylas.folders.list({ identifier: grantId });
    const first = await log(`?operation=list_folders&api_key_id=${keyId}&status=200&limit=3`);
    expect(first.data).toHaveLength(3);
    expect(first.data.every((entry) => entry.operation === 'list_folders' && entry.status === 200)).toBe(true);
    const second = await log(
      `?operation=list_folders&api_key_id=${keyId}&status=200&limit=3&page_token=${first.next_cursor!}`,
    );
    const seen = new Set(first.data.map((entry) => entry.id));
    expect(second.data.every((entry) => !seen.has(entry.id))).toBe(true);
    expect(second.data[0]!.time).toBeLessThanOrEqual(first.data[2]!.time);
    const future = Math.floor(Date.now() / 1000) + 3600;
    expect((await log(`?since=${future}`)).data).toEqual([]);
    expect((await log(`?until=${future}&status=401`)).data.map((entry) => entry.operation)).toEqual(['authenticate']);
    expect((await log(`?grant_id=${grantId}&operation=authenticate`)).data).toEqual([]);

    const response = await fetch(`${service.url}/v3/access-log?operation=list_folders&limit=1`, {
      headers: { ...auth(), accept: 'application/x-ndjson' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await response.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Entry);
    const paged: Entry[] = [];
    let token: string | undefined;
    do {
      const page = await log(`?operation=list_folders&limit=4${token ? `&page_token=${token}` : ''}`);
      paged.push(...page.data);
      token = page.next_cursor;
    } while (token);
    expect(lines.map((entry) => entry.id)).toEqual(paged.map((entry) => entry.id));
    expect(lines.length).toBeGreaterThan(6);
  });

  describe('provenance of sends', () => {
    let hook: WebhookReceiver;
    let recipient: string;
    beforeAll(async () => {
      hook = await startReceiver();
      await service.nylas.webhooks.create({
        requestBody: { triggerTypes: ['message.send_success' as never], webhookUrl: hook.url },
      });
      const { grant } = await service.core.accounts.grants.create(principal, {
        provider: 'nylas',
        settings: { email: 'to@log.agentpost.localhost' },
      });
      recipient = grant.email;
    });
    afterAll(async () => {
      await hook.close();
    });
    const sendInput = (subject: string) => ({
      grant_id: grantId,
      to: [{ email: recipient }],
      subject,
      body: 'Hello',
    });

    it('each face records who sent: on the sent message, in its list and in message.send_success', async () => {
      // HTTP through the nylas SDK.
      const viaSdk = await service.nylas.messages.send({
        identifier: grantId,
        requestBody: { to: [{ email: recipient }], subject: 'via http', body: 'Hello' },
      });
      // MCP over Streamable HTTP.
      const { client, transport } = await mcpOverHttp();
      const sent = await client.callTool({ name: 'send_message', arguments: sendInput('via mcp') });
      expect(sent.isError).toBeFalsy();
      const session = transport.sessionId!;
      await client.close();
      // The AI SDK in-process.
      await execute(aiTools(), 'send_message', sendInput('via ai-sdk'));
      // MCP whose tools call /v3 (agentpost mcp with AGENTPOST_URL): the face, client and tool relayed as headers.
      const relay = createMcpServer({ executor: remoteExecutor({ url: service.url, apiKey: service.apiKey }) });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const relayClient = new Client({ name: 'desk-host', version: '9.0' });
      await Promise.all([relay.connect(serverSide), relayClient.connect(clientSide)]);
      expect(
        (await relayClient.callTool({ name: 'send_message', arguments: sendInput('via relay') })).isError,
      ).toBeFalsy();
      await relayClient.close();

      const deliveries = await hook.waitForDeliveries(4);
      const { data: messages } = await fetch(`${service.url}/v3/grants/${grantId}/messages?in=sent&limit=10`, {
        headers: auth(),
      }).then(
        (response) => response.json() as Promise<{ data: { id: string; subject: string; provenance?: unknown }[] }>,
      );
      const bySubject = new Map(messages.map((message) => [message.subject, message]));
      const expected = {
        'via http': { face: 'http', tool: null, client: null, request_id: expect.any(String) },
        'via mcp': { face: 'mcp', tool: 'send_message', client: { name: 'test-host', version: '1.2.3', session } },
        'via ai-sdk': { face: 'ai-sdk', tool: 'send_message', client: null },
        'via relay': {
          face: 'mcp',
          tool: 'send_message',
          client: { name: 'desk-host', version: '9.0', session: null },
        },
      };
      for (const [subject, provenance] of Object.entries(expected)) {
        const listed = bySubject.get(subject)!;
        const whole = {
          api_key_id: keyId,
          api_key_name: expect.any(String),
          principal: 'api_key',
          approval_id: null,
          request_id: expect.any(String),
          ...provenance,
        };
        expect(listed.provenance).toEqual(whole);
        const one = (await fetch(`${service.url}/v3/grants/${grantId}/messages/${listed.id}`, { headers: auth() }).then(
          (response) => response.json(),
        )) as { data: { provenance: unknown } };
        expect(one.data.provenance).toEqual(whole);
        const notified = deliveries.find((delivery) => delivery.json.data.object.id === listed.id);
        expect(notified?.json.type).toBe('message.send_success');
        expect(notified?.json.data.object.provenance).toEqual(whole);
      }
      expect(bySubject.get('via http')!.id).toBe(viaSdk.data.id);
    });
  });
});
