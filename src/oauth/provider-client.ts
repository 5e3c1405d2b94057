/**
 * @module oauth/provider-client
 * The requests this service makes to an OAuth provider on behalf of a connector: the authorization code and refresh
 * token grants at its token endpoint (RFC 6749 §4.1.3, §6, client_secret_post), the grants of ./app-tokens.ts (JWT
 * bearer, client credentials), token revocation (RFC 7009) and the
 * OpenID Connect userinfo endpoint. Every request is bounded in time and in the bytes read; the provider's answer is
 * read as untrusted JSON.
 */
import { isIP } from 'node:net';
import type { ConnectorClient } from '../connectors/index.js';
import { AppError } from '../errors.js';
import type { DnsResolver, HttpRequester } from '../ports/index.js';

/** How long one request to a provider may take, connect to last byte. */
const PROVIDER_TIMEOUT_MS = 15_000;

/** The most of a provider's answer read (token answers are a few KB; an ID token a few more). */
const PROVIDER_MAX_BYTES = 64 * 1024;

/** A provider's token endpoint answer, as far as this service reads it. */
export interface ProviderTokens {
  accessToken: string;
  /** Seconds; absent in the answer: an hour (Google's and Microsoft's lifetime). */
  expiresIn: number;
  refreshToken?: string | undefined;
  idToken?: string | undefined;
  /** Space-separated in the answer; absent: the scopes asked for. */
  scope?: string[] | undefined;
}

/** The account as the provider describes it (ID token claims or userinfo). */
export interface ProviderIdentity {
  email: string;
  subject?: string | undefined;
  name?: string | undefined;
}

/** A refusal of the token endpoint (`invalid_grant`: the refresh token was revoked or expired). */
export class ProviderRefusal extends AppError {
  constructor(
    readonly oauthError: string,
    readonly description: string,
  ) {
    super('upstream_error', `The provider refused: ${oauthError}${description ? ` (${description})` : ''}.`, {
      error: oauthError,
    });
  }
}

/** Makes the requests of a connector's provider. */
export interface ProviderClient {
  /** Exchanges an authorization code (with the PKCE verifier this service sent). */
  exchangeCode(
    client: ConnectorClient,
    input: { code: string; redirectUri: string; codeVerifier: string },
  ): Promise<ProviderTokens>;
  /** A new access token from a refresh token; a refusal is a {@link ProviderRefusal}. */
  refresh(client: ConnectorClient, refreshToken: string): Promise<ProviderTokens>;
  /**
   * Any other grant at a token endpoint (a JWT bearer assertion, client credentials: ./app-tokens.ts), the form given
   * as is; a refusal is a {@link ProviderRefusal}.
   */
  requestToken(tokenUrl: string, form: Record<string, string>): Promise<ProviderTokens>;
  /** Revokes a token at the provider, where it has a revocation endpoint (true when it did). */
  revoke(client: ConnectorClient, token: string): Promise<boolean>;
  /** The account of an access token, from the userinfo endpoint. */
  userinfo(client: ConnectorClient, accessToken: string): Promise<ProviderIdentity>;
}

function defined(name: string, value: string | undefined): string {
  if (value === undefined) {
    throw new AppError('invalid_request', `The connector has no ${name}; set it with the connectors API.`);
  }
  return value;
}

function jsonObject(body: Buffer): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function text(value: unknown, max = 8_192): string | undefined {
  return typeof value === 'string' && value !== '' && value.length <= max ? value : undefined;
}

/** The token endpoint's answer read (RFC 6749 §5.1); a non-2xx is a refusal with the provider's error (§5.2). */
export function readTokenAnswer(status: number, body: Buffer): ProviderTokens {
  const json = jsonObject(body);
  if (status < 200 || status > 299) {
    throw new ProviderRefusal(text(json.error, 128) ?? `http_${status}`, text(json.error_description, 512) ?? '');
  }
  const accessToken = text(json.access_token);
  if (accessToken === undefined) throw new ProviderRefusal('invalid_response', 'no access_token in the answer');
  const expiresIn = typeof json.expires_in === 'number' && json.expires_in > 0 ? Math.floor(json.expires_in) : 3600;
  const scope = text(json.scope);
  return {
    accessToken,
    expiresIn,
    refreshToken: text(json.refresh_token),
    idToken: text(json.id_token, 16_384),
    scope: scope?.split(' ').filter(Boolean),
  };
}

/** The payload of a JWT, unverified (see {@link identityOfIdToken} for why that is enough here); {} when malformed. */
export function claimsOfJwt(token: string): Record<string, unknown> {
  const payload = token.split('.')[1];
  return payload === undefined ? {} : jsonObject(Buffer.from(payload, 'base64url'));
}

/**
 * The claims of an ID token received straight from the token endpoint. Its signature is not checked: OpenID Connect
 * Core §3.1.3.7 lets a client that received it directly from the token endpoint over TLS rely on the TLS server
 * validation instead. Undefined when it is not a JWT with an email.
 */
export function identityOfIdToken(
  idToken: string,
): (ProviderIdentity & { claims: Record<string, unknown> }) | undefined {
  const claims = claimsOfJwt(idToken);
  const email = text(claims.email, 320);
  if (email === undefined) return undefined;
  return { email: email.toLowerCase(), subject: text(claims.sub, 256), name: text(claims.name, 256), claims };
}

/** Creates the provider client over the HTTP requester (`deps.http`), resolving host names with `dns`. */
export function createProviderClient(http: HttpRequester, dns: Pick<DnsResolver, 'lookup'>): ProviderClient {
  async function send(
    url: string,
    method: 'GET' | 'POST',
    headers: Record<string, string>,
    form?: Record<string, string>,
  ): Promise<{ status: number; body: Buffer }> {
    const target = new URL(url);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const family = isIP(host);
    const address =
      family === 4
        ? { address: host, family: 4 as const }
        : family === 6
          ? { address: host, family: 6 as const }
          : (await dns.lookup(host))[0];
    if (address === undefined) throw new AppError('upstream_error', `The provider's host ${host} has no address.`);
    const body = form ? Buffer.from(new URLSearchParams(form).toString()) : undefined;
    try {
      const answer = await http({
        url: target,
        address,
        method,
        headers: {
          accept: 'application/json',
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          ...headers,
        },
        body,
        timeoutMs: PROVIDER_TIMEOUT_MS,
        maxResponseBytes: PROVIDER_MAX_BYTES,
      });
      return { status: answer.status, body: answer.body };
    } catch (error) {
      throw new AppError(
        'upstream_error',
        `The provider at ${target.origin} did not answer: ${(error as Error).message}`,
      );
    }
  }

  const credentials = (client: ConnectorClient) => ({
    client_id: defined('client_id', client.clientId),
    client_secret: defined('client_secret', client.clientSecret),
  });

  return {
    async exchangeCode(client, { code, redirectUri, codeVerifier }) {
      const url = defined('token_url', client.endpoints.tokenUrl);
      const answer = await send(
        url,
        'POST',
        {},
        {
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          code_verifier: codeVerifier,
          ...credentials(client),
        },
      );
      return readTokenAnswer(answer.status, answer.body);
    },
    async refresh(client, refreshToken) {
      const url = defined('token_url', client.endpoints.tokenUrl);
      const answer = await send(
        url,
        'POST',
        {},
        {
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
          ...credentials(client),
        },
      );
      return readTokenAnswer(answer.status, answer.body);
    },
    async requestToken(tokenUrl, form) {
      const answer = await send(tokenUrl, 'POST', {}, form);
      return readTokenAnswer(answer.status, answer.body);
    },
    async revoke(client, token) {
      const url = client.endpoints.revocationUrl;
      if (url === undefined) return false;
      const answer = await send(url, 'POST', {}, { token, ...credentials(client) });
      // RFC 7009 §2.2: 200 whether or not the token was still valid.
      if (answer.status !== 200) {
        throw new AppError('upstream_error', `The provider's revocation endpoint answered ${answer.status}.`);
      }
      return true;
    },
    async userinfo(client, accessToken) {
      const url = defined('userinfo_url', client.endpoints.userinfoUrl);
      const answer = await send(url, 'GET', { authorization: `Bearer ${accessToken}` });
      const json = jsonObject(answer.body);
      const email = text(json.email, 320) ?? text(json.mail, 320) ?? text(json.preferred_username, 320);
      if (answer.status !== 200 || email === undefined || !email.includes('@')) {
        throw new AppError(
          'upstream_error',
          `The provider's userinfo endpoint gave no address (HTTP ${answer.status}).`,
        );
      }
      return { email: email.toLowerCase(), subject: text(json.sub, 256), name: text(json.name, 256) };
    },
  };
}
