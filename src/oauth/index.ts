/**
 * @module oauth
 * The front door of src/oauth/: hosted OAuth (the browser's steps, the token endpoint, revocation, token info and
 * provider detection) and the provider tokens of OAuth grants.
 */
export type {
  BrowserStep,
  GrantAccessToken,
  GrantTokens,
  ImapFormAnswer,
  ImapFormPreset,
  ImapFormView,
  OAuthService,
} from './contracts.js';
export { CALLBACK_PATH } from './hosted-flow.js';
export { createOAuthService } from './oauth-service.js';
export { createProviderClient } from './provider-client.js';
