/**
 * Hosted OAuth (issue 38 items 1 and 3) against a real authorization server: `oidc-provider` on loopback stands for
 * Google (the connector's authorization, token, revocation and userinfo URLs point at it). A browser-free walk follows
 * the redirects and posts its login and consent forms; then the nylas SDK's `auth` methods exchange, refresh, inspect
 * and revoke the tokens; then the grant's provider tokens are refreshed, revoked at the provider, and the grant
 * re-authenticated.
 */
import { NylasOAuthError } from 'nylas';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { startOidcProvider, walkSignIn, type OidcServer } from '../helpers/oidc.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';

/** The application's registered redirect URI (never visited: the walk stops there). */
const APP_REDIRECT = 'http://127.0.0.1:9/app/callback';

/**
 * The status of a refused SDK call. The SDK reads every answer of a path containing `connect/token` as an OAuth
 * error (`NylasOAuthError`), `connect/tokeninfo` included.
 */
async function statusOf(call: Promise<unknown>): Promise<number | undefined> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown as { statusCode?: number },
  );
  return error?.statusCode;
}

function paramsOf(url: URL): Record<string, string> {
  return Object.fromEntries(url.searchParams);
}

describe('hosted OAuth through the nylas SDK against oidc-provider standing for Google', () => {
  let service: TestService;
  let nylas: Nylas;
  let oidc: OidcServer;
  let applicationId: string;

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    nylas = service.nylas;
    oidc = await startOidcProvider({ redirectUris: [`${service.url}/v3/connect/callback`] });
    const { client_id: clientId, client_secret: clientSecret, ...endpoints } = oidc.connectorSettings;
    await nylas.connectors.create({
      requestBody: {
        name: 'Google (loopback)',
        provider: 'google',
        settings: { clientId: clientId!, clientSecret: clientSecret!, ...endpoints },
        scope: ['openid', 'email', 'profile', 'offline_access', 'https://mail.google.com/'],
      },
    });
    await nylas.applications.redirectUris.create({ requestBody: { url: APP_REDIRECT, platform: 'web' } });
    applicationId = (await nylas.applications.getDetails()).data.applicationId;
  });
  afterAll(async () => {
    await service?.close();
    await oidc?.stop();
  });

  let grantId: string;
  let refreshToken: string;
  let accessToken: string;
  let idToken: string;

  it('urlForOAuth2 → the provider signs in and consents → the application gets a code; exchangeCodeForToken gives the grant', async () => {
    const url = nylas.auth.urlForOAuth2({
      clientId: applicationId,
      redirectUri: APP_REDIRECT,
      provider: 'google',
      accessType: 'offline',
      state: 'app-state-1',
      loginHint: 'alice@gmail.com',
    });
    const walk = await walkSignIn(url, { login: 'alice@gmail.com', stopAt: APP_REDIRECT });
    const atProvider = walk.visited.find((visited) => visited.toString().startsWith(`${oidc.issuer}/auth?`))!;
    expect(paramsOf(atProvider)).toMatchObject({
      client_id: oidc.clientId,
      redirect_uri: `${service.url}/v3/connect/callback`,
      response_type: 'code',
      code_challenge_method: 'S256',
      login_hint: 'alice@gmail.com',
      access_type: 'offline',
      prompt: 'consent',
    });
    const answer = paramsOf(walk.final);
    expect(answer.state).toBe('app-state-1');
    expect(answer.code).toEqual(expect.any(String));

    const exchanged = await nylas.auth.exchangeCodeForToken({
      clientId: applicationId,
      redirectUri: APP_REDIRECT,
      code: answer.code!,
    });
    expect(exchanged).toMatchObject({
      email: 'alice@gmail.com',
      provider: 'google',
      tokenType: 'Bearer',
      expiresIn: 3600,
      grantId: expect.any(String),
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      idToken: expect.any(String),
    });
    expect(exchanged.scope.split(' ')).toEqual(expect.arrayContaining(['openid', 'email']));
    ({ grantId, accessToken } = exchanged);
    refreshToken = exchanged.refreshToken!;
    idToken = exchanged.idToken!;

    const grant = await nylas.grants.find({ grantId });
    expect(grant.data).toMatchObject({ provider: 'google', email: 'alice@gmail.com', grantStatus: 'valid' });
    expect(grant.data.scope).toEqual(expect.arrayContaining(['openid', 'email']));

    // A code works once.
    const again = await nylas.auth
      .exchangeCodeForToken({ clientId: applicationId, redirectUri: APP_REDIRECT, code: answer.code! })
      .catch((error: unknown) => error);
    expect(again).toBeInstanceOf(NylasOAuthError);
    expect((again as NylasOAuthError).statusCode).toBe(400);
    expect((again as NylasOAuthError).error).toBe('invalid_grant');
  });

  it("the provider's tokens are sealed at rest, and so are never in the database in clear", async () => {
    const [row] = await service.core.deps.db.orm
      .select()
      .from(tables.oauthGrantTokens)
      .where(eq(tables.oauthGrantTokens.grantId, grantId));
    expect(row).toMatchObject({ provider: 'google', subject: 'alice@gmail.com' });
    expect(service.core.deps.secrets.isSealed(row!.refreshTokenSealed!)).toBe(true);
    expect(service.core.deps.secrets.isSealed(row!.accessTokenSealed)).toBe(true);
    const issued = await service.core.deps.db.orm.select().from(tables.oauthIssuedTokens);
    expect(JSON.stringify(issued)).not.toContain(accessToken);
    expect(JSON.stringify(issued)).not.toContain(refreshToken);
  });

  it('refreshAccessToken, accessTokenInfo and idTokenInfo', async () => {
    const refreshed = await nylas.auth.refreshAccessToken({
      clientId: applicationId,
      redirectUri: APP_REDIRECT,
      refreshToken,
    });
    expect(refreshed).toMatchObject({ grantId, email: 'alice@gmail.com', refreshToken, expiresIn: 3600 });
    expect(refreshed.accessToken).not.toBe(accessToken);

    const info = await nylas.auth.accessTokenInfo(refreshed.accessToken);
    expect(info.data).toMatchObject({ aud: applicationId, email: 'alice@gmail.com', sub: 'alice@gmail.com' });
    expect(info.data.exp - info.data.iat).toBe(3600);

    const idInfo = await nylas.auth.idTokenInfo(idToken);
    expect(idInfo.data).toMatchObject({ iss: oidc.issuer, aud: oidc.clientId, sub: 'alice@gmail.com' });

    expect(await statusOf(nylas.auth.accessTokenInfo('agpat_not-a-token'))).toBe(404);
  });

  it('revoke: the token stops working; an unknown token is no error (RFC 7009)', async () => {
    expect(await nylas.auth.revoke(accessToken)).toBe(true);
    expect(await statusOf(nylas.auth.accessTokenInfo(accessToken))).toBe(404);
    expect(await nylas.auth.revoke('agpat_never-issued')).toBe(true);
    await nylas.auth.revoke(refreshToken);
    const refused = await nylas.auth
      .refreshAccessToken({ clientId: applicationId, redirectUri: APP_REDIRECT, refreshToken })
      .catch((error: unknown) => error as NylasOAuthError);
    expect(refused).toMatchObject({ statusCode: 400, error: 'invalid_grant' });
  });

  it('urlForOAuth2PKCE: the code exchanges with its verifier and no secret; a wrong verifier is refused; the same account re-authenticates its grant', async () => {
    const pkce = nylas.auth.urlForOAuth2PKCE({
      clientId: applicationId,
      redirectUri: APP_REDIRECT,
      provider: 'google',
      state: 's2',
    });
    const walk = await walkSignIn(pkce.url, { login: 'alice@gmail.com', stopAt: APP_REDIRECT });
    const { code } = paramsOf(walk.final);
    const post = (body: Record<string, string>) =>
      fetch(`${service.url}/v3/connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: applicationId, grant_type: 'authorization_code', ...body }),
      });
    const wrong = await post({ code: code!, redirect_uri: APP_REDIRECT, code_verifier: 'not-the-secret' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant' });
    const right = await post({ code: code!, redirect_uri: APP_REDIRECT, code_verifier: pkce.secret });
    expect(right.status).toBe(200);
    const body = (await right.json()) as Record<string, unknown>;
    // Same address, same grant; online access: no refresh token.
    expect(body).toMatchObject({ grant_id: grantId, email: 'alice@gmail.com', token_type: 'Bearer' });
    expect(body.refresh_token).toBeUndefined();

    // Without a PKCE challenge, a code needs the API key.
    const plain = await walkSignIn(
      nylas.auth.urlForOAuth2({ clientId: applicationId, redirectUri: APP_REDIRECT, provider: 'google' }),
      { login: 'alice@gmail.com', stopAt: APP_REDIRECT },
    );
    const anonymous = await post({ code: paramsOf(plain.final).code!, redirect_uri: APP_REDIRECT });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: 'invalid_client' });
    const wrongKey = await post({ code: paramsOf(plain.final).code!, client_secret: 'agp_wrong' });
    expect(wrongKey.status).toBe(401);
  });

  it('client_credentials: an access token for a grant of the application, with the API key', async () => {
    const answer = await fetch(`${service.url}/v3/connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${service.apiKey}` },
      body: new URLSearchParams({ client_id: applicationId, grant_type: 'client_credentials', grant_id: grantId }),
    });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ grant_id: grantId, provider: 'google', expires_in: 3600 });
  });

  it('errors: an unregistered redirect URI is a 400 here; later problems go back to the redirect URI as OAuth errors', async () => {
    const unregistered = await fetch(
      nylas.auth.urlForOAuth2({ clientId: applicationId, redirectUri: 'https://evil.example/cb', provider: 'google' }),
      { redirect: 'manual' },
    );
    expect(unregistered.status).toBe(400);
    expect(unregistered.headers.get('location')).toBeNull();

    const noConnector = await fetch(
      nylas.auth.urlForOAuth2({
        clientId: applicationId,
        redirectUri: APP_REDIRECT,
        provider: 'microsoft',
        state: 'z',
      }),
      { redirect: 'manual' },
    );
    expect(noConnector.status).toBe(302);
    expect(paramsOf(new URL(noConnector.headers.get('location')!))).toMatchObject({
      error: 'invalid_request',
      state: 'z',
    });

    // The user refuses at the provider: the provider's error goes back to the application with its state.
    const started = await fetch(
      nylas.auth.urlForOAuth2({ clientId: applicationId, redirectUri: APP_REDIRECT, provider: 'google', state: 'q' }),
      { redirect: 'manual' },
    );
    const sealed = new URL(started.headers.get('location')!).searchParams.get('state')!;
    const cookie = started.headers.getSetCookie()[0]!.split(';')[0]!;
    const callback = `${service.url}/v3/connect/callback?state=${encodeURIComponent(sealed)}&error=access_denied`;
    const denied = await fetch(callback, { redirect: 'manual', headers: { cookie } });
    expect(denied.status).toBe(302);
    expect(paramsOf(new URL(denied.headers.get('location')!))).toMatchObject({ error: 'access_denied', state: 'q' });
    // The same callback from another browser (no cookie) is refused here, never redirected.
    const foreign = await fetch(callback, { redirect: 'manual' });
    expect(foreign.status).toBe(400);
  });

  it('detectProvider and urlForAdminConsent', async () => {
    expect((await nylas.auth.detectProvider({ email: 'bob@gmail.com' })).data).toEqual({
      emailAddress: 'bob@gmail.com',
      detected: true,
      provider: 'google',
      type: 'gmail',
    });
    service.dns.mx.set('corp.example', [{ exchange: 'corp-example.mail.protection.outlook.com', priority: 0 }]);
    expect((await nylas.auth.detectProvider({ email: 'eve@corp.example' })).data).toMatchObject({
      detected: true,
      provider: 'microsoft',
      type: 'microsoft_365',
    });
    expect((await nylas.auth.detectProvider({ email: 'x@icloud.com' })).data.detected).toBe(false);
    expect((await nylas.auth.detectProvider({ email: 'x@icloud.com', allProviderTypes: true })).data.provider).toBe(
      'icloud',
    );

    await nylas.connectors.create({
      requestBody: {
        name: 'Microsoft',
        provider: 'microsoft',
        settings: { clientId: 'ms-app', clientSecret: 'ms-secret' },
      },
    });
    const consent = await fetch(
      nylas.auth.urlForAdminConsent({ clientId: applicationId, redirectUri: APP_REDIRECT, credentialId: 'cred-1' }),
      { redirect: 'manual' },
    );
    expect(consent.status).toBe(302);
    const location = new URL(consent.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe('https://login.microsoftonline.com/common/v2.0/adminconsent');
    expect(location.searchParams.get('client_id')).toBe('ms-app');
  });

  it("the grant's provider tokens: refreshed on demand; a revoked refresh token turns the grant invalid with grant.expired; signing in again restores it", async () => {
    const tokens = service.core.accounts.grantTokens;
    const current = await tokens.accessToken(grantId);
    expect(current.email).toBe('alice@gmail.com');
    const forced = await tokens.accessToken(grantId, { force: true });
    expect(forced.accessToken).not.toBe(current.accessToken);

    expect(await tokens.revokeAtProvider(grantId)).toBe(true);
    await expect(tokens.accessToken(grantId, { force: true })).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await nylas.grants.find({ grantId })).data.grantStatus).toBe('invalid');
    const events = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(eq(tables.outboxEvents.type, 'grant.expired'));
    expect(events.map((event) => event.objectId)).toEqual([grantId]);

    const walk = await walkSignIn(
      nylas.auth.urlForOAuth2({
        clientId: applicationId,
        redirectUri: APP_REDIRECT,
        accessType: 'offline',
        provider: 'google',
      }),
      { login: 'alice@gmail.com', stopAt: APP_REDIRECT },
    );
    expect(paramsOf(walk.final).code).toEqual(expect.any(String));
    expect((await nylas.grants.find({ grantId })).data.grantStatus).toBe('valid');
    const restored = await tokens.accessToken(grantId, { force: true });
    expect(restored.accessToken).toEqual(expect.any(String));
  });

  it("deleting the grant revokes its refresh token at the provider (the provider's introspection says it is no longer active)", async () => {
    const [row] = await service.core.deps.db.orm
      .select()
      .from(tables.oauthGrantTokens)
      .where(eq(tables.oauthGrantTokens.grantId, grantId));
    const providerRefresh = service.core.deps.secrets.open(row!.refreshTokenSealed!);
    const introspect = async () => {
      const answer = await fetch(oidc.introspectionUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          token: providerRefresh,
          client_id: oidc.clientId,
          client_secret: oidc.clientSecret,
        }),
      });
      return ((await answer.json()) as { active: boolean }).active;
    };
    expect(await introspect()).toBe(true);
    await nylas.grants.destroy({ grantId });
    expect(await introspect()).toBe(false);
    expect(await service.core.deps.db.orm.select().from(tables.oauthGrantTokens)).toEqual([]);
  });
});
