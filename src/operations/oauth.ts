/**
 * Hosted OAuth operations that answer JSON in the Nylas envelope (`GET /v3/connect/tokeninfo`,
 * `POST /v3/providers/detect`), as the nylas SDK's `auth` resource calls them. The browser's steps, the token
 * endpoint and revocation speak OAuth's own wire (redirects, unenveloped answers, OAuth errors): server/routes/connect.ts.
 * Application plumbing, so HTTP only (not agent tools).
 */
import {
  DetectProviderInputSchema,
  DetectProviderSchema,
  TokenInfoInputSchema,
  TokenInfoSchema,
} from '../schemas/oauth.js';
import { defineOperation } from './define-operation.js';

export const getTokenInfo = defineOperation({
  name: 'get_token_info',
  title: 'Get token info',
  description:
    'What an access token or ID token given by POST /v3/connect/token says: issuer, audience, subject, address, issued and expiry times. A token of another application, expired or revoked is a 404.',
  input: TokenInfoInputSchema,
  output: TokenInfoSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/connect/tokeninfo' },
  tool: false,
  run: (core, input, { principal }) => core.accounts.oauth.tokenInfo(principal, input),
});

export const detectProvider = defineOperation({
  name: 'detect_provider',
  title: 'Detect the provider of an address',
  description:
    'Names the provider of an email address (google, microsoft; with all_provider_types also icloud, yahoo and imap): by its domain, then by its MX hosts. detected is false when none is recognised.',
  input: DetectProviderInputSchema,
  output: DetectProviderSchema,
  hints: { readOnly: true, openWorld: true },
  http: { method: 'POST', path: '/providers/detect' },
  tool: false,
  run: (core, input) => core.accounts.oauth.detect(input),
});
