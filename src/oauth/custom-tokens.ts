/**
 * @module oauth/custom-tokens
 * `POST /v3/connect/custom` with `provider` `google` or `microsoft` and `settings.refresh_token` (Nylas'
 * bring-your-own token): the application obtained the refresh token itself, from the client of its connector. It is
 * tried at once at the connector's `token_url` (a refusal is a 400 naming the field, and nothing is stored); the
 * account's address comes from the answer's ID token, else from `userinfo_url`; then the grant is connected as the
 * hosted sign-in's callback connects it (./hosted-flow.ts `connectWithTokens`), and kept fresh the same way.
 */
import type { Principal } from '../access.js';
import type { ConnectorClient } from '../connectors/index.js';
import { AppError } from '../errors.js';
import type { ConnectorProvider } from '../schemas/connectors.js';
import type { CreateGrantInput, Grant } from '../schemas/grants.js';
import { connectWithTokens } from './hosted-flow.js';
import type { OAuthState } from './oauth-state.js';
import { ProviderRefusal, type ProviderTokens } from './provider-client.js';

/** Providers whose accounts connect with a refresh token. */
export const TOKEN_PROVIDERS: ReadonlySet<string> = new Set(['google', 'microsoft']);

/** See OAuthService.connectCustom. */
export async function connectCustom(
  state: OAuthState,
  principal: Principal,
  input: CreateGrantInput,
): Promise<{ grant: Grant; created: boolean }> {
  const provider = input.provider;
  const refreshToken = input.settings.refresh_token;
  if (!TOKEN_PROVIDERS.has(provider) || typeof refreshToken !== 'string' || refreshToken === '') {
    throw new AppError('invalid_request', 'settings.refresh_token: required for provider google or microsoft.', {
      field: 'settings.refresh_token',
    });
  }
  let client: ConnectorClient;
  try {
    client = await state.connectors.client(principal, provider as ConnectorProvider);
  } catch {
    throw new AppError(
      'invalid_request',
      `provider: the application has no ${provider} connector; create it (POST /v3/connectors) with the client the refresh token was issued to.`,
      { field: 'provider' },
    );
  }
  if (!client.endpoints.tokenUrl || !client.clientId || !client.clientSecret) {
    throw new AppError(
      'invalid_request',
      `provider: the ${provider} connector has no client_id, client_secret or token_url.`,
    );
  }
  let tokens: ProviderTokens;
  try {
    tokens = await state.provider.refresh(client, refreshToken);
  } catch (error) {
    if (error instanceof ProviderRefusal) {
      throw new AppError(
        'invalid_request',
        `settings.refresh_token: the provider refused it at ${client.endpoints.tokenUrl} (${error.oauthError}); obtain a new one from the client of the ${provider} connector.`,
        { field: 'settings.refresh_token' },
      );
    }
    throw error;
  }
  const { name, state: grantState, workspace_id, scope } = input;
  return connectWithTokens(
    state,
    principal,
    { name, state: grantState, workspace_id, scope },
    client,
    tokens,
    refreshToken,
  );
}
