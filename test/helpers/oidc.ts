/**
 * An OAuth 2.0 / OpenID Connect authorization server on loopback, built with the certified `oidc-provider`, standing
 * for Google or Microsoft in tests: its development login and consent pages (any login name is an account whose
 * address it is), authorization codes with PKCE, refresh tokens (`offline_access`), revocation, userinfo and token
 * introspection (what Dovecot's `oauth2` passdb asks). And a browser-free walk through a hosted sign-in: the test
 * follows the redirects with a cookie jar and posts the login and consent forms, as a browser would.
 */
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors, Provider, type KoaContextWithOIDC } from 'oidc-provider';

/** RFC 7523 §2.1: a JWT bearer assertion (Google's service accounts). */
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The public client a jwt-bearer request without client authentication is taken as (Google asks for none). */
const ASSERTION_CLIENT = 'service-account-assertions';

/** The client a resource server (Dovecot) introspects tokens as. */
const INTROSPECTION_CLIENT = { id: 'dovecot', secret: 'dovecot-introspection-secret' };

/** Options of {@link startOidcProvider}. */
export interface OidcOptions {
  /** The OAuth client's redirect URIs (Agentpost's `/v3/connect/callback`). */
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
  /** Access token lifetime in seconds (default an hour). */
  accessTokenTtl?: number;
  /** Fixed port (default: any free one). */
  port?: number;
  /**
   * Microsoft apps with admin consent (app-only): clients taking the client credentials grant, each given access to
   * one mailbox, whose address the token's introspection names as `sub` (what Dovecot logs the mailbox in as).
   */
  appOnlyClients?: { clientId: string; clientSecret: string; mailbox: string }[];
}

/** A Google service account's public key, as the provider knows it (its JSON key file's `private_key_id`). */
export interface ServiceAccountKey {
  clientEmail: string;
  keyId: string;
  publicKeyPem: string;
}

/** A running authorization server. */
export interface OidcServer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  provider: Provider;
  /** Connector settings pointing a google/microsoft connector at this server. */
  connectorSettings: Record<string, string>;
  /** The introspection endpoint (RFC 7662). */
  introspectionUrl: string;
  /** The client a resource server introspects tokens as (HTTP basic authentication). */
  introspectionClient: { clientId: string; clientSecret: string };
  /**
   * Makes an access token stop working now, as at its expiry, leaving the grant's refresh token valid (revoking it
   * through the revocation endpoint would revoke every token of its grant: oidc-provider's `revokeByGrantId`).
   */
  expireAccessToken(token: string): Promise<void>;
  /** The same with the introspection client's id and secret in its userinfo, as Dovecot's oauth2 passdb takes it. */
  dovecotIntrospectionUrl: string;
  /**
   * Registers a service account for the jwt-bearer grant (domain-wide delegation for every user): an assertion signed
   * with its key, `iss` its client email, `aud` the token endpoint, at most an hour, gets an access token for `sub`.
   */
  addServiceAccount(key: ServiceAccountKey): void;
  /** The service account (client email) or app (client id) is refused from now on: `invalid_grant`, as when disabled. */
  refuse(issuerOrClientId: string): void;
  /** The assertions and client credentials requests answered so far (the claims of each assertion, decoded). */
  mintRequests: { grantType: string; claims?: Record<string, unknown>; header?: Record<string, unknown> }[];
  stop(): Promise<void>;
}

/** The parts of a compact JWT, decoded (undefined when malformed). */
function jwtParts(token: string) {
  const [header, payload, signature] = token.split('.');
  if (header === undefined || payload === undefined || signature === undefined) return undefined;
  try {
    return {
      header: JSON.parse(Buffer.from(header, 'base64url').toString()) as Record<string, unknown>,
      claims: JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>,
      signed: Buffer.from(`${header}.${payload}`),
      signature: Buffer.from(signature, 'base64url'),
    };
  } catch {
    return undefined;
  }
}

/** Where minted tokens keep their subject until saved (read back by `extraTokenClaims`). */
type Subjects = WeakMap<object, string>;

/** Issues an access token of the grant handler's client for `sub` (its introspection names it), and answers it. */
async function issueFor(ctx: KoaContextWithOIDC, subjects: Subjects, sub: string, scope: string | undefined) {
  const token = new ctx.oidc.provider.ClientCredentials({ client: ctx.oidc.client, scope });
  subjects.set(token, sub);
  const value = await token.save();
  ctx.body = { access_token: value, expires_in: token.expiration, token_type: 'Bearer', scope };
}

/**
 * The jwt-bearer grant (RFC 7523 §2.1, as Google's token endpoint takes a service account's assertion): the signature
 * with the registered key of `kid`, `iss` that key's account, `aud` the token endpoint, `exp` in the future and at most
 * an hour after `iat`, a `sub`.
 */
function assertionGrant(
  issuer: string,
  keys: Map<string, ServiceAccountKey>,
  refused: Set<string>,
  subjects: Subjects,
  log: OidcServer['mintRequests'],
) {
  return async (ctx: KoaContextWithOIDC) => {
    const assertion = ctx.oidc.params!.assertion;
    const parts = typeof assertion === 'string' ? jwtParts(assertion) : undefined;
    if (!parts) throw new errors.InvalidGrant('malformed assertion');
    log.push({ grantType: JWT_BEARER, claims: parts.claims, header: parts.header });
    const key = keys.get(String(parts.header.kid));
    const { iss, sub, aud, iat, exp, scope } = parts.claims;
    const now = Math.floor(Date.now() / 1000);
    if (parts.header.alg !== 'RS256' || !key) throw new errors.InvalidGrant('unknown key');
    if (!verify('sha256', parts.signed, createPublicKey(key.publicKeyPem), parts.signature)) {
      throw new errors.InvalidGrant('invalid signature');
    }
    if (iss !== key.clientEmail || refused.has(key.clientEmail)) throw new errors.InvalidGrant('account disabled');
    if (aud !== `${issuer}/token`) throw new errors.InvalidGrant('wrong audience');
    if (typeof exp !== 'number' || typeof iat !== 'number' || exp <= now || exp - iat > 3600) {
      throw new errors.InvalidGrant('expired or too long');
    }
    if (typeof sub !== 'string' || sub === '') throw new errors.InvalidGrant('no subject');
    await issueFor(ctx, subjects, sub, typeof scope === 'string' ? scope : undefined);
  };
}

/** The client credentials grant of an app with admin consent: a token naming its mailbox, unless it was refused. */
function appOnlyGrant(
  apps: Map<string, string>,
  refused: Set<string>,
  subjects: Subjects,
  log: OidcServer['mintRequests'],
) {
  return async (ctx: KoaContextWithOIDC) => {
    const clientId = ctx.oidc.client!.clientId;
    log.push({ grantType: 'client_credentials' });
    const mailbox = apps.get(clientId);
    if (!mailbox || refused.has(clientId)) throw new errors.InvalidGrant('the app has no access');
    const scope = ctx.oidc.params!.scope;
    await issueFor(ctx, subjects, mailbox, typeof scope === 'string' ? scope : undefined);
  };
}

/** Starts an authorization server on 127.0.0.1. Call `stop()` in afterAll. */
export async function startOidcProvider(options: OidcOptions): Promise<OidcServer> {
  const clientId = options.clientId ?? 'agentpost-client';
  const clientSecret = options.clientSecret ?? 'agentpost-client-secret-of-the-test-provider';
  let handler: ((...args: Parameters<Parameters<typeof createServer>[1] & {}>) => void) | undefined;
  const server: Server = createServer((request, response) => handler!(request, response));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
      // What Dovecot's oauth2 passdb introspects tokens as (HTTP basic authentication, from the URL's userinfo).
      {
        client_id: INTROSPECTION_CLIENT.id,
        client_secret: INTROSPECTION_CLIENT.secret,
        redirect_uris: [],
        grant_types: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      // A jwt-bearer request carries no client authentication (the assertion is the credential): taken as this client.
      {
        client_id: ASSERTION_CLIENT,
        redirect_uris: [],
        grant_types: [JWT_BEARER],
        response_types: [],
        token_endpoint_auth_method: 'none',
      },
      ...(options.appOnlyClients ?? []).map((app) => ({
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uris: [],
        grant_types: ['client_credentials'],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_post' as const,
      })),
    ],
    extraTokenClaims: (_context: unknown, token: object) => {
      const sub = subjects.get(token);
      return sub === undefined ? undefined : { sub };
    },
    async findAccount(_context, id) {
      return {
        accountId: id,
        claims: () => ({ sub: id, email: id.toLowerCase(), email_verified: true, name: `User ${id}` }),
      };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    scopes: [
      'openid',
      'email',
      'profile',
      'offline_access',
      'https://mail.google.com/',
      // Google's CalDAV and CardDAV scopes.
      'https://www.googleapis.com/auth/calendar',
      'https://www.googleapis.com/auth/carddav',
    ],
    features: {
      devInteractions: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      clientCredentials: { enabled: true },
    },
    ttl: { AccessToken: options.accessTokenTtl ?? 3600, ClientCredentials: options.accessTokenTtl ?? 3600 },
    cookies: { keys: ['agentpost-test-cookie-key'] },
  });
  const subjects: Subjects = new WeakMap();
  const serviceAccounts = new Map<string, ServiceAccountKey>();
  const refused = new Set<string>();
  const mintRequests: OidcServer['mintRequests'] = [];
  const apps = new Map((options.appOnlyClients ?? []).map((app) => [app.clientId, app.mailbox]));
  provider.registerGrantType(JWT_BEARER, assertionGrant(issuer, serviceAccounts, refused, subjects, mintRequests), [
    'assertion',
    'scope',
  ]);
  provider.registerGrantType('client_credentials', appOnlyGrant(apps, refused, subjects, mintRequests), ['scope']);
  provider.use(assertionClient);
  // Its development warnings (dev interactions, keys) are expected here.
  provider.on('server_error', (_context, error) => console.error('oidc-provider server_error', error));
  const callback = provider.callback();
  handler = (request, response) => void callback(request, response);
  return {
    issuer,
    clientId,
    clientSecret,
    provider,
    connectorSettings: {
      client_id: clientId,
      client_secret: clientSecret,
      authorization_url: `${issuer}/auth`,
      token_url: `${issuer}/token`,
      revocation_url: `${issuer}/token/revocation`,
      userinfo_url: `${issuer}/me`,
    },
    introspectionUrl: `${issuer}/token/introspection`,
    introspectionClient: { clientId: INTROSPECTION_CLIENT.id, clientSecret: INTROSPECTION_CLIENT.secret },
    dovecotIntrospectionUrl: `http://${INTROSPECTION_CLIENT.id}:${INTROSPECTION_CLIENT.secret}@127.0.0.1:${new URL(issuer).port}/token/introspection`,
    addServiceAccount: (key) => void serviceAccounts.set(key.keyId, key),
    refuse: (id) => void refused.add(id),
    mintRequests,
    async expireAccessToken(token) {
      const stored = (await provider.AccessToken.find(token)) ?? (await provider.ClientCredentials.find(token));
      if (!stored) throw new Error('oidc-provider: no such access token');
      await stored.destroy();
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Google's token endpoint takes a jwt-bearer request without client authentication; oidc-provider authenticates a
 * client on every grant: such a request is read here and handed on as the public assertion client's.
 */
async function assertionClient(ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
  if (ctx.method === 'POST' && ctx.path === '/token' && ctx.is('application/x-www-form-urlencoded')) {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const params = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString()));
    if (params.grant_type === JWT_BEARER && params.client_id === undefined) params.client_id = ASSERTION_CLIENT;
    // oidc-provider reads an already read body from here.
    (ctx.req as unknown as { body: Record<string, string> }).body = params;
  }
  await next();
}

/** A browser's cookies, by name (paths honoured, ports not: as browsers do). */
class CookieJar {
  private readonly cookies = new Map<string, { value: string; path: string }>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, ...value] = pair!.trim().split('=');
      const path =
        attributes
          .map((item) => item.trim())
          .find((item) => /^path=/i.test(item))
          ?.slice(5) ?? '/';
      const expired = attributes.some((item) => /^\s*max-age=0\b/i.test(item)) || value.join('=') === '';
      if (expired) this.cookies.delete(name!);
      else this.cookies.set(name!, { value: value.join('='), path });
    }
  }
  header(url: URL): string {
    return [...this.cookies]
      .filter(([, cookie]) => url.pathname.startsWith(cookie.path))
      .map(([name, cookie]) => `${name}=${cookie.value}`)
      .join('; ');
  }
  names(): string[] {
    return [...this.cookies.keys()];
  }
}

/** The fields and action of the first form of a page. */
function formOf(html: string, base: URL): { action: URL; fields: Record<string, string> } | undefined {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
    if (name) fields[name] = value;
  }
  return { action: new URL(form[1]!.replace(/&amp;/g, '&'), base), fields };
}

/** What a walk ended with: the address the browser was last sent to (outside both servers) and every URL visited. */
export interface Walk {
  final: URL;
  visited: URL[];
  jar: CookieJar;
}

/**
 * Walks a sign-in from `start` as a browser would: follows redirects, and on the provider's pages posts the login form
 * (login `login`, any password) and the consent form, until a redirect leaves for `stopAt` (the application's redirect
 * URI). At most 20 steps.
 */
export async function walkSignIn(
  start: string,
  options: { login: string; stopAt: string; jar?: CookieJar },
): Promise<Walk> {
  const jar = options.jar ?? new CookieJar();
  const visited: URL[] = [];
  let url = new URL(start);
  let method: 'GET' | 'POST' = 'GET';
  let body: string | undefined;
  for (let step = 0; step < 20; step++) {
    if (url.toString().startsWith(options.stopAt)) return { final: url, visited, jar };
    visited.push(url);
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      headers: {
        cookie: jar.header(url),
        ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(body !== undefined ? { body } : {}),
    });
    jar.take(response);
    method = 'GET';
    body = undefined;
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url);
      continue;
    }
    const html = await response.text();
    const form = response.status === 200 ? formOf(html, url) : undefined;
    if (!form) throw new Error(`The walk stopped at ${url.toString()} (${response.status}): ${html.slice(0, 500)}`);
    if (form.fields.prompt === 'login') Object.assign(form.fields, { login: options.login, password: 'any' });
    url = form.action;
    method = 'POST';
    body = new URLSearchParams(form.fields).toString();
  }
  throw new Error(`The walk did not reach ${options.stopAt} in 20 steps; last at ${url.toString()}`);
}

/**
 * A refresh token of the connector's client, obtained as an application would: the code flow at the provider, for
 * `scope` (by default mail alone).
 */
export async function refreshTokenFor(
  oidc: OidcServer,
  redirectUri: string,
  login: string,
  scope = 'openid email offline_access https://mail.google.com/',
): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const start = `${oidc.issuer}/auth?${new URLSearchParams({
    client_id: oidc.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope,
    prompt: 'consent',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString()}`;
  const walk = await walkSignIn(start, { login, stopAt: redirectUri });
  const answer = await fetch(`${oidc.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: walk.final.searchParams.get('code')!,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: oidc.clientId,
      client_secret: oidc.clientSecret,
    }).toString(),
  });
  const tokens = (await answer.json()) as { refresh_token?: string };
  if (!tokens.refresh_token) throw new Error(`no refresh token: ${JSON.stringify(tokens)}`);
  return tokens.refresh_token;
}

export { CookieJar };
