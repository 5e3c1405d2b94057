/**
 * Hosted OAuth (issue 38, Nylas v3 `/v3/connect/*`): the provider's tokens of an OAuth grant (the refresh token and
 * the current access token sealed by the secret box), and the codes and tokens this service issued to applications
 * (kept as SHA-256 hashes, never in clear).
 */
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { grants } from './grants.js';

/**
 * How a grant's access tokens are minted: with its refresh token (hosted OAuth, a refresh token brought to
 * `connect/custom`), a signed assertion of a Google service account (domain-wide delegation, RFC 7523), or the client
 * credentials of a Microsoft app with admin consent (app-only). The latter two use the grant's `credential_id`.
 */
export const TOKEN_KINDS = ['refresh_token', 'service_account', 'app_only'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** The provider tokens of a grant connected through hosted OAuth (or `connect/custom`). */
export const oauthGrantTokens = sqliteTable('oauth_grant_tokens', {
  grantId: text('grant_id')
    .primaryKey()
    .references(() => grants.id, { onDelete: 'cascade' }),
  /** The connector's provider (`google`, `microsoft`): whose token endpoint refreshes it. */
  provider: text('provider').notNull(),
  /** The provider's refresh token, sealed; null when the provider gave none (online access). */
  refreshTokenSealed: text('refresh_token_sealed'),
  /** The provider's current access token, sealed. */
  accessTokenSealed: text('access_token_sealed').notNull(),
  /** Unix ms the access token expires at. */
  accessExpiresAt: integer('access_expires_at').notNull(),
  /** The scopes the provider granted. */
  scope: text('scope', { mode: 'json' }).$type<string[]>().notNull(),
  /** The account's subject at the provider (`sub`), when known. */
  subject: text('subject'),
  /** How its access tokens are minted (see TOKEN_KINDS). */
  kind: text('kind', { enum: TOKEN_KINDS }).notNull().default('refresh_token'),
  /** An app-only grant's Microsoft tenant (its token URL's), when one was given. */
  tenant: text('tenant'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/** What an issued token is. */
export const ISSUED_TOKEN_KINDS = ['code', 'access', 'refresh', 'id'] as const;
export type IssuedTokenKind = (typeof ISSUED_TOKEN_KINDS)[number];

/**
 * The codes and tokens issued to applications by `/v3/connect/callback` and `/v3/connect/token`: an authorization
 * code (one use, minutes), an access token (an hour), a refresh token (until revoked), and the provider's ID token as
 * handed on (for `tokeninfo`).
 */
export const oauthIssuedTokens = sqliteTable(
  'oauth_issued_tokens',
  {
    /** SHA-256 (hex) of the token. */
    tokenHash: text('token_hash').primaryKey(),
    kind: text('kind', { enum: ISSUED_TOKEN_KINDS }).notNull(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id, { onDelete: 'cascade' }),
    /** A code's redirect URI (the token request must name the same). */
    redirectUri: text('redirect_uri'),
    /** A code's PKCE challenge and method (`plain`, `s256`), when the authorization had one. */
    codeChallenge: text('code_challenge'),
    codeChallengeMethod: text('code_challenge_method'),
    /** A code's wish for a refresh token (`access_type=offline`). */
    offline: integer('offline', { mode: 'boolean' }).notNull().default(false),
    /** The provider's ID token a code hands on at its exchange (sealed), when the provider gave one. */
    idTokenSealed: text('id_token_sealed'),
    scope: text('scope', { mode: 'json' }).$type<string[]>().notNull(),
    /** Unix ms; null: until revoked. */
    expiresAt: integer('expires_at'),
    /** Unix ms a code was exchanged, or a token revoked. */
    usedAt: integer('used_at'),
    createdAt: integer('created_at').notNull(),
  },
  (table) => [index('oauth_issued_tokens_grant_idx').on(table.grantId)],
);
