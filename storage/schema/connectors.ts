/**
 * Connectors and their credentials (issue 38, Nylas v3 `/v3/connectors`): per application, at most one connector
 * per provider, holding the OAuth client (the secret sealed by the secret box), the default scopes and the settings
 * that override the provider's endpoints; and the connector's credentials (service accounts, admin consent,
 * connector overrides), their data sealed. The hosted OAuth flow reads both.
 */
import { foreignKey, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { applications } from './tenancy.js';

/** The settings of a connector that are not secret (endpoint overrides, `topic_name`, `tenant`), as on the wire. */
export type ConnectorSettingsJson = Record<string, string | number | boolean>;

/** The kinds of credential, as on the wire (the nylas SDK's `CredentialType`). */
export const CREDENTIAL_TYPES = ['adminconsent', 'serviceaccount', 'connector'] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

export const connectors = sqliteTable(
  'connectors',
  {
    applicationId: text('application_id')
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** `google`, `microsoft`, `imap`, … (the nylas SDK's `Provider`). */
    provider: text('provider').notNull(),
    name: text('name').notNull(),
    /** The OAuth client id at the provider; null for providers without OAuth (IMAP). */
    clientId: text('client_id'),
    /** The OAuth client secret, sealed by the secret box (src/secrets/secret-box.ts); never returned. */
    clientSecretSealed: text('client_secret_sealed'),
    /** Default scopes asked for when an authorization names none. */
    scope: text('scope', { mode: 'json' }).$type<string[]>().notNull(),
    /** Endpoint overrides and provider options, without the client id and secret. */
    settings: text('settings', { mode: 'json' }).$type<ConnectorSettingsJson>().notNull(),
    /** The credential used when an authorization names none (`connector_credentials.id`), or null. */
    activeCredentialId: text('active_credential_id'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [primaryKey({ columns: [table.applicationId, table.provider] })],
);

export const connectorCredentials = sqliteTable(
  'connector_credentials',
  {
    id: text('id').primaryKey(),
    applicationId: text('application_id').notNull(),
    provider: text('provider').notNull(),
    /** Unique among the connector's credentials. */
    name: text('name').notNull(),
    credentialType: text('credential_type', { enum: CREDENTIAL_TYPES }).notNull(),
    /** The credential data as JSON, sealed by the secret box; never returned. */
    dataSealed: text('data_sealed').notNull(),
    /** SHA-256 (hex) of the credential data's canonical JSON: what the wire shows as `hashed_data`. */
    hashedData: text('hashed_data').notNull(),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (table) => [
    foreignKey({
      columns: [table.applicationId, table.provider],
      foreignColumns: [connectors.applicationId, connectors.provider],
    }).onDelete('cascade'),
    uniqueIndex('connector_credentials_name_idx').on(table.applicationId, table.provider, table.name),
    index('connector_credentials_created_idx').on(table.applicationId, table.provider, table.createdAt),
  ],
);
