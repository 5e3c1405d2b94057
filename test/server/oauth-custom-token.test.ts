/**
 * `POST /v3/connect/custom` with provider `google` and `settings.refresh_token` (Nylas' bring-your-own token, issue 38):
 * the application got the refresh token itself, from the client of its Google connector (here oidc-provider on
 * loopback, standing for Google); the service tries it at the connector's `token_url`, learns the address, and makes
 * an OAuth grant whose tokens it keeps fresh at that `token_url`. A refused token, a missing one and a missing
 * connector are 400s that store nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkError } from '../helpers/sdk.js';
import { refreshTokenFor, startOidcProvider, type OidcServer } from '../helpers/oidc.js';
import { startTestService, type TestService } from '../helpers/service.js';

/** Whether the provider says an access token is active (RFC 7662, as Dovecot asks). */
async function active(oidc: OidcServer, token: string): Promise<boolean> {
  const answer = await fetch(oidc.introspectionUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from('dovecot:dovecot-introspection-secret').toString('base64')}`,
    },
    body: new URLSearchParams({ token }).toString(),
  });
  return ((await answer.json()) as { active: boolean }).active;
}

describe('connect/custom with a Google refresh token (bring-your-own token)', () => {
  let service: TestService;
  let oidc: OidcServer;
  let redirectUri: string;

  const connect = (settings: Record<string, unknown>, provider = 'google') =>
    service.nylas.auth.customAuthentication({ requestBody: { provider: provider as 'google', settings } });
  const grantCount = async () => (await service.nylas.grants.list()).data.length;

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_RATE_LIMIT_APPLICATION: '0' } });
    redirectUri = `${service.url}/v3/connect/callback`;
    oidc = await startOidcProvider({ redirectUris: [redirectUri] });
    const { client_id: clientId, client_secret: clientSecret, ...endpoints } = oidc.connectorSettings;
    await service.nylas.connectors.create({
      requestBody: {
        name: 'Google (loopback)',
        provider: 'google',
        settings: { clientId: clientId!, clientSecret: clientSecret!, ...endpoints },
        scope: ['openid', 'email', 'offline_access', 'https://mail.google.com/'],
      },
    });
  });
  afterAll(async () => {
    await service?.close();
    await oidc?.stop();
  });

  it("makes a google grant of the token's account, whose access token refreshes at the connector's token_url", async () => {
    const refreshToken = await refreshTokenFor(oidc, redirectUri, 'carol@gmail.com');
    const { data: grant } = await connect({ refresh_token: refreshToken });
    expect(grant).toMatchObject({ provider: 'google', email: 'carol@gmail.com', grantStatus: 'valid' });
    expect(grant.scope).toEqual(expect.arrayContaining(['openid', 'email', 'offline_access']));
    expect(JSON.stringify(grant)).not.toContain(refreshToken);

    const tokens = service.core.accounts.grantTokens;
    const first = await tokens.accessToken(grant.id);
    expect(first.email).toBe('carol@gmail.com');
    expect(await active(oidc, first.accessToken)).toBe(true);
    // A refresh now, at the connector's token_url, with the token given (or the one it rotated to).
    const second = await tokens.accessToken(grant.id, { force: true });
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(await active(oidc, second.accessToken)).toBe(true);

    // The same account again re-authenticates the grant: same id.
    const again = await connect({ refresh_token: await refreshTokenFor(oidc, redirectUri, 'carol@gmail.com') });
    expect(again.data.id).toBe(grant.id);
    expect(await grantCount()).toBe(1);
  });

  it('a token the provider refuses, no token, and a provider without a connector are 400s naming the field; nothing is stored', async () => {
    const refused = await sdkError(connect({ refresh_token: 'not-a-refresh-token-of-this-client' }));
    expect(refused.statusCode).toBe(400);
    expect(refused.message).toMatch(
      /settings\.refresh_token: the provider refused it at http:\/\/127\.0\.0\.1:\d+\/token \(invalid_grant\)/,
    );
    const missing = await sdkError(connect({}));
    expect(missing.statusCode).toBe(400);
    expect(missing.message).toMatch(/settings\.refresh_token/);
    const noConnector = await sdkError(connect({ refresh_token: 'whatever' }, 'microsoft'));
    expect(noConnector.statusCode).toBe(400);
    expect(noConnector.message).toMatch(/no microsoft connector/);
    expect(await grantCount()).toBe(1);
  });

  it('a Microsoft 365 grant has mail only: its calendar calls answer a 400 saying Microsoft Graph calendars are not supported', async () => {
    const { client_id: clientId, client_secret: clientSecret, ...endpoints } = oidc.connectorSettings;
    await service.nylas.connectors.create({
      requestBody: {
        name: 'Microsoft (loopback)',
        provider: 'microsoft',
        settings: { clientId: clientId!, clientSecret: clientSecret!, ...endpoints },
        scope: ['openid', 'email', 'offline_access'],
      },
    });
    const { data: grant } = await connect(
      { refresh_token: await refreshTokenFor(oidc, redirectUri, 'dan@contoso.example') },
      'microsoft',
    );
    expect(grant).toMatchObject({ provider: 'microsoft', email: 'dan@contoso.example' });
    const refused = await sdkError(service.nylas.calendars.list({ identifier: grant.id }));
    expect(refused.statusCode).toBe(400);
    expect(refused.message).toMatch(
      /has no calendar server.*Microsoft 365 calendars \(Microsoft Graph\) are not supported/,
    );
    const events = await sdkError(
      service.nylas.events.list({ identifier: grant.id, queryParams: { calendarId: 'primary' } }),
    );
    expect(events.statusCode).toBe(400);
  });
});
