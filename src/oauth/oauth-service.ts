/**
 * @module oauth/oauth-service
 * Hosted OAuth (Nylas v3 `/v3/connect/*`, `/v3/providers/detect`): the browser's steps (./hosted-flow.ts), the token
 * endpoint, revocation and token info (./token-endpoint.ts), provider detection (./detect.ts), and the provider
 * tokens of OAuth grants (./grant-tokens.ts).
 */
import { AuthorizeQuerySchema } from '../schemas/oauth.js';
import type { GrantTokens, OAuthService } from './contracts.js';
import { detectProvider } from './detect.js';
import { createGrantTokens } from './grant-tokens.js';
import { authorize, callback } from './hosted-flow.js';
import { connectCustom } from './custom-tokens.js';
import { submitImapForm } from './imap-form.js';
import type { OAuthState } from './oauth-state.js';
import { revoke, token, tokenInfo } from './token-endpoint.js';

/** Creates the hosted OAuth service and the grant token keeper over the same state. */
export function createOAuthService(state: OAuthState): { oauth: OAuthService; grantTokens: GrantTokens } {
  const oauth: OAuthService = {
    authorize: (query, origin) => authorize(state, AuthorizeQuerySchema.parse(query), origin),
    callback: (query, binding) => callback(state, query, binding),
    submitImapForm: (fields, binding) => submitImapForm(state, fields, binding),
    connectCustom: (principal, input) => connectCustom(state, principal, input),
    token: (body, bearer) => token(state, body, bearer),
    revoke: (principal, value) => revoke(state, principal, value),
    tokenInfo: (principal, input) => tokenInfo(state, principal, input),
    detect: (input) =>
      detectProvider(input.email, input.all_provider_types ?? false, (domain) => state.dns.resolveMx(domain)),
  };
  return { oauth, grantTokens: createGrantTokens(state) };
}
