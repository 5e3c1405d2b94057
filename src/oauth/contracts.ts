/**
 * @module oauth/contracts
 * The hosted OAuth area's declared interface (Nylas v3 `/v3/connect/*`): the browser's two steps, the token
 * endpoint, revocation, token info and provider detection; and the provider tokens of OAuth grants that the mail of
 * those grants logs in with.
 */
import type { Principal } from '../access.js';
import type { CreateGrantInput, Grant } from '../schemas/grants.js';
import type {
  AuthorizeQuery,
  DetectProvider,
  DetectProviderInput,
  TokenAnswer,
  TokenInfo,
  TokenInfoInput,
} from '../schemas/oauth.js';

/**
 * Where the browser goes next, and the value of the cookie that binds the flow to it (set on the first step); or, for
 * an IMAP account, the hosted login form to show (./imap-form.ts).
 */
export type BrowserStep = { location: string; binding?: string } | { form: ImapFormView; binding: string };

/** A preset of the hosted IMAP form: a provider's servers (blank fields of the form take these). */
export interface ImapFormPreset {
  id: string;
  label: string;
  /** Address domains that choose it when `login_hint` is given. */
  domains: readonly string[];
  imap?: { host: string; port: number };
  smtp?: { host: string; port: number };
  caldavUrl?: string;
  carddavUrl?: string;
  /** One line shown under the choice (which password to use). */
  hint: string;
}

/** What the hosted IMAP form shows: the sealed flow and CSRF token for its hidden fields, the values typed so far. */
export interface ImapFormView {
  /** The sealed flow (hidden field `flow`). */
  flow: string;
  /** The CSRF token of the flow (hidden field `csrf_token`). */
  csrf: string;
  /** The preset chosen. */
  preset: string;
  presets: readonly ImapFormPreset[];
  /** The text fields as typed (never the password). */
  values: Readonly<Record<string, string>>;
  /** Why the last post did not connect the account. */
  error?: string;
  /** The application's redirect URI (the page's Content-Security-Policy lets the form end there). */
  redirectUri: string;
}

/** The answer to a post of the hosted IMAP form: on to the redirect URI, or the form again with its error. */
/** Where the browser goes next, or the form shown again with why the post was refused (a failed sign-in). */
export type ImapFormAnswer = { location: string } | { form: ImapFormView };

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
  callback(query: Record<string, string>, binding: string | undefined): Promise<{ location: string }>;
  /**
   * `POST /v3/connect/imap`: the hosted IMAP form posted (`flow`, `csrf_token`, `action`, `preset`, `email`,
   * `username`, `password`, the servers). Refuses a post from another browser (400) or without the flow's CSRF token
   * (403); `action=cancel` goes to the redirect URI with `access_denied`; otherwise the settings go through
   * `POST /v3/connect/custom`'s schema and `grants.create`, and a refusal shows the form again with the reason.
   */
  submitImapForm(fields: Record<string, string>, binding: string | undefined): Promise<ImapFormAnswer>;
  /**
   * `POST /v3/connect/custom` with provider `google` or `microsoft` and `settings.refresh_token` (bring-your-own
   * token), or `settings.credential_id` with `email_address` (a Google service account, a Microsoft app-only
   * credential: ./app-tokens.ts): the first token obtained at the connector's `token_url` (a refusal is a 400), the
   * account connected as the hosted callback connects it (created, or the application's grant of the same address
   * re-authenticated).
   */
  connectCustom(principal: Principal, input: CreateGrantInput): Promise<{ grant: Grant; created: boolean }>;
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
   * The grant's access token, minted again first (refresh token, service account or app credential) when it expires
   * within a minute (or `force`: the server refused it). A refusal of the provider, or the grant's credential deleted,
   * turns the grant `invalid`, records `grant.expired` and throws `unauthorized`.
   */
  accessToken(grantId: string, options?: { force?: boolean }): Promise<GrantAccessToken>;
  /** Revokes the grant's refresh token at the provider, where the provider has a revocation endpoint. */
  revokeAtProvider(grantId: string): Promise<boolean>;
}
