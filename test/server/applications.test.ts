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

  it('update (PATCH /v3/applications) replaces each part given, keeps the others, and answers the details', async () => {
    const { apiKey } = await service.core.accounts.applications.createApplication({
      name: 'Branded',
      plan: 'production',
    });
    const nylas = service.client(apiKey);
    const kept = (await nylas.applications.redirectUris.create({ requestBody: { url: 'https://keep.example/cb' } }))
      .data;
    const dropped = (await nylas.applications.redirectUris.create({ requestBody: { url: 'https://drop.example/cb' } }))
      .data;

    const updated = await nylas.applications.update({
      requestBody: {
        branding: { name: 'Branded App', iconUrl: 'https://cdn.example/icon.png', description: 'Our app' },
        hostedAuthentication: { title: 'Sign in', colorPrimary: '#1a73e8', spacing: 8 },
        idpSettings: { origins: 'https://app.example' },
        domain: 'Auth.Example.com',
        additionalSettings: { rotateRefreshToken: true, loginUrl: 'https://app.example/login' },
        callbackUris: [
          { id: kept.id, url: 'https://keep.example/callback' },
          { url: 'myapp://oauth', platform: 'ios', settings: { bundleId: 'com.example.app' } },
        ],
      },
    });
    expect(updated.requestId).toEqual(expect.any(String));
    expect(updated.data).toMatchObject({
      environment: 'production',
      domain: 'auth.example.com',
      branding: { name: 'Branded App', iconUrl: 'https://cdn.example/icon.png', description: 'Our app' },
      hostedAuthentication: { title: 'Sign in', colorPrimary: '#1a73e8', spacing: 8 },
      idpSettings: { origins: 'https://app.example' },
    });
    // The redirect URIs given are the whole list: the kept one changed in place, a new one, the other gone.
    expect(updated.data.callbackUris).toEqual([
      { id: kept.id, url: 'https://keep.example/callback', platform: 'web' },
      { id: expect.any(String), url: 'myapp://oauth', platform: 'ios', settings: { bundleId: 'com.example.app' } },
    ]);
    expect((await sdkError(nylas.applications.redirectUris.find({ redirectUriId: dropped.id }))).statusCode).toBe(404);
    // additional_settings are write-only, as in Nylas.
    const wire = await request(service.url, 'GET', '/v3/applications', { key: apiKey });
    expect(wire.body.data).not.toHaveProperty('additional_settings');
    expect((await nylas.applications.getDetails()).data).toEqual(updated.data);

    // A later update replaces only what it gives, each part whole; "" clears the domain.
    const again = await nylas.applications.update({
      requestBody: { hostedAuthentication: { subtitle: 'Welcome' }, domain: '' },
    });
    expect(again.data.hostedAuthentication).toEqual({ subtitle: 'Welcome' });
    expect(again.data.domain).toBeUndefined();
    expect(again.data.branding).toEqual(updated.data.branding);
    expect(again.data.callbackUris).toEqual(updated.data.callbackUris);
    // Other applications are untouched.
    expect((await service.nylas.applications.getDetails()).data.branding).toEqual({ name: 'Default application' });
  });

  it('update refuses bad input with a 400 naming the field, and changes nothing', async () => {
    const before = (await service.nylas.applications.getDetails()).data;
    const cases: [string, Record<string, unknown>][] = [
      ['branding.icon_url', { branding: { icon_url: 'javascript:alert(1)' } }],
      ['branding.name', { branding: { name: '' } }],
      ['hosted_authentication.color_primary', { hosted_authentication: { color_primary: 'blue' } }],
      ['hosted_authentication', { hosted_authentication: { colour: '#fff' } }],
      ['callback_uris.0.url', { callback_uris: [{ url: '/relative' }] }],
      ['callback_uris.0.id', { callback_uris: [{ id: 'no-such-uri', url: 'https://a.example/cb' }] }],
      ['domain', { domain: 'not a domain' }],
      ['additional_settings.rotate_refresh_token', { additional_settings: { rotate_refresh_token: 'yes' } }],
    ];
    for (const [field, body] of cases) {
      const response = await request(service.url, 'PATCH', '/v3/applications', { key: service.apiKey, body });
      expect(response.status, field).toBe(400);
      expect(response.body.error, field).toMatchObject({ type: 'invalid_request_error' });
      expect(response.body.error.message, field).toContain(field);
    }
    expect((await service.nylas.applications.getDetails()).data).toEqual(before);
    expect((await request(service.url, 'PATCH', '/v3/applications', { body: {} })).status).toBe(401);
  });

  it('needs an API key', async () => {
    const response = await request(service.url, 'GET', '/v3/applications', {});
    expect(response.status).toBe(401);
  });
});
