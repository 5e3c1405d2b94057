import { NylasApiError } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';

async function statusOf(call: Promise<unknown>): Promise<number> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(NylasApiError);
  return (error as NylasApiError).statusCode ?? 0;
}

describe('isolation between applications', () => {
  let service: TestService;
  let other: Nylas;
  let otherKey: string;
  let domainId: string;
  let grantId: string;
  let folderId: string;
  const email = 'owner@first.agentpost.localhost';

  beforeAll(async () => {
    service = await startTestService();
    const domain = await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'First', domain_address: 'first.agentpost.localhost' },
    });
    domainId = domain.body.data.id;
    grantId = (
      await service.nylas.auth.customAuthentication({ requestBody: { provider: 'nylas', settings: { email } } })
    ).data.id;
    folderId = (await service.nylas.folders.create({ identifier: grantId, requestBody: { name: 'Private' } })).data.id;
    const created = await service.core.accounts.applications.createApplication({ name: 'Second', plan: 'trial' });
    otherKey = created.apiKey;
    other = service.client(otherKey);
  });
  afterAll(async () => {
    await service?.close();
  });

  it("a second application sees none of the first one's domains (404, not 403)", async () => {
    const listed = await request(service.url, 'GET', '/v3/admin/domains', { key: otherKey });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
    for (const [method, path, body] of [
      ['GET', `/v3/admin/domains/${domainId}`, undefined],
      ['PUT', `/v3/admin/domains/${domainId}`, { name: 'Stolen' }],
      ['DELETE', `/v3/admin/domains/${domainId}`, undefined],
      ['POST', `/v3/admin/domains/${domainId}/info`, { type: 'ownership' }],
      ['POST', `/v3/admin/domains/${domainId}/verify`, { type: 'ownership' }],
    ] as const) {
      const response = await request(service.url, method, path, { key: otherKey, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.type).toBe('not_found_error');
    }
  });

  it('nor with its own service account', async () => {
    const { ServiceAccountSigner } = await import('nylas');
    const applicationId = (await service.core.accounts.applications.listApplications()).find(
      (app) => app.name === 'Second',
    )!.id;
    const credentials = await service.core.accounts.applications.createServiceAccount(applicationId);
    const signer = new ServiceAccountSigner({
      privateKeyPem: credentials.private_key,
      privateKeyId: credentials.private_key_id,
    });
    expect((await other.domains.list({ signer })).data).toEqual([]);
    expect(await statusOf(other.domains.find({ domainId, signer }))).toBe(404);
  });

  it('sees none of its grants, by id or by email', async () => {
    expect((await other.grants.list()).data).toEqual([]);
    expect(await statusOf(other.grants.find({ grantId }))).toBe(404);
    expect(await statusOf(other.grants.find({ grantId: email }))).toBe(404);
    expect(await statusOf(other.grants.update({ grantId, requestBody: { settings: { stolen: true } } }))).toBe(404);
    expect(await statusOf(other.grants.destroy({ grantId }))).toBe(404);
    expect(
      (await request(service.url, 'GET', `/v3/grants?email=${encodeURIComponent(email)}`, { key: otherKey })).body.data,
    ).toEqual([]);
  });

  it('sees none of its folders', async () => {
    expect(await statusOf(other.folders.list({ identifier: grantId }))).toBe(404);
    expect(await statusOf(other.folders.list({ identifier: email }))).toBe(404);
    expect(await statusOf(other.folders.find({ identifier: grantId, folderId }))).toBe(404);
    expect(await statusOf(other.folders.create({ identifier: grantId, requestBody: { name: 'Injected' } }))).toBe(404);
    expect(
      await statusOf(other.folders.update({ identifier: grantId, folderId, requestBody: { name: 'Renamed' } })),
    ).toBe(404);
    expect(await statusOf(other.folders.destroy({ identifier: grantId, folderId }))).toBe(404);
  });

  it("cannot create a grant on the first one's domain, nor take the domain over", async () => {
    const response = await request(service.url, 'POST', '/v3/connect/custom', {
      key: otherKey,
      body: { provider: 'nylas', settings: { email: 'intruder@first.agentpost.localhost' } },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain('not a registered domain of this application');
    const same = await request(service.url, 'POST', '/v3/connect/custom', {
      key: otherKey,
      body: { provider: 'nylas', settings: { email } },
    });
    expect(same.status).toBe(400);
    const takeover = await request(service.url, 'POST', '/v3/admin/domains', {
      key: otherKey,
      body: { name: 'Mine', domain_address: 'first.agentpost.localhost' },
    });
    expect(takeover.status).toBe(409);
  });

  it("leaves the first application's objects untouched, and the first cannot see the second's", async () => {
    const domain = await request(service.url, 'GET', `/v3/admin/domains/${domainId}`, { key: service.apiKey });
    expect(domain.body.data.name).toBe('First');
    const grant = (await service.nylas.grants.find({ grantId })).data;
    expect(grant.settings).toEqual({ email });
    const folder = (await service.nylas.folders.find({ identifier: grantId, folderId })).data;
    expect(folder.name).toBe('Private');

    await request(service.url, 'POST', '/v3/admin/domains', {
      key: otherKey,
      body: { name: 'Second', domain_address: 'second.agentpost.localhost' },
    });
    const theirs = (
      await other.auth.customAuthentication({
        requestBody: { provider: 'nylas', settings: { email: 'bot@second.agentpost.localhost' } },
      })
    ).data;
    expect(await statusOf(service.nylas.grants.find({ grantId: theirs.id }))).toBe(404);
    expect((await service.nylas.grants.list()).data.map((item) => item.id)).toEqual([grantId]);
    expect((await other.grants.list()).data.map((item) => item.id)).toEqual([theirs.id]);
  });
});
