/**
 * Rate limits, with small settings and a rate-limit clock the test moves (so nothing depends on how fast the machine
 * is): per application on application-level routes, per grant on grant routes and on /mcp, multipart sends per
 * grant, and failed authentications per client address. Every refusal is a 429 with Retry-After (seconds), in the
 * Nylas shape on /v3 and the JSON-RPC shape on /mcp.
 */
import { NylasApiError } from 'nylas';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addressKey, grantOfPath } from '../../server/middleware/rate-limit.js';
import { mcpTarget } from '../../server/routes/mcp.js';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, TEST_API_KEY, type TestService } from '../helpers/service.js';

const DOMAIN = 'ratelimits.agentpost.localhost';
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

describe('rate limits', () => {
  let service: TestService;
  let now = 0;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    service = await startTestService({
      env: {
        AGENTPOST_RATE_LIMIT_APPLICATION: '3',
        AGENTPOST_RATE_LIMIT_GRANT: '5',
        AGENTPOST_RATE_LIMIT_MULTIPART_SEND: '2',
        AGENTPOST_RATE_LIMIT_FAILED_AUTH: '4',
      },
      rateLimitClock: () => now,
    });
    for (const name of ['alice', 'bob']) {
      now += 10_000;
      const id = await createMailbox(service, `${name}@${DOMAIN}`);
      if (name === 'alice') alice = id;
      else bob = id;
    }
  });
  beforeEach(() => {
    // A minute later: every bucket is full again.
    now += 60_000;
  });
  afterAll(async () => {
    await service?.close();
  });

  const get = (path: string, key = service.apiKey) => request(service.url, 'GET', path, { key });

  /** Asserts a 429 in the Nylas shape with a Retry-After of `seconds`. */
  function expectRefused(response: Awaited<ReturnType<typeof get>>, seconds: number) {
    expect(response.status).toBe(429);
    expect(isErrorEnvelope(response.body)).toBe(true);
    expect(response.body.error.type).toBe('rate_limit_error');
    expect(response.headers.get('retry-after')).toBe(String(seconds));
  }

  it('limits each application on application-level routes, and refills with time', async () => {
    for (let index = 0; index < 3; index++) expect((await service.nylas.grants.list()).data.length).toBe(2);
    const refused = await sdkError(service.nylas.grants.list());
    expect(refused).toBeInstanceOf(NylasApiError);
    expect(refused.statusCode).toBe(429);
    expect(refused.type).toBe('rate_limit_error');
    expect(refused.message).toContain('3 requests a second');
    expectRefused(await get('/v3/webhooks'), 1);

    // Another application has its own budget.
    const other = await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'production' });
    expect((await get('/v3/grants', other.apiKey)).status).toBe(200);
    // Grant routes of the limited application are counted apart.
    expect((await get(`/v3/grants/${alice}/folders`)).status).toBe(200);

    now += 1_000;
    expect((await get('/v3/grants')).status).toBe(200);
  });

  it('limits each grant on its routes; other grants and application-level routes are counted apart', async () => {
    for (let index = 0; index < 5; index++)
      expect((await service.nylas.folders.list({ identifier: alice })).data.length).toBeGreaterThan(0);
    expectRefused(await get(`/v3/grants/${alice}/messages`), 1);
    // A 429 costs nothing: the bucket stays empty but not in debt.
    now += 200;
    expect((await get(`/v3/grants/${alice}/folders`)).status).toBe(200);
    expect((await get(`/v3/grants/${bob}/folders`)).status).toBe(200);
    expect((await get('/v3/grants')).status).toBe(200);
  });

  it('limits multipart sends of a grant to their own budget', async () => {
    const sendMultipart = async () => {
      const form = new FormData();
      form.set('message', JSON.stringify({ subject: 'no recipients', body: 'x' }));
      form.set('file0', new Blob([Buffer.from('hello')], { type: 'text/plain' }), 'a.txt');
      const response = await fetch(`${service.url}/v3/grants/${alice}/messages/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.apiKey}` },
        body: form,
      });
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: (await response.json()) as { error: { type: string; message: string } },
      };
    };
    // Refused for having no recipient, but counted: the limit comes first.
    expect((await sendMultipart()).status).toBe(400);
    expect((await sendMultipart()).status).toBe(400);
    const refused = await sendMultipart();
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('1');
    expect(refused.body.error.message).toContain('2 multipart sends a second');
    // JSON requests of the grant have their own budget.
    expect((await get(`/v3/grants/${alice}/folders`)).status).toBe(200);
  });

  it('limits /mcp per grant (bound with ?grant_id= or named by the tool call) and per application, in the JSON-RPC shape', async () => {
    const mcp = (query: string, body: unknown) =>
      request(service.url, 'POST', `/mcp${query}`, { key: service.apiKey, headers: MCP_HEADERS, body });
    const listFolders = (grant?: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_folders', arguments: grant ? { grant_id: grant } : {} },
    });

    for (let index = 0; index < 5; index++) expect((await mcp(`?grant_id=${alice}`, listFolders())).status).toBe(200);
    const bound = await mcp(`?grant_id=${alice}`, listFolders());
    expect(bound.status).toBe(429);
    expect(bound.headers.get('retry-after')).toBe('1');
    expect(bound.body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, data: { type: 'rate_limit_error' } },
    });
    // The same grant named in the tool call shares the bucket; another grant does not.
    expect((await mcp('', listFolders(alice))).status).toBe(429);
    expect((await mcp('', listFolders(bob))).status).toBe(200);

    for (let index = 0; index < 3; index++)
      expect((await mcp('', { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
    expect((await mcp('', { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(429);
  });

  it('answers 429 to an address after too many failed authentications, even with a valid key, until time passes', async () => {
    for (let index = 0; index < 4; index++) expect((await get('/v3/grants', `agp_wrong_${index}`)).status).toBe(401);
    // 4 a minute: one attempt comes back every 15 s.
    expectRefused(await get('/v3/grants', 'agp_wrong_again'), 15);
    expectRefused(await get('/v3/grants', TEST_API_KEY), 15);
    const mcp = await request(service.url, 'POST', '/mcp', {
      key: TEST_API_KEY,
      headers: MCP_HEADERS,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(mcp.status).toBe(429);
    expect(mcp.body.error.data.type).toBe('rate_limit_error');
    expect(mcp.headers.get('retry-after')).toBe('15');

    now += 15_000;
    expect((await get('/v3/grants', TEST_API_KEY)).status).toBe(200);
    // Successful requests cost the address nothing; the next failure uses the token that came back.
    expect((await get('/v3/grants', 'agp_wrong_later')).status).toBe(401);
    expect((await get('/v3/grants', TEST_API_KEY)).status).toBe(429);
  });
});

describe('rate-limit keys', () => {
  it.each([
    ['/v3/grants/abc/messages', 'abc'],
    ['/v3/grants/me%40example.com/messages/send', 'me@example.com'],
    ['/v3/grants/abc', undefined],
    ['/v3/grants', undefined],
    ['/v3/webhooks/abc', undefined],
  ])('counts %s against grant %s', (path, grant) => {
    expect(grantOfPath(path)).toBe(grant);
  });

  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('keys the address %s as %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });

  it("counts an /mcp request against the bound grant, the tool call's grant, or the application", () => {
    const call = (grant_id?: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_folders', arguments: grant_id ? { grant_id } : {} },
    });
    expect(mcpTarget('g1', call('g2'))).toEqual({ grant: 'g1' });
    expect(mcpTarget(undefined, call('g2'))).toEqual({ grant: 'g2' });
    expect(mcpTarget(undefined, call())).toEqual({});
    expect(mcpTarget(undefined, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).toEqual({});
    expect(mcpTarget(undefined, [call('g2'), call('g2')])).toEqual({ cost: 2 });
    expect(mcpTarget(undefined, undefined)).toEqual({});
  });
});
