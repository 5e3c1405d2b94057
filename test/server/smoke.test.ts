import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NylasApiError } from 'nylas';
import { startTestService, type TestService } from '../helpers/service.js';

describe('service smoke test through the nylas SDK', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service.close();
  });

  it('creates an Agent Account on a trial domain and lists its folders', async () => {
    const created = await service.nylas.auth
      .customAuthentication({
        requestBody: { provider: 'nylas' as never, settings: { email: 'smoke@demo.agentpost.localhost' } },
      })
      .catch((error: unknown) => error);
    // The trial domain has not been registered yet: a 400 that says why.
    expect(created).toBeInstanceOf(NylasApiError);
    expect((created as NylasApiError).statusCode).toBe(400);
    expect((created as NylasApiError).message).toContain('not a registered domain');

    const response = await fetch(`${service.url}/v3/admin/domains`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Demo', domain_address: 'demo.agentpost.localhost' }),
    });
    expect(response.status).toBe(200);

    const grant = await service.nylas.auth.customAuthentication({
      requestBody: { provider: 'nylas' as never, settings: { email: 'smoke@demo.agentpost.localhost' } },
    });
    expect(grant.data.email).toBe('smoke@demo.agentpost.localhost');
    const folders = await service.nylas.folders.list({ identifier: grant.data.id });
    expect(folders.data.map((folder) => folder.name)).toEqual(['inbox', 'sent', 'drafts', 'trash', 'junk', 'archive']);
  });
});
