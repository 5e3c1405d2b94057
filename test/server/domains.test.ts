import { generateKeyPairSync } from 'node:crypto';
import { ServiceAccountSigner, type Domain } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../helpers/clock.js';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { sdkError } from '../helpers/sdk.js';

/** What an SDK call threw (or a failure if it did not). */

describe('/v3/admin/domains', () => {
  let service: TestService;
  // The server's clock stands at the real time (the SDK signs with Date.now()) until a test moves it.
  const clock = fixedClock(new Date().toISOString());
  let signer: ServiceAccountSigner;
  let keyId: string;

  beforeAll(async () => {
    service = await startTestService({ deps: { clock } });
    const applicationId = await service.core.accounts.applications.defaultApplicationId();
    const credentials = await service.core.accounts.applications.createServiceAccount(applicationId);
    keyId = credentials.private_key_id;
    signer = new ServiceAccountSigner({
      privateKeyPem: credentials.private_key,
      privateKeyId: credentials.private_key_id,
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  describe('through the SDK with a service-account signature', () => {
    let created: Domain;

    it('creates a trial subdomain, usable at once', async () => {
      const response = await service.nylas.domains.create({
        requestBody: { name: 'Trial', domainAddress: 'Team.agentpost.localhost' },
        signer,
      });
      created = response.data;
      expect(response.requestId).toEqual(expect.any(String));
      expect(created).toMatchObject({
        id: expect.any(String),
        name: 'Trial',
        domainAddress: 'team.agentpost.localhost',
        organizationId: await service.core.accounts.applications.defaultApplicationId(),
        branded: true,
        verifiedOwnership: true,
        verifiedMx: true,
        createdAt: Math.floor(clock.now().getTime() / 1000),
      });
    });

    it('finds, lists, renames and deletes it', async () => {
      const found = await service.nylas.domains.find({ domainId: created.id!, signer });
      expect(found.data).toEqual(created);

      const listed = await service.nylas.domains.list({ signer });
      expect(listed.data.map((domain) => domain.id)).toContain(created.id);
      // The query string is not part of what is signed.
      const limited = await service.nylas.domains.list({ signer, queryParams: { limit: 1 } });
      expect(limited.data).toHaveLength(1);

      const renamed = await service.nylas.domains.update({
        domainId: created.id!,
        requestBody: { name: 'Renamed' },
        signer,
      });
      expect(renamed.data.name).toBe('Renamed');
      expect((await service.nylas.domains.find({ domainId: created.id!, signer })).data.name).toBe('Renamed');

      const destroyed = await service.nylas.domains.destroy({ domainId: created.id!, signer });
      expect(destroyed.requestId).toEqual(expect.any(String));
      const missing = await sdkError(service.nylas.domains.find({ domainId: created.id!, signer }));
      expect(missing.statusCode).toBe(404);
      expect(missing.type).toBe('not_found_error');
    });

    it('answers info and verify for a trial domain without DNS', async () => {
      const domain = (
        await service.nylas.domains.create({
          requestBody: { name: 'T2', domainAddress: 't2.agentpost.localhost' },
          signer,
        })
      ).data;
      const info = await service.nylas.domains.info({
        domainId: domain.id!,
        requestBody: { type: 'ownership' },
        signer,
      });
      expect(info.data).toMatchObject({ domainId: domain.id, status: 'done', attempt: { type: 'ownership' } });
      const verified = await service.nylas.domains.verify({
        domainId: domain.id!,
        requestBody: { type: 'mx' },
        signer,
      });
      expect(verified.data.status).toBe('done');
    });

    it('rejects a duplicate address with 409 and a bad one with 400 naming domain_address', async () => {
      await service.nylas.domains.create({
        requestBody: { name: 'Dup', domainAddress: 'dup.agentpost.localhost' },
        signer,
      });
      const duplicate = await sdkError(
        service.nylas.domains.create({
          requestBody: { name: 'Dup', domainAddress: 'DUP.agentpost.localhost' },
          signer,
        }),
      );
      expect(duplicate.statusCode).toBe(409);
      expect(duplicate.message).toContain('domain_address');
      const bad = await sdkError(
        service.nylas.domains.create({ requestBody: { name: 'Bad', domainAddress: 'not a domain' }, signer }),
      );
      expect(bad.statusCode).toBe(400);
      expect(bad.message).toContain('domain_address');
      const nested = await sdkError(
        service.nylas.domains.create({
          requestBody: { name: 'Nested', domainAddress: 'a.dup.agentpost.localhost' },
          signer,
        }),
      );
      expect(nested.statusCode).toBe(400);
      expect(nested.message).toContain('one label under agentpost.localhost');
      const badType = await sdkError(
        service.nylas.domains.info({ domainId: 'whatever', requestBody: { type: 'nope' as 'mx' }, signer }),
      );
      expect(badType.statusCode).toBe(400);
      expect(badType.message).toContain('type');
    });
  });

  describe('with a Bearer API key', () => {
    it('runs the same calls', async () => {
      const key = service.apiKey;
      const created = await request(service.url, 'POST', '/v3/admin/domains', {
        key,
        body: { name: 'Keyed', domain_address: 'keyed.agentpost.localhost' },
      });
      expect(created.status).toBe(200);
      expect(created.body.data).toMatchObject({
        name: 'Keyed',
        domain_address: 'keyed.agentpost.localhost',
        branded: true,
      });
      const id = created.body.data.id as string;

      const found = await request(service.url, 'GET', `/v3/admin/domains/${id}`, { key });
      expect(found.body.data).toEqual(created.body.data);
      const updated = await request(service.url, 'PUT', `/v3/admin/domains/${id}`, { key, body: { name: 'Keyed 2' } });
      expect(updated.body.data.name).toBe('Keyed 2');
      const info = await request(service.url, 'POST', `/v3/admin/domains/${id}/info`, { key, body: { type: 'spf' } });
      expect(info.body.data.attempt.options).toMatchObject({ type: 'TXT', host: 'keyed.agentpost.localhost' });
      const deleted = await request(service.url, 'DELETE', `/v3/admin/domains/${id}`, { key });
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({ request_id: expect.any(String) });
      expect((await request(service.url, 'GET', `/v3/admin/domains/${id}`, { key })).status).toBe(404);
    });

    it('pages the list with limit and page_token, oldest first', async () => {
      const key = service.apiKey;
      for (const name of ['page-a', 'page-b', 'page-c']) {
        clock.advance(1000);
        expect(
          (
            await request(service.url, 'POST', '/v3/admin/domains', {
              key,
              body: { name, domain_address: `${name}.agentpost.localhost` },
            })
          ).status,
        ).toBe(200);
      }
      const all: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await request(
          service.url,
          'GET',
          `/v3/admin/domains?limit=2${token ? `&page_token=${token}` : ''}`,
          { key },
        );
        expect(page.status).toBe(200);
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        all.push(...page.body.data.map((domain: { name: string }) => domain.name));
        token = page.body.next_cursor;
        pages += 1;
      } while (token && pages < 20);
      expect(all.filter((name) => name.startsWith('page-'))).toEqual(['page-a', 'page-b', 'page-c']);
      expect(new Set(all).size).toBe(all.length);
      const bad = await request(service.url, 'GET', '/v3/admin/domains?page_token=garbage', { key });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('page_token');
    });
  });

  describe('signature failures are 401 in the Nylas error shape', () => {
    const path = '/v3/admin/domains';

    async function signedGet(headers: Record<string, string>) {
      return request(service.url, 'GET', path, { headers });
    }

    it('a signature made with another key', async () => {
      const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString();
      const forged = new ServiceAccountSigner({ privateKeyPem: otherKey, privateKeyId: keyId });
      const error = await sdkError(service.nylas.domains.list({ signer: forged }));
      expect(error.statusCode).toBe(401);
      expect(error.type).toBe('unauthorized');
      expect(error.message).toContain('X-Nylas-Signature');
      expect(error.requestId).toEqual(expect.any(String));
    });

    it('an unknown key id', async () => {
      const unknown = new ServiceAccountSigner({
        privateKeyPem: generateKeyPairSync('rsa', { modulusLength: 2048 })
          .privateKey.export({ type: 'pkcs8', format: 'pem' })
          .toString(),
        privateKeyId: 'no_such_key',
      });
      const error = await sdkError(service.nylas.domains.list({ signer: unknown }));
      expect(error.statusCode).toBe(401);
      expect(error.message).toContain('X-Nylas-Kid');
    });

    it('a body other than the one signed', async () => {
      const { headers } = signer.buildHeaders({
        method: 'POST',
        path,
        body: { name: 'A', domain_address: 'signed.agentpost.localhost' },
      });
      const response = await request(service.url, 'POST', path, {
        headers,
        body: { name: 'A', domain_address: 'swapped.agentpost.localhost' },
      });
      expect(response.status).toBe(401);
      expect(isErrorEnvelope(response.body)).toBe(true);
      // The same body re-ordered and re-spaced is still the signed body.
      const again = signer.buildHeaders({
        method: 'POST',
        path,
        body: { name: 'A', domain_address: 'signed.agentpost.localhost' },
      });
      const reordered = await request(service.url, 'POST', path, {
        headers: again.headers,
        body: '{ "domain_address": "signed.agentpost.localhost", "name": "A" }',
      });
      expect(reordered.status).toBe(200);
    });

    it('a timestamp more than five minutes from the server clock, either way', async () => {
      const now = Math.floor(clock.now().getTime() / 1000);
      for (const timestamp of [now - 301, now + 301]) {
        const { headers } = signer.buildHeaders({ method: 'GET', path, timestamp });
        const response = await signedGet(headers);
        expect(response.status).toBe(401);
        expect(response.body.error).toEqual({
          type: 'unauthorized',
          message: expect.stringContaining('X-Nylas-Timestamp'),
        });
      }
      const { headers } = signer.buildHeaders({ method: 'GET', path, timestamp: now - 299 });
      expect((await signedGet(headers)).status).toBe(200);

      // The same through the SDK when the server's clock is ahead by six minutes.
      clock.advance(6 * 60 * 1000);
      try {
        const error = await sdkError(service.nylas.domains.list({ signer }));
        expect(error.statusCode).toBe(401);
        expect(error.message).toContain('X-Nylas-Timestamp');
      } finally {
        clock.advance(-6 * 60 * 1000);
      }
      expect((await service.nylas.domains.list({ signer })).data.length).toBeGreaterThan(0);
    });

    it('a nonce used before (a replayed request)', async () => {
      const { headers } = signer.buildHeaders({ method: 'GET', path });
      const first = await signedGet(headers);
      expect(first.status).toBe(200);
      const replay = await signedGet(headers);
      expect(replay.status).toBe(401);
      expect(replay.body.error.message).toContain('X-Nylas-Nonce');
      expect(isErrorEnvelope(replay.body)).toBe(true);
      expect(replay.headers.get('x-request-id')).toBe(replay.body.request_id);
    });

    it('missing signature headers, or a signature on a route outside /v3/admin', async () => {
      const { headers } = signer.buildHeaders({ method: 'GET', path });
      const { 'X-Nylas-Signature': _signature, ...unsigned } = headers;
      expect((await signedGet(unsigned)).status).toBe(401);
      const grants = signer.buildHeaders({ method: 'GET', path: '/v3/grants' });
      const response = await request(service.url, 'GET', '/v3/grants', { headers: grants.headers });
      expect(response.status).toBe(401);
      expect(isErrorEnvelope(response.body)).toBe(true);
    });
  });

  describe('DNS verification of a custom domain', () => {
    let domainId: string;
    const email = 'agent@custom.example.com';

    it('starts unverified, and Agent Accounts cannot be made on it yet', async () => {
      const created = await service.nylas.domains.create({
        requestBody: { name: 'Custom', domainAddress: 'custom.example.com' },
        signer,
      });
      domainId = created.data.id!;
      expect(created.data).toMatchObject({
        branded: false,
        verifiedOwnership: false,
        verifiedMx: false,
        verifiedSpf: false,
        verifiedDkim: false,
      });
      const error = await sdkError(
        service.nylas.auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email } } }),
      );
      expect(error.statusCode).toBe(400);
      expect(error.message).toContain('not verified');
      expect(error.message).toContain(domainId);
    });

    it('tells which ownership TXT record to publish', async () => {
      const info = (await service.nylas.domains.info({ domainId, requestBody: { type: 'ownership' }, signer })).data;
      expect(info.status).toBe('pending');
      expect(info.attempt?.options).toMatchObject({
        type: 'TXT',
        host: '_agentpost.custom.example.com',
        value: expect.stringMatching(/^agentpost-verification=/),
      });
      expect(info.message).toContain('_agentpost.custom.example.com');
    });

    it('fails ownership while the record is missing or wrong, then succeeds once published', async () => {
      const missing = (await service.nylas.domains.verify({ domainId, requestBody: { type: 'ownership' }, signer }))
        .data;
      expect(missing.status).toBe('failed');
      expect(missing.message).toContain('_agentpost.custom.example.com');

      service.dns.txt.set('_agentpost.custom.example.com', [['agentpost-verification=wrong']]);
      expect(
        (await service.nylas.domains.verify({ domainId, requestBody: { type: 'ownership' }, signer })).data.status,
      ).toBe('failed');
      expect((await service.nylas.domains.find({ domainId, signer })).data.verifiedOwnership).toBe(false);

      const info = (await service.nylas.domains.info({ domainId, requestBody: { type: 'ownership' }, signer })).data;
      const value = info.attempt!.options!.value as string;
      // Long TXT values arrive split into chunks; they are joined before comparing.
      service.dns.txt.set('_agentpost.custom.example.com', [['v=spf1 -all'], [value.slice(0, 10), value.slice(10)]]);
      const done = (await service.nylas.domains.verify({ domainId, requestBody: { type: 'ownership' }, signer })).data;
      expect(done.status).toBe('done');
      expect((await service.nylas.domains.find({ domainId, signer })).data.verifiedOwnership).toBe(true);
      expect(
        (await service.nylas.domains.info({ domainId, requestBody: { type: 'ownership' }, signer })).data.status,
      ).toBe('done');
    });

    it('fails MX until the MX record names the service, then succeeds', async () => {
      const info = (await service.nylas.domains.info({ domainId, requestBody: { type: 'mx' }, signer })).data;
      expect(info.attempt?.options).toMatchObject({
        type: 'MX',
        host: 'custom.example.com',
        value: service.config.mxHost,
      });
      expect((await service.nylas.domains.verify({ domainId, requestBody: { type: 'mx' }, signer })).data.status).toBe(
        'failed',
      );
      service.dns.mx.set('custom.example.com', [{ exchange: 'mx.elsewhere.example.net', priority: 10 }]);
      expect((await service.nylas.domains.verify({ domainId, requestBody: { type: 'mx' }, signer })).data.status).toBe(
        'failed',
      );
      service.dns.mx.set('custom.example.com', [
        { exchange: 'mx.elsewhere.example.net', priority: 20 },
        { exchange: `${service.config.mxHost.toUpperCase()}.`, priority: 10 },
      ]);
      expect((await service.nylas.domains.verify({ domainId, requestBody: { type: 'mx' }, signer })).data.status).toBe(
        'done',
      );
      expect((await service.nylas.domains.find({ domainId, signer })).data.verifiedMx).toBe(true);
    });

    it('verifies SPF and DKIM from their published TXT records', async () => {
      expect((await service.nylas.domains.verify({ domainId, requestBody: { type: 'spf' }, signer })).data.status).toBe(
        'failed',
      );
      service.dns.txt.set('custom.example.com', [[`v=spf1 a:${service.config.mxHost} ~all`]]);
      expect((await service.nylas.domains.verify({ domainId, requestBody: { type: 'spf' }, signer })).data.status).toBe(
        'done',
      );

      const dkim = (await service.nylas.domains.info({ domainId, requestBody: { type: 'dkim' }, signer })).data;
      const record = dkim.attempt!.options as { host: string; value: string };
      expect(record.host).toBe('agentpost._domainkey.custom.example.com');
      expect(record.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]{300,}$/);
      // The key is made once: asking again gives the same record.
      expect(
        (await service.nylas.domains.info({ domainId, requestBody: { type: 'dkim' }, signer })).data.attempt!.options!
          .value,
      ).toBe(record.value);
      expect(
        (await service.nylas.domains.verify({ domainId, requestBody: { type: 'dkim' }, signer })).data.status,
      ).toBe('failed');
      service.dns.txt.set(record.host, [[record.value]]);
      expect(
        (await service.nylas.domains.verify({ domainId, requestBody: { type: 'dkim' }, signer })).data.status,
      ).toBe('done');
      const domain = (await service.nylas.domains.find({ domainId, signer })).data;
      expect(domain).toMatchObject({
        verifiedOwnership: true,
        verifiedMx: true,
        verifiedSpf: true,
        verifiedDkim: true,
      });
    });

    it('then lets Agent Accounts be created on it', async () => {
      const grant = await service.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email } },
      });
      expect(grant.data).toMatchObject({ email, provider: 'nylas', grantStatus: 'valid' });
    });
  });

  it('registers AGENTPOST_DOMAINS as verified domains of the default application', async () => {
    const configured = await startTestService({ env: { AGENTPOST_DOMAINS: 'agents.example.org' } });
    try {
      const listed = await request(configured.url, 'GET', '/v3/admin/domains', { key: configured.apiKey });
      expect(listed.body.data).toEqual([
        expect.objectContaining({ domain_address: 'agents.example.org', branded: false, verified_ownership: true }),
      ]);
      const grant = await configured.nylas.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: 'bot@agents.example.org' } },
      });
      expect(grant.data.email).toBe('bot@agents.example.org');
    } finally {
      await configured.close();
    }
  });
});
