import { CredentialType, type Connector, type Credential } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { isErrorEnvelope, request } from '../helpers/http.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';

const CLIENT_SECRET = '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';
const PRIVATE_KEY = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n';

describe('/v3/connectors and /v3/connectors/{provider}/creds through the nylas SDK', () => {
  let service: TestService;
  let nylas: Nylas;
  let other: Nylas;
  let otherKey: string;
  let credential: Credential;

  beforeAll(async () => {
    service = await startTestService();
    nylas = service.nylas;
    otherKey = (await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' })).apiKey;
    other = service.client(otherKey);
  });
  afterAll(async () => {
    await service?.close();
  });

  /** Every stored and answered text of the service for one application, to look for a secret in. */
  async function everythingAnswered(): Promise<string> {
    const listed = await nylas.connectors.list({});
    const credentials = await nylas.connectors.credentials.list({ provider: 'google' });
    return JSON.stringify([listed, credentials]);
  }

  it('connectors.create: a Google connector with its client, scopes and an endpoint override; the secret is not returned', async () => {
    const created = await nylas.connectors.create({
      requestBody: {
        name: 'Google app',
        provider: 'google',
        settings: { clientId: 'client-1.apps.googleusercontent.com', clientSecret: CLIENT_SECRET, topicName: 't' },
        scope: ['openid', 'https://mail.google.com/'],
      },
    });
    expect(created.data).toMatchObject({
      provider: 'google',
      settings: { clientId: 'client-1.apps.googleusercontent.com', topicName: 't' },
      scope: ['openid', 'https://mail.google.com/'],
    });
    expect(JSON.stringify(created)).not.toContain(CLIENT_SECRET);
    expect((created.data.settings as Record<string, unknown>).clientSecret).toBeUndefined();

    // The secret is sealed at rest.
    const [row] = await service.core.deps.db.orm.select().from(tables.connectors);
    expect(row!.clientSecretSealed).not.toContain(CLIENT_SECRET);
    expect(service.core.deps.secrets.isSealed(row!.clientSecretSealed!)).toBe(true);
  });

  it('connectors.find and connectors.list', async () => {
    const found = await nylas.connectors.find({ provider: 'google' });
    expect(found.data.provider).toBe('google');
    expect(found.data.scope).toEqual(['openid', 'https://mail.google.com/']);
    await nylas.connectors.create({ requestBody: { name: 'IMAP', provider: 'imap' } });
    const listed = await nylas.connectors.list({});
    expect(listed.data.map((connector: Connector) => connector.provider)).toEqual(['google', 'imap']);
    const first = await nylas.connectors.list({ queryParams: { limit: 1 } });
    expect(first.data).toHaveLength(1);
    expect(first.nextCursor).toEqual(expect.any(String));
  });

  it('connectors.update (PUT, as the SDK sends it) and PATCH: settings override endpoints; the secret is kept', async () => {
    const updated = await nylas.connectors.update({
      provider: 'google',
      requestBody: {
        scope: ['openid'],
        settings: { tokenUrl: 'http://127.0.0.1:4000/token', imapHost: '127.0.0.1', imapPort: 1143 },
      },
    });
    expect(updated.data.scope).toEqual(['openid']);
    expect(updated.data.settings).toEqual({
      clientId: 'client-1.apps.googleusercontent.com',
      tokenUrl: 'http://127.0.0.1:4000/token',
      imapHost: '127.0.0.1',
      imapPort: 1143,
    });
    const patched = await request(service.url, 'PATCH', '/v3/connectors/google', {
      key: service.apiKey,
      body: { name: 'Renamed' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.name).toBe('Renamed');
    expect(patched.text).not.toContain(CLIENT_SECRET);

    // What the hosted OAuth flow reads: the effective endpoints and the opened client secret.
    const applicationId = await service.core.accounts.applications.defaultApplicationId();
    const principal = { applicationId, via: 'api_key' as const };
    const client = await service.core.accounts.connectors.client(principal, 'google');
    expect(client).toMatchObject({ clientId: 'client-1.apps.googleusercontent.com', clientSecret: CLIENT_SECRET });
    expect(client.endpoints).toMatchObject({
      authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'http://127.0.0.1:4000/token',
      imap: { host: '127.0.0.1', port: 1143, secure: false },
      smtp: { host: 'smtp.gmail.com', port: 465, secure: true },
    });
  });

  it('credentials.create, find, list and update: the data is sealed and never returned', async () => {
    const created = await nylas.connectors.credentials.create({
      provider: 'google',
      requestBody: {
        name: 'Service account',
        credentialType: CredentialType.SERVICEACCOUNT,
        credentialData: { privateKeyId: 'kid-1', privateKey: PRIVATE_KEY, clientEmail: 'sa@project.iam.example' },
      },
    });
    credential = created.data;
    expect(credential).toMatchObject({
      id: expect.any(String),
      name: 'Service account',
      credentialType: 'serviceaccount',
      hashedData: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(JSON.stringify(created)).not.toContain('PRIVATE KEY');

    const found = await nylas.connectors.credentials.find({ provider: 'google', credentialsId: credential.id });
    expect(found.data).toEqual(credential);
    const listed = await nylas.connectors.credentials.list({ provider: 'google' });
    expect(listed.data).toEqual([credential]);

    const updated = await nylas.connectors.credentials.update({
      provider: 'google',
      credentialsId: credential.id,
      requestBody: {
        name: 'Service account 2',
        credentialData: { privateKeyId: 'kid-2', privateKey: PRIVATE_KEY, clientEmail: 'sa@project.iam.example' },
      },
    });
    expect(updated.data.name).toBe('Service account 2');
    expect(updated.data.hashedData).not.toBe(credential.hashedData);
    credential = updated.data;

    const [row] = await service.core.deps.db.orm.select().from(tables.connectorCredentials);
    expect(row!.dataSealed).not.toContain('PRIVATE KEY');
    const applicationId = await service.core.accounts.applications.defaultApplicationId();
    const opened = await service.core.accounts.connectorCredentials.open(
      { applicationId, via: 'api_key' },
      'google',
      credential.id,
    );
    expect(opened.data).toMatchObject({ private_key_id: 'kid-2', private_key: PRIVATE_KEY });

    // The connector takes it as its active credential.
    const active = await nylas.connectors.update({
      provider: 'google',
      requestBody: { activeCredentialId: credential.id },
    });
    expect(active.data.activeCredentialId).toBe(credential.id);
    expect(await everythingAnswered()).not.toContain('PRIVATE KEY');
    expect(await everythingAnswered()).not.toContain(CLIENT_SECRET);
  });

  it("another application's connectors and credentials are 404, and its lists are empty", async () => {
    expect((await other.connectors.list({})).data).toEqual([]);
    // Each call is made only when its turn comes, so no refusal goes unawaited.
    for (const call of [
      () => other.connectors.find({ provider: 'google' }),
      () => other.connectors.update({ provider: 'google', requestBody: { name: 'Stolen' } }),
      () => other.connectors.destroy({ provider: 'google' }),
      () => other.connectors.credentials.list({ provider: 'google' }),
      () => other.connectors.credentials.find({ provider: 'google', credentialsId: credential.id }),
      () =>
        other.connectors.credentials.update({
          provider: 'google',
          credentialsId: credential.id,
          requestBody: { name: 'Stolen' },
        }),
      () => other.connectors.credentials.destroy({ provider: 'google', credentialsId: credential.id }),
    ]) {
      const error = await sdkError(call());
      expect(error.statusCode).toBe(404);
      expect(error.type).toBe('not_found_error');
    }
    // Its own connector of the same provider is its own.
    await other.connectors.create({
      requestBody: { name: 'Theirs', provider: 'google', settings: { clientId: 'theirs', clientSecret: 's' } },
    });
    expect((await nylas.connectors.find({ provider: 'google' })).data.settings).toMatchObject({
      clientId: 'client-1.apps.googleusercontent.com',
    });
  });

  it('refuses bad input with a 400 in the Nylas error shape', async () => {
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', '/v3/connectors', { provider: 'yahoo', name: 'x' }, /provider: "yahoo" is not a provider; use one of/],
      ['POST', '/v3/connectors', { provider: 'microsoft', name: 'x', settings: { client_id: 'a' } }, /client_secret/],
      ['POST', '/v3/connectors', { provider: 'microsoft', settings: { tokenurl: 'x' } }, /tokenurl/],
      [
        'POST',
        '/v3/connectors',
        { provider: 'microsoft', settings: { client_id: 'a', client_secret: 'b', token_url: 'ftp://x' } },
        /token_url/,
      ],
      ['GET', '/v3/connectors/yahoo', undefined, /provider: "yahoo" is not a provider/],
      [
        'POST',
        '/v3/connectors/google/creds',
        { name: 'x', credential_type: 'serviceaccount', credential_data: { private_key: 'k' } },
        /credential_data\.private_key_id/,
      ],
      [
        'POST',
        '/v3/connectors/google/creds',
        { name: 'x', credential_type: 'adminconsent', credential_data: { client_id: 'a', client_secret: 'b' } },
        /adminconsent credentials belong to the microsoft connector/,
      ],
      [
        'POST',
        '/v3/connectors/google/creds',
        { name: 'x', credential_type: 'oauth', credential_data: { a: 'b' } },
        /credential_type: "oauth" is not a credential type/,
      ],
      [
        'POST',
        '/v3/connectors/google/creds',
        { name: 'x', credential_type: 'connector', credential_data: { nested: { a: 1 } } },
        /no nested objects/,
      ],
      ['PUT', '/v3/connectors/google', { active_credential_id: 'nope' }, /active_credential_id/],
    ];
    for (const [method, path, body, message] of cases) {
      const response = await request(service.url, method, path, { key: service.apiKey, body });
      expect(response.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(isErrorEnvelope(response.body)).toBe(true);
      expect(response.body.error.type).toBe('invalid_request_error');
      expect(response.body.error.message).toMatch(message);
    }
    // Through the SDK too.
    const error = await sdkError(nylas.connectors.find({ provider: 'yahoo' as 'google' }));
    expect(error.statusCode).toBe(400);
    // A second connector of a provider, and a credential name used twice, are conflicts.
    const twice = await sdkError(
      nylas.connectors.create({
        requestBody: { name: 'Again', provider: 'google', settings: { clientId: 'a', clientSecret: 'b' } },
      }),
    );
    expect(twice.statusCode).toBe(409);
    const sameName = await sdkError(
      nylas.connectors.credentials.create({
        provider: 'google',
        requestBody: {
          name: 'Service account 2',
          credentialType: CredentialType.CONNECTOR,
          credentialData: { clientId: 'override' },
        },
      }),
    );
    expect(sameName.statusCode).toBe(409);
  });

  it('credentials.destroy and connectors.destroy (which removes its credentials)', async () => {
    const destroyed = await nylas.connectors.credentials.destroy({ provider: 'google', credentialsId: credential.id });
    expect(destroyed.requestId).toEqual(expect.any(String));
    expect((await nylas.connectors.find({ provider: 'google' })).data.activeCredentialId).toBeUndefined();
    const missing = await sdkError(
      nylas.connectors.credentials.find({ provider: 'google', credentialsId: credential.id }),
    );
    expect(missing.statusCode).toBe(404);

    await nylas.connectors.credentials.create({
      provider: 'google',
      requestBody: { name: 'Kept?', credentialType: CredentialType.CONNECTOR, credentialData: { clientId: 'o' } },
    });
    const gone = await nylas.connectors.destroy({ provider: 'google' });
    expect(gone.requestId).toEqual(expect.any(String));
    expect((await sdkError(nylas.connectors.find({ provider: 'google' }))).statusCode).toBe(404);
    expect((await sdkError(nylas.connectors.credentials.list({ provider: 'google' }))).statusCode).toBe(404);
    const applicationId = await service.core.accounts.applications.defaultApplicationId();
    const rows = await service.core.deps.db.orm.select().from(tables.connectorCredentials);
    expect(rows.filter((row) => row.applicationId === applicationId)).toEqual([]);
    // The other application's connector is untouched.
    expect((await other.connectors.find({ provider: 'google' })).data).toMatchObject({ name: 'Theirs' });
  });
});
