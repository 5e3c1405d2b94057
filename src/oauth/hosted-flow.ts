/**
 * @module oauth/hosted-flow
 * The browser's two steps of hosted OAuth (Nylas v3 `GET /v3/connect/auth`, then the provider's redirect to
 * `/v3/connect/callback`). The flow keeps no row while the user is at the provider: what the callback needs (the
 * application, its redirect URI and state, the PKCE challenge, this service's own PKCE verifier towards the provider)
 * travels sealed by the secret box in the provider's `state` parameter, and a cookie binds it to the browser that
 * started it (a callback from another browser is refused: login CSRF).
 */
import { createHash } from 'node:crypto';
import type { Principal } from '../access.js';
import type { ConnectorClient } from '../connectors/index.js';
import type { ConnectInput } from '../grants/index.js';
import type { Grant } from '../schemas/grants.js';
import { AppError } from '../errors.js';
import type { AuthorizeQuery } from '../schemas/oauth.js';
import type { ConnectorProvider } from '../schemas/connectors.js';
import type { AppGrant } from './app-tokens.js';
import type { BrowserStep } from './contracts.js';
import { detectByDomain } from './detect.js';
import { identityOfIdToken, type ProviderIdentity, type ProviderTokens } from './provider-client.js';
import { saveGrantTokens } from './oauth-store.js';
import type { OAuthState } from './oauth-state.js';
import { equalText, errorStep, FLOW_TTL_MS, issueCode, openFlow, withParams, type FlowState } from './flow-state.js';
import { imapFormStep } from './imap-form.js';

/** This service's callback path, registered at the provider as the OAuth client's redirect URI. */
export const CALLBACK_PATH = '/v3/connect/callback';

/** Providers whose accounts authorize at the provider. */
const OAUTH_PROVIDERS: ReadonlySet<string> = new Set(['google', 'microsoft']);

/** Providers whose accounts sign in on this service's own form (./imap-form.ts): a password, checked at the servers. */
const FORM_PROVIDERS: ReadonlySet<string> = new Set(['imap', 'icloud', 'yahoo']);

/**
 * Whether a PKCE verifier answers a challenge (RFC 7636 §4.6). `s256` accepts both the standard form (base64url of
 * the SHA-256) and the nylas SDK's (base64 of the SHA-256's hex, `=` stripped).
 */
export function pkceMatches(challenge: string, method: string | null | undefined, verifier: string): boolean {
  if (method === undefined || method === null || method === 'plain') return equalText(challenge, verifier);
  const digest = createHash('sha256').update(verifier).digest();
  const standard = digest.toString('base64url');
  const sdk = Buffer.from(digest.toString('hex')).toString('base64').replace(/=+$/, '');
  return equalText(challenge, standard) || equalText(challenge, sdk);
}

/** The provider's consent page URL for this flow. */
function providerUrl(
  client: ConnectorClient,
  query: AuthorizeQuery,
  flow: FlowState,
  sealed: string,
  challenge: string,
): string {
  const authorizationUrl = client.endpoints.authorizationUrl!;
  if (flow.ac) {
    // Microsoft's admin consent endpoint sits beside its authorize endpoint (…/{tenant}/v2.0/adminconsent).
    const url = authorizationUrl.replace(/\/oauth2\/v2\.0\/authorize$/, '/v2.0/adminconsent');
    return withParams(url, {
      client_id: client.clientId,
      redirect_uri: flow.cb,
      scope: 'https://graph.microsoft.com/.default',
      state: sealed,
    });
  }
  const scopes = query.scope ? query.scope.split(/[\s,]+/).filter(Boolean) : [...client.scope];
  if (flow.o && client.provider === 'microsoft' && !scopes.includes('offline_access')) scopes.push('offline_access');
  const prompts = (query.prompt ?? '')
    .split(',')
    .filter((prompt) => prompt !== '' && prompt !== 'select_provider' && prompt !== 'detect');
  // A refresh token needs the consent page shown again (Google only gives one on consent; so does oidc-provider).
  if (flow.o && !prompts.includes('consent')) prompts.push('consent');
  return withParams(authorizationUrl, {
    client_id: client.clientId,
    redirect_uri: flow.cb,
    response_type: 'code',
    scope: scopes.join(' '),
    state: sealed,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    login_hint: query.login_hint,
    prompt: prompts.length > 0 ? prompts.join(' ') : undefined,
    ...(client.provider === 'google'
      ? {
          access_type: flow.o ? 'offline' : 'online',
          include_granted_scopes: query.include_grant_scopes === 'true' ? 'true' : undefined,
        }
      : {}),
  });
}

/** `GET /v3/connect/auth` (see OAuthService.authorize). */
export async function authorize(state: OAuthState, query: AuthorizeQuery, origin: string): Promise<BrowserStep> {
  const principal: Principal = { applicationId: query.client_id, via: 'local' };
  const registered = await state.applicationDetails.listRedirectUris(principal);
  if (!registered.some((entry) => entry.url === query.redirect_uri)) {
    throw new AppError(
      'invalid_request',
      'redirect_uri: not a redirect URI of this application (client_id); register it with the applications API first.',
      { field: 'redirect_uri' },
    );
  }
  const fail = (error: string, description: string) => errorStep(query.redirect_uri, error, description, query.state);
  const responseType = query.response_type ?? 'code';
  if (responseType !== 'code' && responseType !== 'adminconsent') {
    return fail('unsupported_response_type', 'response_type must be code or adminconsent.');
  }
  const adminConsent = responseType === 'adminconsent';
  const provider =
    query.provider ?? (adminConsent ? 'microsoft' : query.login_hint ? detectByDomain(query.login_hint) : undefined);
  if (provider === undefined) {
    return fail(
      'invalid_request',
      'provider: name the provider (google or microsoft), or give login_hint to detect it.',
    );
  }
  if (FORM_PROVIDERS.has(provider) && !adminConsent) {
    return imapFormStep(state, query, provider);
  }
  if (!OAUTH_PROVIDERS.has(provider)) {
    return fail(
      'invalid_request',
      `provider: ${provider} accounts are connected with POST /v3/connect/custom; hosted OAuth serves google and microsoft.`,
    );
  }
  let client: ConnectorClient;
  try {
    client = await state.connectors.client(principal, provider as ConnectorProvider);
  } catch {
    return fail('invalid_request', `provider: the application has no ${provider} connector; create it first.`);
  }
  if (!client.endpoints.authorizationUrl || !client.clientId || !client.clientSecret) {
    return fail('server_error', `The ${provider} connector has no client_id, client_secret or authorization_url.`);
  }
  if (adminConsent && !query.credential_id) {
    return fail('invalid_request', 'credential_id: admin consent names the credential of the Microsoft app.');
  }
  const binding = state.randomBytes(18).toString('base64url');
  const verifier = state.randomBytes(32).toString('base64url');
  const flow: FlowState = {
    a: query.client_id,
    r: query.redirect_uri,
    s: query.state,
    p: provider,
    c: query.code_challenge,
    m: query.code_challenge ? (query.code_challenge_method ?? 'plain').toLowerCase() : undefined,
    o: query.access_type === 'offline',
    v: verifier,
    cb: `${state.config.publicUrlSet ? state.config.publicUrl : origin}${CALLBACK_PATH}`,
    b: binding,
    x: state.clock.now().getTime() + FLOW_TTL_MS,
    ac: adminConsent || undefined,
  };
  const sealed = state.secrets.seal(JSON.stringify(flow));
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  return { location: providerUrl(client, query, flow, sealed, challenge), binding };
}

/**
 * Google's scopes for its CalDAV and CardDAV APIs: without them both answer 403, so they are not asked. The full
 * calendar scope only: CalDAV takes no narrower one.
 */
export const GOOGLE_DAV_SCOPES = {
  caldav: 'https://www.googleapis.com/auth/calendar',
  carddav: 'https://www.googleapis.com/auth/carddav',
} as const;

/**
 * Where an OAuth grant's calendars and contacts are: the connector's CalDAV and CardDAV URLs; for Google, only those
 * its scope reaches (a grant of mail alone makes no DAV request).
 */
export function davUrlsOf(
  client: Pick<ConnectorClient, 'provider' | 'endpoints'>,
  scope: readonly string[],
): { caldavUrl?: string; carddavUrl?: string } {
  const { caldavUrl, carddavUrl } = client.endpoints;
  const reaches = (kind: keyof typeof GOOGLE_DAV_SCOPES) =>
    client.provider !== 'google' || scope.includes(GOOGLE_DAV_SCOPES[kind]);
  return {
    ...(caldavUrl && reaches('caldav') ? { caldavUrl } : {}),
    ...(carddavUrl && reaches('carddav') ? { carddavUrl } : {}),
  };
}

/**
 * Connects the account of a provider's tokens as a grant of the connector's provider (created, or this application's
 * grant of the same address re-authenticated): the account's address from the ID token or userinfo (an app grant's:
 * its `email_address`), the tokens sealed, its mail account on the connector's IMAP and SMTP servers, and its calendars
 * and contacts at the connector's CalDAV and CardDAV URLs (with the access token, where they answer it).
 * `options.refreshToken`: kept when the provider's answer brings no new refresh token (a refresh that does not rotate
 * it). `options.app`: the grant's tokens are minted with a connector credential (./app-tokens.ts), not refreshed.
 */
export async function connectWithTokens(
  state: OAuthState,
  principal: Principal,
  input: ConnectInput,
  client: ConnectorClient,
  tokens: ProviderTokens,
  options: { refreshToken?: string; app?: AppGrant } = {},
): Promise<{ grant: Grant; created: boolean }> {
  const { app } = options;
  const identity: ProviderIdentity = app ? { email: app.email } : await identityOf(state, client, tokens);
  const scope = input.scope ?? tokens.scope ?? client.scope;
  const refreshToken = app ? undefined : (tokens.refreshToken ?? options.refreshToken);
  const { secrets } = state;
  const connect = { ...input, scope, credential_id: app?.credentialId ?? null };
  return state.grants.connect(principal, connect, client.provider, {
    email: identity.email,
    async login() {
      const dav = await state.davAccounts?.discover(davUrlsOf(client, scope), tokens.accessToken);
      return {
        async save(tx, grantId, { atMs }) {
          await saveGrantTokens(tx, {
            grantId,
            provider: client.provider,
            kind: app?.kind ?? 'refresh_token',
            refreshTokenSealed: refreshToken ? secrets.seal(refreshToken) : null,
            accessTokenSealed: secrets.seal(tokens.accessToken),
            accessExpiresAt: atMs + tokens.expiresIn * 1000,
            scope,
            subject: identity.subject ?? null,
            tenant: app?.tenant ?? null,
            createdAt: atMs,
            updatedAt: atMs,
          });
          const { imap, smtp, allowInsecureTls } = client.endpoints;
          if (imap && smtp) {
            await state.mailAccounts.save(tx, grantId, { email: identity.email, imap, smtp, allowInsecureTls }, atMs);
          }
          await dav?.save(tx, grantId, atMs);
        },
      };
    },
  });
}

/** The account of the tokens: the ID token's claims, else the userinfo endpoint. */
async function identityOf(
  state: OAuthState,
  client: ConnectorClient,
  tokens: ProviderTokens,
): Promise<ProviderIdentity> {
  const fromIdToken = tokens.idToken ? identityOfIdToken(tokens.idToken) : undefined;
  return fromIdToken ?? (await state.provider.userinfo(client, tokens.accessToken));
}

/** `GET /v3/connect/callback` (see OAuthService.callback). */
export async function callback(
  state: OAuthState,
  query: Record<string, string>,
  binding: string | undefined,
): Promise<{ location: string }> {
  const flow = openFlow(state, query.state);
  if (!flow || binding === undefined || !equalText(flow.b, binding)) {
    throw new AppError(
      'invalid_request',
      'state: this sign-in was not started in this browser, or it took too long; start it again.',
    );
  }
  const fail = (error: string, description: string) => errorStep(flow.r, error, description, flow.s);
  if (query.error) {
    return fail(query.error.slice(0, 64), (query.error_description ?? 'The provider refused.').slice(0, 512));
  }
  const principal: Principal = { applicationId: flow.a, via: 'local' };
  if (flow.ac) {
    // Microsoft's admin consent answers with the tenant that consented, not a code.
    return {
      location: withParams(flow.r, {
        admin_consent: query.admin_consent ?? 'True',
        tenant: query.tenant?.slice(0, 128),
        state: flow.s,
      }),
    };
  }
  if (!query.code) return fail('invalid_request', 'The provider gave no code.');
  try {
    const client = await state.connectors.client(principal, flow.p as ConnectorProvider);
    const tokens = await state.provider.exchangeCode(client, {
      code: query.code.slice(0, 4096),
      redirectUri: flow.cb,
      codeVerifier: flow.v,
    });
    const scope = tokens.scope ?? client.scope;
    const { grant } = await connectWithTokens(state, principal, { scope }, client, tokens);
    return { location: await issueCode(state, flow, grant.id, scope, tokens.idToken) };
  } catch (error) {
    const refused = error instanceof AppError;
    state.logger.warn('oauth: the callback failed', { application_id: flow.a, provider: flow.p, error: String(error) });
    return fail(
      refused && error.code === 'conflict' ? 'access_denied' : 'server_error',
      refused ? error.message : 'The sign-in could not be completed; try again.',
    );
  }
}
