import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';

describe('/v3/applications through the nylas SDK', () => {
  let service: TestService;
  let other: Nylas;
  let applicationId: string;

  beforeAll(async () => {
    service = await startTestService();
    applicationId = await service.core.accounts.applications.defaultApplicationId();
    other = service.client(
      (await service.core.accounts.applications.createApplication({ name: 'Second', plan: 'trial' })).apiKey,
    );
  });
  afterAll(async () => {
    await service?.close();
  });

  it('getDetails returns the calling application', async () => {
    const details = await service.nylas.applications.getDetails();
    expect(details.requestId).toEqual(expect.any(String));
    expect(details.data).toMatchObject({
      applicationId,
      organizationId: applicationId,
      region: 'us',
      environment: 'production',
      branding: { name: 'Default application' },
      callbackUris: [],
      createdAt: expect.any(Number),
    });
    const second = await other.applications.getDetails();
    expect(second.data).toMatchObject({ environment: 'sandbox', branding: { name: 'Second' } });
    expect(second.data.applicationId).not.toBe(applicationId);
  });

  it('creates, lists, finds, updates and destroys redirect URIs', async () => {
    const web = await service.nylas.applications.redirectUris.create({
      requestBody: { url: 'https://example.com/callback' },
    });
    expect(web.data).toEqual({ id: expect.any(String), url: 'https://example.com/callback', platform: 'web' });
    const ios = await service.nylas.applications.redirectUris.create({
      requestBody: { url: 'myapp://oauth', platform: 'ios', settings: { bundleId: 'com.example.app', teamId: 'T1' } },
    });
    expect(ios.data).toMatchObject({ platform: 'ios', settings: { bundleId: 'com.example.app', teamId: 'T1' } });

    const listed = await service.nylas.applications.redirectUris.list();
    expect(listed.data.map((uri) => uri.id)).toEqual([web.data.id, ios.data.id]);
    const details = await service.nylas.applications.getDetails();
    expect(details.data.callbackUris?.map((uri) => uri.id)).toEqual([web.data.id, ios.data.id]);

    const found = await service.nylas.applications.redirectUris.find({ redirectUriId: ios.data.id });
    expect(found.data).toEqual(ios.data);

    const updated = await service.nylas.applications.redirectUris.update({
      redirectUriId: web.data.id,
      requestBody: { url: 'http://localhost:3000/cb', platform: 'js', settings: { origin: 'http://localhost:3000' } },
    });
    expect(updated.data).toEqual({
      id: web.data.id,
      url: 'http://localhost:3000/cb',
      platform: 'js',
      settings: { origin: 'http://localhost:3000' },
    });

    const destroyed = await service.nylas.applications.redirectUris.destroy({ redirectUriId: web.data.id });
    expect(destroyed.requestId).toEqual(expect.any(String));
    const gone = await sdkError(service.nylas.applications.redirectUris.find({ redirectUriId: web.data.id }));
    expect(gone.statusCode).toBe(404);
    expect(gone.type).toBe('not_found_error');
  });

  it("another application's redirect URI is a 404 for every call, and never listed", async () => {
    const mine = (
      await service.nylas.applications.redirectUris.create({ requestBody: { url: 'https://mine.example.com/cb' } })
    ).data;
    const id = mine.id;
    expect((await sdkError(other.applications.redirectUris.find({ redirectUriId: id }))).statusCode).toBe(404);
    expect(
      (
        await sdkError(
          other.applications.redirectUris.update({
            redirectUriId: id,
            requestBody: { url: 'https://evil.example/cb' },
          }),
        )
      ).statusCode,
    ).toBe(404);
    expect((await sdkError(other.applications.redirectUris.destroy({ redirectUriId: id }))).statusCode).toBe(404);
    expect((await other.applications.redirectUris.list()).data).toEqual([]);
    expect((await other.applications.getDetails()).data.callbackUris).toEqual([]);
    expect((await service.nylas.applications.redirectUris.find({ redirectUriId: id })).data.url).toBe(
      'https://mine.example.com/cb',
    );
  });

  it('refuses bad input with a 400 in the Nylas shape naming the field', async () => {
    const noUrl = await sdkError(
      service.nylas.applications.redirectUris.create({ requestBody: {} as { url: string } }),
    );
    expect(noUrl.statusCode).toBe(400);
    expect(noUrl.type).toBe('invalid_request_error');
    expect(noUrl.message).toContain('url');
    const relative = await sdkError(
      service.nylas.applications.redirectUris.create({ requestBody: { url: '/callback' } }),
    );
    expect(relative.statusCode).toBe(400);
    expect(relative.message).toContain('url');
    const platform = await sdkError(
      service.nylas.applications.redirectUris.create({
        requestBody: { url: 'https://a.example/cb', platform: 'tv' as 'web' },
      }),
    );
    expect(platform.statusCode).toBe(400);
    expect(platform.message).toContain('platform');
    const settings = await request(service.url, 'POST', '/v3/applications/redirect-uris', {
      key: service.apiKey,
      body: { url: 'https://a.example/cb', settings: { colour: 'red' } },
    });
    expect(settings.status).toBe(400);
    expect(settings.body).toMatchObject({
      request_id: expect.any(String),
      error: { type: 'invalid_request_error', message: expect.stringContaining('settings') },
    });
  });

  it('needs an API key', async () => {
    const response = await request(service.url, 'GET', '/v3/applications', {});
    expect(response.status).toBe(401);
  });
});
