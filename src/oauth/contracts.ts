/**
 * @module oauth/contracts
 * The hosted OAuth area's declared interface (Nylas v3 `/v3/connect/*`): the browser's two steps, the token
 * endpoint, revocation, token info and provider detection; and the provider tokens of OAuth grants that the mail of
 * those grants logs in with.
 */
import type { Principal } from '../access.js';
import type {
  AuthorizeQuery,
  DetectProvider,
  DetectProviderInput,
  TokenAnswer,
  TokenInfo,
  TokenInfoInput,
} from '../schemas/oauth.js';

/** Where the browser goes next, and the value of the cookie that binds the flow to it (set on the first step). */
export interface BrowserStep {
  location: string;
  binding?: string;
}

/** What createOAuthService() returns (src/oauth/oauth-service.ts). */
export interface OAuthService {
  /**
   * `GET /v3/connect/auth`: checks the application and its redirect URI (a 400 for either: the browser is never sent
   * to an unregistered address), then sends the browser to the provider's consent page; any later problem goes back
   * to the redirect URI as an OAuth error (`error`, `error_description`, `state`). `origin`: this service's address as
   * the browser reached it (the callback's, unless AGENTPOST_PUBLIC_URL is set).
   */
  authorize(query: AuthorizeQuery, origin: string): Promise<BrowserStep>;
  /**
   * `GET /v3/connect/callback`: the provider's answer. Exchanges its code, learns the account's address, creates or
   * re-authenticates the grant, and sends the browser to the application's redirect URI with a code of this service
   * and the application's `state`.
   */
  callback(query: Record<string, string>, binding: string | undefined): Promise<BrowserStep>;
  /** `POST /v3/connect/token`; `bearer`: the `Authorization` header's token (the API key), if any. */
  token(body: unknown, bearer: string | undefined): Promise<TokenAnswer>;
  /** `POST /v3/connect/revoke`: revokes a token this service issued to the application (unknown tokens: no error). */
  revoke(principal: Principal, token: string): Promise<void>;
  /** `GET /v3/connect/tokeninfo`: what an access or ID token issued to the application says. */
  tokenInfo(principal: Principal, input: TokenInfoInput): Promise<TokenInfo>;
  /** `POST /v3/providers/detect`: the provider of an address (by its domain, then its MX hosts). */
  detect(input: DetectProviderInput): Promise<DetectProvider>;
}

/** A provider's access token for a grant's mail, and its address (the login name of XOAUTH2). */
export interface GrantAccessToken {
  email: string;
  accessToken: string;
  /** Unix ms. */
  expiresAt: number;
}

/** The provider tokens of OAuth grants, kept fresh (src/oauth/grant-tokens.ts). */
export interface GrantTokens {
  /**
   * The grant's access token, refreshed first when it expires within a minute (or `force`: the server refused it).
   * A refresh the provider refuses turns the grant `invalid`, records `grant.expired` and throws `unauthorized`.
   */
  accessToken(grantId: string, options?: { force?: boolean }): Promise<GrantAccessToken>;
  /** Revokes the grant's refresh token at the provider, where the provider has a revocation endpoint. */
  revokeAtProvider(grantId: string): Promise<boolean>;
}
