/**
 * @module oauth/token-endpoint
 * `POST /v3/connect/token` (RFC 6749 §4.1.3, §6 and the Nylas `client_credentials` grant of a grant id), with the
 * application's API key as `client_secret` or as the bearer; an authorization code with a PKCE challenge needs its
 * verifier and no secret (a public client). Also revocation (RFC 7009) and token info. Tokens issued here are kept as
 * hashes only.
 */
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import { TokenRequestSchema, type TokenAnswer, type TokenInfo, type TokenInfoInput } from '../schemas/oauth.js';
import { pkceMatches } from './hosted-flow.js';
import { claimsOfJwt } from './provider-client.js';
import {
  findGrantTokens,
  findIssuedToken,
  insertIssuedToken,
  tokenHash,
  useIssuedToken,
  type IssuedTokenRow,
} from './oauth-store.js';
import type { OAuthState } from './oauth-state.js';

/** Lifetime of an access token issued here (Nylas: an hour). */
const ACCESS_TOKEN_TTL_S = 3600;

/** Prefixes that tell issued tokens apart from API keys (and let secret scanners find them). */
const ACCESS_PREFIX = 'agpat_';
const REFRESH_PREFIX = 'agprt_';

/** An OAuth error (RFC 6749 §5.2): `error` on the wire, a 400 (401 for `invalid_client`). */
export function oauthError(error: string, description: string): AppError {
  return new AppError(error === 'invalid_client' ? 'unauthorized' : 'invalid_request', description, {
    oauth_error: error,
  });
}

/** The application the request authenticated as, if it gave a secret; a wrong secret is `invalid_client`. */
async function clientOf(state: OAuthState, clientId: string, secret: string | undefined): Promise<boolean> {
  if (secret === undefined || secret === '') return false;
  let principal: Principal;
  try {
    principal = await state.applications.authenticateApiKey(secret);
  } catch {
    throw oauthError('invalid_client', 'client_secret: not an API key of this service.');
  }
  if (principal.applicationId !== clientId) {
    throw oauthError('invalid_client', 'client_secret: the API key is not one of the application client_id names.');
  }
  return true;
}

async function issue(
  state: OAuthState,
  grantId: string,
  applicationId: string,
  scope: string[],
  options: { refresh: boolean; idToken?: string | undefined },
): Promise<TokenAnswer> {
  const [grant] = await state.db.orm
    .select({ email: tables.grants.email, provider: tables.grants.provider })
    .from(tables.grants)
    .where(eq(tables.grants.id, grantId))
    .limit(1);
  if (!grant) throw oauthError('invalid_grant', 'The grant of this code or token no longer exists.');
  const access = `${ACCESS_PREFIX}${state.randomBytes(32).toString('base64url')}`;
  const refresh = options.refresh ? `${REFRESH_PREFIX}${state.randomBytes(32).toString('base64url')}` : undefined;
  const atMs = state.clock.now().getTime();
  await state.db.write(async (tx) => {
    const common = { applicationId, grantId, scope, createdAt: atMs };
    await insertIssuedToken(tx, access, { ...common, kind: 'access', expiresAt: atMs + ACCESS_TOKEN_TTL_S * 1000 });
    if (refresh) await insertIssuedToken(tx, refresh, { ...common, kind: 'refresh', expiresAt: null });
    if (options.idToken) {
      await insertIssuedToken(tx, options.idToken, { ...common, kind: 'id', expiresAt: null });
    }
  });
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_S,
    ...(refresh ? { refresh_token: refresh } : {}),
    ...(options.idToken ? { id_token: options.idToken } : {}),
    scope: scope.join(' '),
    email: grant.email,
    grant_id: grantId,
    provider: grant.provider,
  };
}

function usable(row: IssuedTokenRow | undefined, clientId: string, nowMs: number): row is IssuedTokenRow {
  return (
    row !== undefined &&
    row.applicationId === clientId &&
    row.usedAt === null &&
    (row.expiresAt === null || row.expiresAt > nowMs)
  );
}

/** `POST /v3/connect/token` (see OAuthService.token). */
export async function token(state: OAuthState, body: unknown, bearer: string | undefined): Promise<TokenAnswer> {
  const parsed = TokenRequestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || 'body';
    throw oauthError(
      field === 'grant_type' ? 'unsupported_grant_type' : 'invalid_request',
      `${field}: ${issue.message}`,
    );
  }
  const input = parsed.data;
  const authenticated = await clientOf(state, input.client_id, input.client_secret ?? bearer);
  const nowMs = state.clock.now().getTime();
  switch (input.grant_type) {
    case 'authorization_code': {
      if (!input.code) throw oauthError('invalid_request', 'code: required for grant_type authorization_code.');
      const row = await findIssuedToken(state.db.orm, input.code, ['code']);
      if (!usable(row, input.client_id, nowMs)) {
        throw oauthError('invalid_grant', 'code: unknown, expired or already used; start the sign-in again.');
      }
      if (input.redirect_uri !== undefined && input.redirect_uri !== row.redirectUri) {
        throw oauthError('invalid_grant', 'redirect_uri: not the one the authorization was made with.');
      }
      if (row.codeChallenge !== null) {
        if (!input.code_verifier || !pkceMatches(row.codeChallenge, row.codeChallengeMethod, input.code_verifier)) {
          throw oauthError('invalid_grant', 'code_verifier: does not match the code_challenge of the authorization.');
        }
      } else if (!authenticated) {
        throw oauthError('invalid_client', 'client_secret: send the API key (or use PKCE when starting the sign-in).');
      }
      if (!(await state.db.write((tx) => useIssuedToken(tx, row.tokenHash, nowMs)))) {
        throw oauthError('invalid_grant', 'code: already used.');
      }
      const idToken = row.idTokenSealed ? state.secrets.open(row.idTokenSealed) : undefined;
      return issue(state, row.grantId, row.applicationId, row.scope, { refresh: row.offline, idToken });
    }
    case 'refresh_token': {
      if (!input.refresh_token) throw oauthError('invalid_request', 'refresh_token: required for this grant_type.');
      const row = await findIssuedToken(state.db.orm, input.refresh_token, ['refresh']);
      if (!usable(row, input.client_id, nowMs)) {
        throw oauthError('invalid_grant', 'refresh_token: unknown or revoked; the user signs in again.');
      }
      const answer = await issue(state, row.grantId, row.applicationId, row.scope, { refresh: false });
      return { ...answer, refresh_token: input.refresh_token };
    }
    case 'client_credentials': {
      if (!authenticated) throw oauthError('invalid_client', 'client_secret: the API key is required for this grant.');
      if (!input.grant_id) throw oauthError('invalid_request', 'grant_id: required for grant_type client_credentials.');
      const [grant] = await state.db.orm
        .select({ id: tables.grants.id, applicationId: tables.grants.applicationId, scope: tables.grants.scope })
        .from(tables.grants)
        .where(eq(tables.grants.id, input.grant_id))
        .limit(1);
      if (!grant || grant.applicationId !== input.client_id) {
        throw oauthError('invalid_grant', 'grant_id: no such grant in this application.');
      }
      return issue(state, grant.id, grant.applicationId, grant.scope, { refresh: false });
    }
  }
}

/** `POST /v3/connect/revoke` (see OAuthService.revoke). */
export async function revoke(state: OAuthState, principal: Principal, value: string): Promise<void> {
  const row = await findIssuedToken(state.db.orm, value, ['access', 'refresh', 'id']);
  if (!row || row.applicationId !== principal.applicationId) return;
  await state.db.write((tx) => useIssuedToken(tx, tokenHash(value), state.clock.now().getTime()));
}

/** `GET /v3/connect/tokeninfo` (see OAuthService.tokenInfo). */
export async function tokenInfo(state: OAuthState, principal: Principal, input: TokenInfoInput): Promise<TokenInfo> {
  const value = input.id_token ?? input.access_token;
  if (value === undefined || (input.id_token !== undefined && input.access_token !== undefined)) {
    throw new AppError('invalid_request', 'Give id_token or access_token (one of them).');
  }
  const row = await findIssuedToken(state.db.orm, value, input.id_token ? ['id'] : ['access']);
  if (!usable(row, principal.applicationId, state.clock.now().getTime())) {
    throw new AppError('not_found', 'No valid token of this application matches; it may have expired or been revoked.');
  }
  if (row.kind === 'id') {
    const claims = claimsOfJwt(value);
    const seconds = (key: string) => (typeof claims[key] === 'number' ? Math.floor(claims[key]) : 0);
    const text = (key: string) => (typeof claims[key] === 'string' ? claims[key] : undefined);
    const audience = Array.isArray(claims.aud) ? String(claims.aud[0]) : text('aud');
    return {
      iss: text('iss') ?? '',
      aud: audience ?? '',
      ...(text('sub') !== undefined ? { sub: text('sub') } : {}),
      ...(text('email') !== undefined ? { email: text('email') } : {}),
      iat: seconds('iat'),
      exp: seconds('exp'),
    };
  }
  const [grant] = await state.db.orm
    .select({ email: tables.grants.email })
    .from(tables.grants)
    .where(eq(tables.grants.id, row.grantId))
    .limit(1);
  const tokens = await findGrantTokens(state.db.orm, row.grantId);
  return {
    iss: state.config.publicUrl,
    aud: row.applicationId,
    sub: tokens?.subject ?? row.grantId,
    ...(grant ? { email: grant.email } : {}),
    iat: Math.floor(row.createdAt / 1000),
    exp: Math.floor((row.expiresAt ?? row.createdAt) / 1000),
  };
}
