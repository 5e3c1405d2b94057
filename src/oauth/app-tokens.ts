/**
 * @module oauth/app-tokens
 * How a grant's access token is minted (issue 38 item 2), in one place the refresh path asks: with the grant's refresh
 * token, or without a user at all, with a connector credential of the application:
 * - a Google **service account** with domain-wide delegation (`serviceaccount` credential): a JWT signed RS256 with its
 *   `private_key` (`kid` its `private_key_id`), `iss` its `client_email`, `sub` the user, `scope`, `aud` the token URL,
 *   valid an hour, posted as `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (RFC 7523 §2.1, Google's
 *   "OAuth 2.0 for server to server applications"). No refresh token: a new assertion mints the next token.
 * - a Microsoft app with **admin consent** (`adminconsent` credential, app-only access): the client credentials grant
 *   (RFC 6749 §4.4) with its `client_id` and `client_secret`, scope `https://outlook.office365.com/.default`, at the
 *   tenant's token URL. The mailbox is the grant's address (Exchange Online takes app-only tokens for IMAP and SMTP
 *   with XOAUTH2 for a mailbox the app was given access to).
 * The credential is opened (unsealed) for the request only; its key and secret are never stored elsewhere or logged.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { GrantRow } from '../../storage/index.js';
import type { TokenKind } from '../../storage/schema/oauth.js';
import type { Principal } from '../access.js';
import type { ConnectorClient, OpenedCredential } from '../connectors/index.js';
import { AppError, invalid } from '../errors.js';
import type { ConnectorProvider } from '../schemas/connectors.js';
import type { GrantTokensRow } from './oauth-store.js';
import type { OAuthState } from './oauth-state.js';
import { ProviderRefusal, type ProviderTokens } from './provider-client.js';

/** RFC 7523 §2.1: the grant type of a JWT bearer assertion. */
export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The scope of an app-only token for Exchange Online's IMAP and SMTP (the app's consented permissions). */
export const MICROSOFT_APP_SCOPE = 'https://outlook.office365.com/.default';

/** How long an assertion is valid (Google takes at most an hour). */
const ASSERTION_TTL_S = 3600;

/** A grant whose tokens a connector credential mints, as stored and as connected. */
export interface AppGrant {
  kind: Exclude<TokenKind, 'refresh_token'>;
  credentialId: string;
  /** The user the service account acts for, or the mailbox of the app-only grant. */
  email: string;
  scopes: string[];
  /** Microsoft: the tenant whose token URL issues the tokens. */
  tenant?: string | undefined;
}

/** The credential type each kind of grant needs. */
const CREDENTIAL_TYPE = { service_account: 'serviceaccount', app_only: 'adminconsent' } as const;

/** The kind of app grant of a provider's credential. */
export function appGrantKind(provider: string): AppGrant['kind'] {
  return provider === 'microsoft' ? 'app_only' : 'service_account';
}

/**
 * The token URL of a tenant: the connector's with its `/common/`, `/organizations/` or `/consumers/` segment replaced
 * by the tenant (client credentials need a tenant). A URL without such a segment (one naming a tenant already, a
 * test server's) is kept.
 */
export function tenantTokenUrl(tokenUrl: string, tenant: string | undefined): string {
  if (tenant === undefined) return tokenUrl;
  return tokenUrl.replace(/\/(common|organizations|consumers)\/(?=oauth2\/)/, `/${encodeURIComponent(tenant)}/`);
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A service account's signed assertion for `subject` (RS256; the key's id in the header). */
export function serviceAccountAssertion(input: {
  key: KeyObject;
  keyId: string;
  issuer: string;
  subject: string;
  scopes: readonly string[];
  audience: string;
  nowMs: number;
}): string {
  const iat = Math.floor(input.nowMs / 1000);
  const header = base64url({ alg: 'RS256', typ: 'JWT', kid: input.keyId });
  const payload = base64url({
    iss: input.issuer,
    sub: input.subject,
    scope: input.scopes.join(' '),
    aud: input.audience,
    iat,
    exp: iat + ASSERTION_TTL_S,
  });
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), input.key).toString('base64url');
  return `${header}.${payload}.${signature}`;
}

function credentialText(credential: OpenedCredential, key: string): string {
  const value = credential.data[key];
  if (typeof value !== 'string' || value === '') {
    throw invalid('settings.credential_id', `credential ${credential.id} has no ${key}.`);
  }
  return value;
}

/** The service account's private key; a value that is not a PEM private key is a 400 (the key itself never shown). */
function privateKeyOf(credential: OpenedCredential): KeyObject {
  try {
    const key = createPrivateKey(credentialText(credential, 'private_key'));
    if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
    return key;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw invalid(
      'settings.credential_id',
      `the private_key of credential ${credential.id} is not an RSA private key in PEM form (as in the service account's JSON key file).`,
    );
  }
}

/**
 * Mints an access token for `grant` with its opened credential, at the connector's token URL. A credential of another
 * type is a 400 naming `settings.credential_id`; the provider's refusal is a {@link ProviderRefusal}.
 */
export async function mintAppToken(
  state: Pick<OAuthState, 'provider' | 'clock'>,
  client: ConnectorClient,
  credential: OpenedCredential,
  grant: AppGrant,
): Promise<ProviderTokens> {
  const expected = CREDENTIAL_TYPE[grant.kind];
  if (credential.credentialType !== expected) {
    throw invalid(
      'settings.credential_id',
      `credential ${credential.id} is a ${credential.credentialType} credential; a ${client.provider} grant without a refresh token needs a ${expected} one.`,
    );
  }
  const tokenUrl = client.endpoints.tokenUrl;
  if (tokenUrl === undefined) throw invalid('provider', `the ${client.provider} connector has no token_url.`);
  if (grant.kind === 'service_account') {
    const assertion = serviceAccountAssertion({
      key: privateKeyOf(credential),
      keyId: credentialText(credential, 'private_key_id'),
      issuer: credentialText(credential, 'client_email'),
      subject: grant.email,
      scopes: grant.scopes,
      audience: tokenUrl,
      nowMs: state.clock.now().getTime(),
    });
    return state.provider.requestToken(tokenUrl, { grant_type: JWT_BEARER, assertion });
  }
  return state.provider.requestToken(tenantTokenUrl(tokenUrl, grant.tenant), {
    grant_type: 'client_credentials',
    client_id: credentialText(credential, 'client_id'),
    client_secret: credentialText(credential, 'client_secret'),
    scope: grant.scopes.join(' '),
  });
}

/**
 * Mints a new access token for a grant, the way its kind says: its refresh token at the connector's token URL, or its
 * credential (above). What ends the grant is a {@link ProviderRefusal}: the provider's refusal, no refresh token, the
 * credential deleted.
 */
export async function mintGrantToken(
  state: Pick<OAuthState, 'provider' | 'clock' | 'connectors' | 'credentials' | 'secrets'>,
  grant: Pick<GrantRow, 'applicationId' | 'email' | 'credentialId'>,
  row: GrantTokensRow,
): Promise<ProviderTokens> {
  const principal: Principal = { applicationId: grant.applicationId, via: 'local' };
  const provider = row.provider as ConnectorProvider;
  const client = await state.connectors.client(principal, provider);
  if (row.kind === 'refresh_token') {
    if (row.refreshTokenSealed === null) throw new ProviderRefusal('no refresh token (online access)', '');
    return state.provider.refresh(client, state.secrets.open(row.refreshTokenSealed));
  }
  const credentialId = grant.credentialId;
  let credential: OpenedCredential | undefined;
  if (credentialId !== null) {
    credential = await state.credentials.open(principal, provider, credentialId).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'not_found') return undefined;
      throw error;
    });
  }
  if (credentialId === null || credential === undefined) {
    throw new ProviderRefusal('credential_deleted', `the ${provider} connector has no credential ${credentialId}`);
  }
  return mintAppToken(state, client, credential, {
    kind: row.kind,
    credentialId,
    email: grant.email,
    scopes: row.scope,
    tenant: row.tenant ?? undefined,
  });
}
