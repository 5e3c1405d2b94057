/**
 * Applications, their credentials, domains and workspaces: the tenancy tree every other row hangs from.
 */
import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/**
 * What `PATCH /v3/applications` sets beside the name, in wire form (snake_case): each key absent until first set, each
 * replaced whole when set again.
 */
export interface ApplicationSettingsColumn {
  branding?: Record<string, string>;
  hosted_authentication?: Record<string, string | number>;
  idp_settings?: Record<string, string>;
  domain?: string;
  /** Write-only: kept, never answered. */
  additional_settings?: Record<string, string | number | boolean>;
}

export const applications = sqliteTable('applications', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  plan: text('plan', { enum: ['trial', 'production'] }).notNull(),
  isDefault: integer('is_default', { mode: 'boolean' }).notNull().default(false),
  /** Branding beyond the name, hosted authentication, IdP settings, white-label domain, additional settings. */
  settings: text('settings', { mode: 'json' })
    .$type<ApplicationSettingsColumn>()
    .notNull()
    .default(sql`'{}'`),
  /**
   * A test-mode application's clock (issue 40, item 8): unix milliseconds at which it stands, moved only by
   * `POST /v3/test-clock/advance`, never backwards. Null: a production application, on real time. Set only when the
   * application is created (`agentpost apps create --test`), never on an existing one.
   */
  testClockAt: integer('test_clock_at'),
  createdAt: integer('created_at').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** First characters of the key, shown in listings so a person can tell keys apart. */
    prefix: text('prefix').notNull(),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    keyHash: text('key_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
    /** What the key reaches (`{workspace_ids?, grant_ids?}`); null: the whole application. */
    scope: text('scope', { mode: 'json' }).$type<{
      workspace_ids?: string[] | undefined;
      grant_ids?: string[] | undefined;
    }>(),
    /** What the key may do (permission names); null: everything within its scope. */
    permissions: text('permissions', { mode: 'json' }).$type<string[]>(),
    /** Unix seconds after which the key is refused; null: never. */
    expiresAt: integer('expires_at'),
    /** When the key last authenticated a request (written at most once a minute per key). */
    lastUsedAt: integer('last_used_at'),
    /** The key that made this one (null: the CLI, the bootstrap or AGENTPOST_API_KEY). */
    createdBy: text('created_by'),
    /**
     * An agent's key (issue 37): its sends are agent sends, as the MCP and AI SDK faces' are, whatever face they come
     * through (the per-thread budget counts them; an automated message is not answered). Keys it makes are too.
     */
    agent: integer('agent', { mode: 'boolean' }).notNull().default(false),
  },
  (table) => [
    uniqueIndex('api_keys_hash_idx').on(table.keyHash),
    index('api_keys_application_idx').on(table.applicationId),
  ],
);

/**
 * Dashboard sessions (docs/dashboard.md): a person signed in with an API key. Only the SHA-256 of the session id is
 * kept (a copy of the table does not sign anyone in), and never the key: each request re-reads the key by id, so a
 * revoked or expired key ends its sessions at once. A table, not memory, so that any HTTP process answers any request.
 */
export const dashboardSessions = sqliteTable(
  'dashboard_sessions',
  {
    /** SHA-256 of the session id (the cookie's value), hex. */
    idHash: text('id_hash').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
    /** Unix seconds after which the session is refused (and deleted at the next sign-in). */
    expiresAt: integer('expires_at').notNull(),
  },
  (table) => [index('dashboard_sessions_expiry_idx').on(table.expiresAt)],
);

export const serviceAccounts = sqliteTable(
  'service_accounts',
  {
    /** The key id the SDK sends as `X-Nylas-Kid`. */
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    publicKeyPem: text('public_key_pem').notNull(),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (table) => [index('service_accounts_application_idx').on(table.applicationId)],
);

/** Nonces seen on signed requests, kept until their timestamp window has passed, so none is accepted twice. */
export const serviceAccountNonces = sqliteTable(
  'service_account_nonces',
  {
    serviceAccountId: text('service_account_id').notNull(),
    nonce: text('nonce').notNull(),
    expiresAt: integer('expires_at').notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.serviceAccountId, table.nonce] }),
    index('service_account_nonces_expiry_idx').on(table.expiresAt),
  ],
);

export const domains = sqliteTable(
  'domains',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** Lower-cased; one application owns an address, so inbound mail routes unambiguously. */
    domainAddress: text('domain_address').notNull(),
    /** A trial subdomain of the service's own domain: usable at once, no DNS records. */
    branded: integer('branded', { mode: 'boolean' }).notNull().default(false),
    region: text('region').notNull().default('us'),
    verifiedOwnership: integer('verified_ownership', { mode: 'boolean' }).notNull().default(false),
    verifiedMx: integer('verified_mx', { mode: 'boolean' }).notNull().default(false),
    verifiedSpf: integer('verified_spf', { mode: 'boolean' }).notNull().default(false),
    verifiedDkim: integer('verified_dkim', { mode: 'boolean' }).notNull().default(false),
    verifiedFeedback: integer('verified_feedback', { mode: 'boolean' }).notNull().default(false),
    verifiedDmarc: integer('verified_dmarc', { mode: 'boolean' }).notNull().default(false),
    verifiedArc: integer('verified_arc', { mode: 'boolean' }).notNull().default(false),
    /** Value the owner publishes in a TXT record to prove ownership. */
    verificationToken: text('verification_token').notNull(),
    dkimSelector: text('dkim_selector'),
    dkimPrivateKeyPem: text('dkim_private_key_pem'),
    dkimPublicKey: text('dkim_public_key'),
    /** The warm-up ramp applies: daily sends from this domain are capped, rising over four weeks from {@link warmUpStartedAt}. */
    warmUp: integer('warm_up', { mode: 'boolean' }).notNull().default(false),
    /** Unix seconds at which the ramp started (day 0). */
    warmUpStartedAt: integer('warm_up_started_at'),
    /**
     * Unix seconds at which sending from the domain was paused (its bounce or complaint rate, over all its senders,
     * reached a threshold: src/deliverability/sending-health.ts); null while it sends. Every grant on it is refused.
     */
    sendingPausedAt: integer('sending_paused_at'),
    sendingPausedReason: text('sending_paused_reason'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    uniqueIndex('domains_address_idx').on(table.domainAddress),
    index('domains_application_idx').on(table.applicationId),
  ],
);

export const workspaces = sqliteTable(
  'workspaces',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    domain: text('domain'),
    autoGroup: integer('auto_group', { mode: 'boolean' }).notNull().default(false),
    isDefault: integer('is_default', { mode: 'boolean' }).notNull().default(false),
    policyId: text('policy_id'),
    ruleIds: text('rule_ids', { mode: 'json' })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [index('workspaces_application_idx').on(table.applicationId, table.domain)],
);

/**
 * An application's OAuth redirect (callback) URIs, as the Nylas Applications API manages them
 * (`/v3/applications/redirect-uris`). Kept for wire compatibility; the hosted OAuth flow reads them.
 */
export const redirectUris = sqliteTable(
  'redirect_uris',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    platform: text('platform', { enum: ['web', 'js', 'ios', 'android', 'desktop'] }).notNull(),
    /** Platform settings in wire form (`origin`, `bundle_id`, …). */
    settings: text('settings', { mode: 'json' })
      .$type<Record<string, string | undefined>>()
      .notNull()
      .default(sql`'{}'`),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [index('redirect_uris_application_idx').on(table.applicationId)],
);
