/**
 * @module oauth/custom-tokens
 * `POST /v3/connect/custom` with `provider` `google` or `microsoft` (Nylas' bring-your-own authentication):
 * - `settings.refresh_token`: the application obtained the refresh token itself, from the client of its connector.
 *   It is tried at once at the connector's `token_url` (a refusal is a 400 naming the field, and nothing is stored);
 *   the account's address comes from the answer's ID token, else from `userinfo_url`.
 * - `settings.credential_id` and `email_address`: no user signs in; a connector credential mints the tokens
 *   (./app-tokens.ts: a Google service account with domain-wide delegation, a Microsoft app with admin consent). The
 *   first token is minted at once (a refusal is a 400, nothing is stored; an unknown credential a 404).
 * Then the grant is connected as the hosted sign-in's callback connects it (./hosted-flow.ts `connectWithTokens`),
 * and kept fresh the same way (./grant-tokens.ts).
 */
import type { Principal } from '../access.js';
import type { ConnectorClient } from '../connectors/index.js';
import { AppError } from '../errors.js';
import type { ConnectorProvider } from '../schemas/connectors.js';
import type { CreateGrantInput, Grant } from '../schemas/grants.js';
import { appGrantKind, MICROSOFT_APP_SCOPE, mintAppToken, tenantTokenUrl, type AppGrant } from './app-tokens.js';
import { connectWithTokens } from './hosted-flow.js';
import type { OAuthState } from './oauth-state.js';
import { ProviderRefusal, type ProviderTokens } from './provider-client.js';

/** Providers whose accounts connect with a refresh token, or with a connector credential. */
export const TOKEN_PROVIDERS: ReadonlySet<string> = new Set(['google', 'microsoft']);

/** The application's connector of `provider`, with its client and token URL (a 400 naming `provider` otherwise). */
async function connectorOf(
  state: OAuthState,
  principal: Principal,
  provider: string,
  purpose: string,
): Promise<ConnectorClient> {
  let client: ConnectorClient;
  try {
    client = await state.connectors.client(principal, provider as ConnectorProvider);
  } catch {
    throw new AppError(
      'invalid_request',
      `provider: the application has no ${provider} connector; create it (POST /v3/connectors) ${purpose}.`,
      { field: 'provider' },
    );
  }
  if (!client.endpoints.tokenUrl || !client.clientId || !client.clientSecret) {
    throw new AppError(
      'invalid_request',
      `provider: the ${provider} connector has no client_id, client_secret or token_url.`,
    );
  }
  return client;
}

/** The provider's refusal of what `field` gave, as a 400 naming it (`message`); other failures as they are. */
async function refusedAs<T>(
  field: string,
  message: (refusal: ProviderRefusal) => string,
  attempt: () => Promise<T>,
): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    if (error instanceof ProviderRefusal)
      throw new AppError('invalid_request', `${field}: ${message(error)}`, { field });
    throw error;
  }
}

/** See OAuthService.connectCustom. */
export async function connectCustom(
  state: OAuthState,
  principal: Principal,
  input: CreateGrantInput,
): Promise<{ grant: Grant; created: boolean }> {
  const provider = input.provider;
  if (TOKEN_PROVIDERS.has(provider) && typeof input.settings.credential_id === 'string') {
    return connectWithCredential(state, principal, input);
  }
  const refreshToken = input.settings.refresh_token;
  if (!TOKEN_PROVIDERS.has(provider) || typeof refreshToken !== 'string' || refreshToken === '') {
    throw new AppError('invalid_request', 'settings.refresh_token: required for provider google or microsoft.', {
      field: 'settings.refresh_token',
    });
  }
  const client = await connectorOf(state, principal, provider, 'with the client the refresh token was issued to');
  const tokens: ProviderTokens = await refusedAs(
    'settings.refresh_token',
    (refusal) =>
      `the provider refused it at ${client.endpoints.tokenUrl} (${refusal.oauthError}); obtain a new one from the client of the ${provider} connector.`,
    () => state.provider.refresh(client, refreshToken),
  );
  const { name, state: grantState, workspace_id, scope } = input;
  return connectWithTokens(state, principal, { name, state: grantState, workspace_id, scope }, client, tokens, {
    refreshToken,
  });
}

/**
 * A grant whose tokens a connector credential mints (`settings.credential_id`, `email_address`, `scopes`, `tenant`):
 * the credential opened (another application's or an unknown one: 404), the first token minted (refused: a 400
 * naming `settings.credential_id`), then the grant connected with the mailbox `email_address`.
 */
async function connectWithCredential(
  state: OAuthState,
  principal: Principal,
  input: CreateGrantInput,
): Promise<{ grant: Grant; created: boolean }> {
  const provider = input.provider as 'google' | 'microsoft';
  const { credential_id: credentialId, email_address: email, scopes, tenant } = input.settings;
  if (typeof credentialId !== 'string' || typeof email !== 'string') {
    throw new AppError('invalid_request', 'settings.email_address: required with settings.credential_id.', {
      field: 'settings.email_address',
    });
  }
  const client = await connectorOf(state, principal, provider, 'and its credential first');
  const credential = await state.credentials.open(principal, provider, credentialId);
  const kind = appGrantKind(provider);
  const app: AppGrant = {
    kind,
    credentialId,
    email: email.toLowerCase(),
    scopes: scopes ?? (kind === 'app_only' ? [MICROSOFT_APP_SCOPE] : (input.scope ?? client.scope)),
    tenant: kind === 'app_only' ? tenant : undefined,
  };
  const refused = (refusal: ProviderRefusal) => {
    const why = `${refusal.oauthError}${refusal.description ? `: ${refusal.description}` : ''}`;
    return kind === 'service_account'
      ? `the provider refused the assertion of service account credential ${credentialId} for ${app.email} at ${client.endpoints.tokenUrl} (${why}); check the key and the account's domain-wide delegation for these scopes.`
      : `the provider refused the client credentials of credential ${credentialId} at ${tenantTokenUrl(client.endpoints.tokenUrl!, tenant)} (${why}); check the secret, the tenant and the app's access to ${app.email}.`;
  };
  const tokens = await refusedAs('settings.credential_id', refused, () => mintAppToken(state, client, credential, app));
  const { name, state: grantState, workspace_id } = input;
  return connectWithTokens(
    state,
    principal,
    { name, state: grantState, workspace_id, scope: app.scopes },
    client,
    tokens,
    { app },
  );
}
