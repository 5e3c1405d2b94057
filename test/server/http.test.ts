import { NylasApiError } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';

describe('HTTP basics of /v3', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });

  describe('authentication', () => {
    it('answers 401 in the Nylas error shape without a key', async () => {
      const response = await request(service.url, 'GET', '/v3/grants');
      expect(response.status).toBe(401);
      expect(response.body).toEqual({
        request_id: expect.any(String),
        error: { type: 'unauthorized', message: expect.stringContaining('Bearer') },
      });
    });

    it.each([
      ['a wrong key', { authorization: 'Bearer agp_not_a_real_key' }],
      ['an empty Bearer', { authorization: 'Bearer ' }],
      ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ])('answers 401 for %s', async (_name, headers) => {
      const response = await request(service.url, 'GET', '/v3/grants', { headers });
      expect(response.status).toBe(401);
      expect(isErrorEnvelope(response.body)).toBe(true);
      expect(response.body.error.type).toBe('unauthorized');
    });

    it('gives the SDK a NylasApiError with status 401 for a wrong key', async () => {
      const error = await service
        .client('agp_wrong')
        .grants.list()
        .then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
      expect(error).toBeInstanceOf(NylasApiError);
      expect((error as NylasApiError).statusCode).toBe(401);
      expect((error as NylasApiError).type).toBe('unauthorized');
      expect((error as NylasApiError).requestId).toEqual(expect.any(String));
    });

    it('accepts any case of the Bearer scheme', async () => {
      expect(
        (await request(service.url, 'GET', '/v3/grants', { headers: { authorization: `bearer ${service.apiKey}` } }))
          .status,
      ).toBe(200);
    });

    it('refuses a key at once after it is revoked, and keeps the others working', async () => {
      const applicationId = await service.core.accounts.applications.defaultApplicationId();
      const { id, apiKey } = await service.core.accounts.applications.createKey(applicationId, { name: 'temporary' });
      expect((await request(service.url, 'GET', '/v3/grants', { key: apiKey })).status).toBe(200);
      expect((await service.client(apiKey).grants.list()).data).toEqual([]);
      await service.core.accounts.applications.revokeKey(applicationId, id);
      const revoked = await request(service.url, 'GET', '/v3/grants', { key: apiKey });
      expect(revoked.status).toBe(401);
      expect(isErrorEnvelope(revoked.body)).toBe(true);
      expect((await request(service.url, 'GET', '/v3/grants', { key: service.apiKey })).status).toBe(200);
      const listed = await service.core.accounts.applications.listKeys(applicationId);
      expect(listed.find((key) => key.id === id)).toMatchObject({ name: 'temporary', revoked_at: expect.any(Number) });
      expect(JSON.stringify(listed)).not.toContain(apiKey);
    });
  });

  describe('errors', () => {
    it('answers an unknown route with 404 in the error shape', async () => {
      for (const [method, path] of [
        ['GET', '/v3/nothing-here'],
        ['PUT', '/v3/grants'],
        ['GET', '/nothing-here'],
      ] as const) {
        const response = await request(service.url, method, path, { key: service.apiKey });
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(response.body.error).toEqual({ type: 'not_found_error', message: expect.stringContaining(path) });
      }
    });

    it('rejects a JSON body over 3 MB with 413', async () => {
      const big = {
        provider: 'nylas',
        settings: { email: 'big@big.agentpost.localhost' },
        name: 'x'.repeat(3 * 1024 * 1024),
      };
      const response = await request(service.url, 'POST', '/v3/connect/custom', { key: service.apiKey, body: big });
      expect(response.status).toBe(413);
      expect(isErrorEnvelope(response.body)).toBe(true);
      expect(response.body.error.message).toContain('3 MB');
      expect(response.headers.get('x-request-id')).toBe(response.body.request_id);
    });

    it('rejects an over-size body sent without Content-Length (chunked) with 413', async () => {
      const chunk = new TextEncoder().encode('x'.repeat(1024 * 1024));
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 4) return controller.close();
          sent += 1;
          controller.enqueue(chunk);
        },
      });
      const response = await fetch(`${service.url}/v3/connect/custom`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      });
      expect(response.status).toBe(413);
      expect(isErrorEnvelope(await response.json())).toBe(true);
    });

    it('accepts a body just under the limit (it is parsed, then validated)', async () => {
      const response = await request(service.url, 'POST', '/v3/connect/custom', {
        key: service.apiKey,
        body: {
          provider: 'nylas',
          settings: { email: 'x@unregistered.example.com' },
          state: 's',
          padding: 'x'.repeat(2 * 1024 * 1024),
        },
      });
      expect(response.status).toBe(400);
      expect(response.body.error.message).toContain('not a registered domain');
    });

    it('rejects malformed JSON and non-object bodies with 400', async () => {
      const malformed = await request(service.url, 'POST', '/v3/admin/domains', {
        key: service.apiKey,
        body: '{"name": "x",',
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error).toEqual({
        type: 'invalid_request_error',
        message: expect.stringContaining('parsing'),
      });
      const array = await request(service.url, 'POST', '/v3/admin/domains', { key: service.apiKey, body: '[1,2]' });
      expect(array.status).toBe(400);
      expect(array.body.error.message).toContain('JSON object');
    });

    it('rejects an invalid field with 400 whose message names the field', async () => {
      const response = await request(service.url, 'POST', '/v3/admin/domains', {
        key: service.apiKey,
        body: { name: 'x', domain_address: 'no spaces allowed.com' },
      });
      expect(response.status).toBe(400);
      expect(response.body.error.type).toBe('invalid_request_error');
      expect(response.body.error.message).toMatch(/^domain_address: /);
      const missing = await request(service.url, 'POST', '/v3/admin/domains', {
        key: service.apiKey,
        body: { domain_address: 'ok.example.com' },
      });
      expect(missing.body.error.message).toMatch(/^name: /);
      const query = await request(service.url, 'GET', '/v3/admin/domains?limit=lots', { key: service.apiKey });
      expect(query.status).toBe(400);
      expect(query.body.error.message).toMatch(/^limit: /);
    });
  });

  describe('x-request-id', () => {
    it('is on every response, success or error, equals the body request_id and differs per request', async () => {
      const responses = [
        await request(service.url, 'GET', '/v3/grants', { key: service.apiKey }),
        await request(service.url, 'GET', '/v3/grants', { key: service.apiKey }),
        await request(service.url, 'GET', '/v3/grants'),
        await request(service.url, 'GET', '/v3/grants/none', { key: service.apiKey }),
        await request(service.url, 'POST', '/v3/admin/domains', { key: service.apiKey, body: '{' }),
        await request(service.url, 'GET', '/v3/unknown', { key: service.apiKey }),
      ];
      expect(responses.map((response) => response.status)).toEqual([200, 200, 401, 404, 400, 404]);
      const ids = responses.map((response) => response.headers.get('x-request-id'));
      for (const [index, response] of responses.entries()) {
        expect(ids[index]).toMatch(/^[0-9a-f-]{36}$/);
        expect(response.body.request_id).toBe(ids[index]);
      }
      expect(new Set(ids).size).toBe(ids.length);
    });
  });

  it('fails to start with a message naming the variable when the HTTP port is taken', async () => {
    const port = new URL(service.url).port;
    const error = await startTestService({ env: { AGENTPOST_HTTP_PORT: port } }).then(
      async (started) => {
        await started.close();
        return undefined;
      },
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain('AGENTPOST_HTTP_PORT');
    expect((error as Error).message).toContain(port);
  });

  it('answers /healthz with 200 without a key', async () => {
    const response = await request(service.url, 'GET', '/healthz');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok', threads: {} });
    expect(response.headers.get('x-request-id')).toEqual(expect.any(String));
  });
});
