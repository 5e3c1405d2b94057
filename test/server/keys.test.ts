/**
 * Keys with least privilege (issue 36, items 1 and 2), through the running service: keys made over /v3/api-keys
 * with a scope, permissions and an expiry; every route of the OpenAPI document tried with a key that lacks the
 * scope (404, like an unknown id) and with one that lacks the permission (403 naming it); an expired and a revoked
 * key get 401; a grant-scoped key lists only its grant through the nylas SDK; a key cannot mint a wider key; MCP
 * over Streamable HTTP offers a read-only key no sending tool and refuses a crafted call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PERMISSIONS } from '../../src/index.js';
import { SCOPED_BY_THEMSELVES } from '../../src/operations/index.js';
import { fixedClock } from '../helpers/clock.js';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'keys.agentpost.localhost';

interface KeyAnswer {
  id: string;
  key: string;
  name: string;
  scope: { grant_ids?: string[]; workspace_ids?: string[] };
  permissions: string[];
  expires_at: number | null;
  created_by: string | null;
}

describe('scoped keys', () => {
  let service: TestService;
  const clock = fixedClock('2026-11-29T12:00:00Z');
  const seconds = () => Math.floor(clock.now().getTime() / 1000);
  let grantA: string;
  let grantB: string;

  /** Makes a key with `body`, as the key `as` (the application's by default); answers the whole response. */
  const make = (body: Record<string, unknown>, as = service.apiKey) =>
    request(service.url, 'POST', '/v3/api-keys', { key: as, body });
  const made = async (body: Record<string, unknown>, as?: string): Promise<KeyAnswer> => {
    const response = await make(body, as);
    expect(response.status, response.text).toBe(201);
    return response.body.data as KeyAnswer;
  };

  beforeAll(async () => {
    // The sweep of every route makes a few hundred calls in a second or two: no per-second budget here.
    service = await startTestService({
      deps: { clock },
      env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0', AGENTPOST_RATE_LIMIT_GRANT: '0' },
    });
    grantA = await createMailbox(service, `a@${DOMAIN}`);
    grantB = await createMailbox(service, `b@${DOMAIN}`);
  });
  afterAll(async () => {
    await service.close();
  });

  it('makes a key whose secret is answered once and listed without it', async () => {
    const key = await made({ name: 'reader', scope: { grant_ids: [grantA] }, permissions: ['mail.read'] });
    expect(key).toMatchObject({
      name: 'reader',
      scope: { grant_ids: [grantA] },
      permissions: ['mail.read'],
      expires_at: null,
    });
    expect(key.key).toMatch(/^agp_/);
    const listed = await request(service.url, 'GET', '/v3/api-keys', { key: service.apiKey });
    const row = (listed.body.data as Record<string, unknown>[]).find((item) => item.id === key.id);
    expect(row).toMatchObject({ name: 'reader', permissions: ['mail.read'] });
    expect(row).not.toHaveProperty('key');
    expect(JSON.stringify(listed.body)).not.toContain(key.key);
    const current = await request(service.url, 'GET', '/v3/api-keys/current', { key: key.key });
    expect(current.body.data).toMatchObject({ id: key.id, scope: { grant_ids: [grantA] } });
    // A key made without a list holds every permission.
    const all = await made({ name: 'all' });
    expect(all.permissions).toEqual([...PERMISSIONS]);
    expect(all.scope).toEqual({});
  });

  it('lets a grant-scoped key see only its grant through the nylas SDK, and answers others as unknown', async () => {
    const key = await made({ name: 'mailbox a', scope: { grant_ids: [grantA] } });
    const nylas = service.client(key.key);
    const grants = await nylas.grants.list();
    expect(grants.data.map((grant) => grant.id)).toEqual([grantA]);
    expect((await nylas.folders.list({ identifier: grantA })).data.length).toBeGreaterThan(0);
    // Named by address, the grant is reached too.
    expect((await nylas.folders.list({ identifier: `a@${DOMAIN}` })).data.length).toBeGreaterThan(0);
    const other = await sdkError(nylas.folders.list({ identifier: grantB }));
    const unknown = await sdkError(service.nylas.folders.list({ identifier: 'no-such-grant' }));
    expect(other.statusCode).toBe(404);
    expect(other.message).toBe(unknown.message.replace('no-such-grant', grantB));
    const byAddress = await sdkError(nylas.folders.list({ identifier: `b@${DOMAIN}` }));
    expect(byAddress.statusCode).toBe(404);
    // The application's own objects: one by id is unknown, the collection needs an application key.
    expect((await sdkError(nylas.webhooks.find({ webhookId: 'wh_1' }))).statusCode).toBe(404);
    const webhooks = await sdkError(nylas.webhooks.list());
    expect(webhooks.statusCode).toBe(403);
    expect(webhooks.message).toMatch(/whole application/);
  });

  it('tries every route of the OpenAPI document with a key outside its scope (404) and one without its permission (403)', async () => {
    const outside = await made({ name: 'scoped to a', scope: { grant_ids: [grantA] } });
    const powerless = await made({ name: 'no permissions', permissions: [] });
    const document = (await request(service.url, 'GET', '/v3/openapi.json')).body as {
      paths: Record<string, Record<string, { operationId: string; 'x-agentpost-permissions'?: string[] }>>;
    };
    let tried = 0;
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const needs = operation['x-agentpost-permissions'];
        if (needs === undefined) continue; // a hand-written route (tried below)
        const hasBody = method === 'post' || method === 'put' || method === 'patch';
        const call = (key: string, grant: string) =>
          request(service.url, method.toUpperCase(), path.replace('{grant_id}', grant).replace(/\{[a-z_]+\}/g, 'x1'), {
            key,
            ...(hasBody ? { body: {} } : {}),
          });
        const name = `${method.toUpperCase()} ${path}`;
        if (needs.length > 0) {
          const refused = await call(powerless.key, grantA);
          expect(refused.status, `${name} without ${needs[0]}`).toBe(403);
          expect(isErrorEnvelope(refused.body), name).toBe(true);
          expect(refused.body.error.message, name).toContain(needs[0]);
        }
        if (SCOPED_BY_THEMSELVES.has(operation.operationId)) continue;
        const away = await call(outside.key, grantB);
        const expected = path.includes('{') ? 404 : 403;
        expect(away.status, `${name} outside the scope: ${away.text}`).toBe(expected);
        expect(isErrorEnvelope(away.body), name).toBe(true);
        tried += 1;
      }
    }
    expect(tried).toBeGreaterThan(100);
  });

  it('guards the hand-written routes as the operations they resemble', async () => {
    const outside = await made({ name: 'files of a', scope: { grant_ids: [grantA] } });
    const download = await request(service.url, 'GET', `/v3/grants/${grantB}/attachments/x1/download?message_id=m1`, {
      key: outside.key,
    });
    expect(download.status).toBe(404);
    const mailOnly = await made({ name: 'mail only', permissions: ['mail.read'] });
    const feed = await request(service.url, 'GET', `/v3/grants/${grantA}/calendars/primary/ics`, {
      key: mailOnly.key,
    });
    expect(feed.status).toBe(403);
    expect(feed.body.error.message).toContain('calendar.read');
  });

  it('refuses a key wider than the key that makes it', async () => {
    const maker = await made({
      name: 'maker',
      scope: { grant_ids: [grantA] },
      permissions: ['mail.read', 'mail.send', 'keys.manage'],
      expires_at: seconds() + 3600,
    });
    const wider = [
      { scope: { grant_ids: [grantB] } },
      { scope: { grant_ids: [grantA, grantB] } },
      { permissions: ['mail.read', 'admin'] },
      { expires_at: seconds() + 7200 },
    ];
    for (const body of wider) {
      const refused = await make({ name: 'wider', ...body }, maker.key);
      expect(refused.status, JSON.stringify(body)).toBe(403);
      expect(refused.body.error.message).toMatch(/narrower than or equal/);
    }
    // Absent fields inherit the maker's: the same scope, permissions and expiry.
    const child = await made({ name: 'child', permissions: ['mail.read'] }, maker.key);
    expect(child).toMatchObject({
      scope: { grant_ids: [grantA] },
      permissions: ['mail.read'],
      expires_at: maker.expires_at,
      created_by: maker.id,
    });
    // A scoped key sees the keys it made, not the others; the application key sees them all.
    const seen = await request(service.url, 'GET', '/v3/api-keys', { key: maker.key });
    expect((seen.body.data as { id: string }[]).map((key) => key.id).sort()).toEqual([child.id, maker.id].sort());
    const stranger = await made({ name: 'stranger' });
    expect((await request(service.url, 'GET', `/v3/api-keys/${stranger.id}`, { key: maker.key })).status).toBe(404);
    expect((await request(service.url, 'DELETE', `/v3/api-keys/${stranger.id}`, { key: maker.key })).status).toBe(404);
    // Without keys.manage, no key at all.
    expect((await make({ name: 'grandchild' }, child.key)).status).toBe(403);
    // An unknown grant in a scope is named.
    const unknown = await make({ name: 'nowhere', scope: { grant_ids: ['no-such-grant'] } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain('no-such-grant');
  });

  it("marks an agent's key (issue 37), shows it, and passes it on to the keys it makes", async () => {
    const plain = await made({ name: 'person' });
    expect(plain).toMatchObject({ agent: false });
    const agent = await made({ name: 'agent', agent: true, permissions: ['mail.read', 'mail.send', 'keys.manage'] });
    expect(agent).toMatchObject({ agent: true });
    const current = await request(service.url, 'GET', '/v3/api-keys/current', { key: agent.key });
    expect(current.body.data).toMatchObject({ id: agent.id, agent: true });
    // A key made by an agent's key is an agent's too; asking otherwise is asking for a wider key.
    expect(await made({ name: 'sub-agent', permissions: ['mail.read'] }, agent.key)).toMatchObject({ agent: true });
    const escape = await make({ name: 'not-an-agent', agent: false, permissions: ['mail.read'] }, agent.key);
    expect(escape.status).toBe(403);
    expect(escape.body.error.message).toMatch(/agent's key/);
  });

  it('reaches the grants of its workspaces, including one moved in later', async () => {
    const workspace = await request(service.url, 'POST', '/v3/workspaces', {
      key: service.apiKey,
      body: { name: 'Support' },
    });
    expect(workspace.status, workspace.text).toBeLessThan(300);
    const workspaceId = workspace.body.data.workspace_id as string;
    const key = await made({ name: 'support desk', scope: { workspace_ids: [workspaceId] } });
    const nylas = service.client(key.key);
    expect((await nylas.grants.list()).data).toEqual([]);
    expect((await sdkError(nylas.folders.list({ identifier: grantB }))).statusCode).toBe(404);
    const moved = await request(service.url, 'PATCH', `/v3/grants/${grantB}`, {
      key: service.apiKey,
      body: { workspace_id: workspaceId },
    });
    expect(moved.status, moved.text).toBe(200);
    expect((await nylas.grants.list()).data.map((grant) => grant.id)).toEqual([grantB]);
    expect((await nylas.folders.list({ identifier: grantB })).data.length).toBeGreaterThan(0);
  });

  it('answers 401 to a revoked key and to an expired one', async () => {
    const revoked = await made({ name: 'to revoke' });
    const deleted = await request(service.url, 'DELETE', `/v3/api-keys/${revoked.id}`, { key: service.apiKey });
    expect(deleted.status).toBe(200);
    const afterRevoke = await request(service.url, 'GET', '/v3/grants', { key: revoked.key });
    expect(afterRevoke.status).toBe(401);
    const listed = await request(service.url, 'GET', `/v3/api-keys/${revoked.id}`, { key: service.apiKey });
    expect(listed.body.data.revoked_at).toBe(seconds());

    const expiring = await made({ name: 'short lived', expires_at: seconds() + 60 });
    expect((await request(service.url, 'GET', '/v3/grants', { key: expiring.key })).status).toBe(200);
    clock.advance(61_000);
    const expired = await request(service.url, 'GET', '/v3/grants', { key: expiring.key });
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toMatch(/expired/);
    // A key cannot be made already expired.
    expect((await make({ name: 'stale', expires_at: seconds() - 1 })).status).toBe(400);
  });

  it('offers a read-only key no sending tool over MCP, and refuses a crafted call', async () => {
    const key = await made({ name: 'agent reader', scope: { grant_ids: [grantA] }, permissions: ['mail.read'] });
    const client = new Client({ name: 'keys-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key.key}` } },
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('list_messages');
      for (const writer of ['send_message', 'create_draft', 'send_draft', 'update_message', 'create_event'])
        expect(names).not.toContain(writer);
      // The server refuses what the list does not offer: call the operation through a second session's raw request.
      const crafted = await request(service.url, 'POST', '/mcp', {
        key: key.key,
        headers: { accept: 'application/json, text/event-stream' },
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'send_message', arguments: { grant_id: grantA, to: [{ email: 'x@example.com' }] } },
        },
      });
      expect(crafted.text).toMatch(/send_message|not found|mail\.send/i);
      expect(crafted.text).not.toMatch(/"isError":false/);
      const other = await client.callTool({ name: 'list_messages', arguments: { grant_id: grantB } });
      expect(other.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
