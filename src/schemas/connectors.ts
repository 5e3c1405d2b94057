/**
 * @module schemas/connectors
 * Connectors and their credentials on the wire (`/v3/connectors`, `/v3/connectors/{provider}/creds`), as the nylas
 * SDK's `connectors` and `connectors.credentials` resources send and read them (`models/connectors.ts`,
 * `models/credentials.ts`). Secrets (`settings.client_secret`, `credential_data`) are write-only.
 */
import { z } from 'zod';
import { IdSchema, LimitSchema, PageTokenSchema, UnixSecondsSchema } from './common.js';

/** Every provider the nylas SDK's `Provider` type names: the one list every check reads. */
export const CONNECTOR_PROVIDERS = [
  'google',
  'microsoft',
  'imap',
  'icloud',
  'virtual-calendar',
  'ews',
  'zoom',
  'nylas',
] as const;
export type ConnectorProvider = (typeof CONNECTOR_PROVIDERS)[number];

/** A provider from the list; a wrong value is named with the accepted ones. */
export const ConnectorProviderSchema = z
  .enum(CONNECTOR_PROVIDERS, {
    error: (issue) =>
      `provider: ${JSON.stringify(issue.input)} is not a provider; use one of: ${CONNECTOR_PROVIDERS.join(', ')}`,
  })
  .describe('The provider of the connector: google, microsoft, imap, icloud, virtual-calendar, ews, zoom or nylas');

/** The credential kinds (the SDK's `CredentialType`). */
export const CREDENTIAL_TYPES = ['adminconsent', 'serviceaccount', 'connector'] as const;

export const CredentialTypeSchema = z
  .enum(CREDENTIAL_TYPES, {
    error: (issue) =>
      `credential_type: ${JSON.stringify(issue.input)} is not a credential type; use one of: ${CREDENTIAL_TYPES.join(', ')}`,
  })
  .describe(
    'adminconsent: a Microsoft app for admin consent (client_id, client_secret); serviceaccount: a Google service account (private_key_id, private_key, client_email); connector: values overriding the connector (client_id, client_secret, …)',
  );

const EndpointUrlSchema = z.url({ protocol: /^https?$/ }).max(2048);
const HostSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9.:[\]-]+$/, 'a host name or an IP address');
const PortSchema = z.number().int().min(1).max(65_535);

/**
 * The settings a connector takes: the OAuth client, provider options, and overrides of the provider's endpoints
 * (each defaults to the real provider's; tests point them at loopback servers). Unknown keys are refused, so a
 * misspelt override is not silently ignored.
 */
export const ConnectorSettingsInputSchema = z
  .strictObject({
    client_id: z.string().min(1).max(512).optional().describe('OAuth client id at the provider (google, microsoft)'),
    client_secret: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .describe('OAuth client secret at the provider: sealed at rest, never returned'),
    topic_name: z.string().max(512).optional().describe('Google Pub/Sub topic name (kept; not used by this service)'),
    tenant: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9.-]+$/, 'a tenant id or domain')
      .optional()
      .describe('Microsoft tenant (id or domain) in the authorization and token URLs; default "common"'),
    authorization_url: EndpointUrlSchema.optional().describe("The provider's OAuth authorization endpoint"),
    token_url: EndpointUrlSchema.optional().describe("The provider's OAuth token endpoint"),
    revocation_url: EndpointUrlSchema.optional().describe("The provider's OAuth token revocation endpoint"),
    userinfo_url: EndpointUrlSchema.optional().describe("The provider's OpenID Connect userinfo endpoint"),
    imap_host: HostSchema.optional().describe('IMAP server of the accounts'),
    imap_port: PortSchema.optional().describe('IMAP port (993: implicit TLS; otherwise STARTTLS)'),
    smtp_host: HostSchema.optional().describe('SMTP submission server of the accounts'),
    smtp_port: PortSchema.optional().describe('SMTP port (465: implicit TLS; otherwise STARTTLS)'),
    caldav_url: EndpointUrlSchema.optional().describe('CalDAV base URL of the accounts'),
    carddav_url: EndpointUrlSchema.optional().describe('CardDAV base URL of the accounts'),
    allow_insecure_tls: z
      .boolean()
      .optional()
      .describe('Accept TLS certificates that fail verification (self-signed test servers); default false'),
  })
  .describe(
    'OAuth client (client_id, client_secret), provider options (topic_name, tenant) and endpoint overrides; each endpoint defaults to the real provider',
  );
export type ConnectorSettingsInput = z.infer<typeof ConnectorSettingsInputSchema>;

const ScopeSchema = z
  .array(z.string().min(1).max(512))
  .max(100)
  .describe('Default OAuth scopes asked for when an authorization names none');

export const ConnectorSchema = z
  .object({
    provider: z.string().describe('The provider'),
    name: z.string().describe('Your name for the connector'),
    settings: z
      .record(z.string(), z.unknown())
      .describe('client_id, provider options and endpoint overrides; client_secret is never returned'),
    scope: z.array(z.string()).describe('Default OAuth scopes'),
    active_credential_id: z.string().optional().describe('The credential used when an authorization names none'),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Connector' });
export type Connector = z.infer<typeof ConnectorSchema>;

const NameSchema = z.string().min(1).max(256);

export const CreateConnectorInputSchema = z
  .object({
    provider: ConnectorProviderSchema,
    name: NameSchema.optional().describe('Your name for the connector (default: the provider)'),
    settings: ConnectorSettingsInputSchema.optional(),
    scope: ScopeSchema.optional(),
  })
  .meta({ id: 'CreateConnectorInput' });
export type CreateConnectorInput = z.infer<typeof CreateConnectorInputSchema>;

export const ConnectorRefInputSchema = z
  .object({ provider: ConnectorProviderSchema })
  .meta({ id: 'ConnectorRefInput' });
export type ConnectorRefInput = z.infer<typeof ConnectorRefInputSchema>;

export const UpdateConnectorInputSchema = z
  .object({
    provider: ConnectorProviderSchema,
    name: NameSchema.optional().describe('A new name'),
    settings: ConnectorSettingsInputSchema.optional().describe(
      'Replaces the settings wholesale, except client_id and client_secret, which are kept unless given',
    ),
    scope: ScopeSchema.optional(),
    active_credential_id: IdSchema.nullable()
      .optional()
      .describe("One of the connector's credentials, used when an authorization names none; null clears it"),
  })
  .meta({ id: 'UpdateConnectorInput' });
export type UpdateConnectorInput = z.infer<typeof UpdateConnectorInputSchema>;

export const ListConnectorsInputSchema = z
  .object({ limit: LimitSchema, page_token: PageTokenSchema })
  .meta({ id: 'ListConnectorsInput' });
export type ListConnectorsInput = z.infer<typeof ListConnectorsInputSchema>;

/** Limits of `credential_data`: flat pairs, enough for a service account's PEM key. */
export const CREDENTIAL_DATA_LIMITS = { keys: 32, keyLength: 128, valueLength: 8192 } as const;

export const CredentialDataSchema = z
  .record(
    z.string().min(1).max(CREDENTIAL_DATA_LIMITS.keyLength),
    z.union([z.string().max(CREDENTIAL_DATA_LIMITS.valueLength), z.number(), z.boolean()], {
      error: `credential_data values are strings of at most ${CREDENTIAL_DATA_LIMITS.valueLength} characters, numbers or booleans (no nested objects)`,
    }),
  )
  .refine((value) => Object.keys(value).length <= CREDENTIAL_DATA_LIMITS.keys, {
    message: `credential_data has at most ${CREDENTIAL_DATA_LIMITS.keys} keys`,
  })
  .describe(
    'The secret data of the credential (sealed at rest, never returned): serviceaccount needs private_key_id, private_key and client_email; adminconsent needs client_id and client_secret',
  );
export type CredentialData = z.infer<typeof CredentialDataSchema>;

export const CredentialSchema = z
  .object({
    id: z.string().describe('Credential id'),
    name: z.string().describe('Credential name, unique within the connector'),
    credential_type: z.enum(CREDENTIAL_TYPES).describe('The kind of credential'),
    hashed_data: z
      .string()
      .describe('SHA-256 (hex) of the credential data, to tell versions apart; the data itself is never returned'),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Credential' });
export type Credential = z.infer<typeof CredentialSchema>;

const CredentialIdSchema = IdSchema.describe('Credential id');

export const CreateCredentialInputSchema = z
  .object({
    provider: ConnectorProviderSchema,
    name: NameSchema.describe('Credential name, unique within the connector'),
    credential_type: CredentialTypeSchema,
    credential_data: CredentialDataSchema,
  })
  .meta({ id: 'CreateCredentialInput' });
export type CreateCredentialInput = z.infer<typeof CreateCredentialInputSchema>;

export const CredentialRefInputSchema = z
  .object({ provider: ConnectorProviderSchema, credential_id: CredentialIdSchema })
  .meta({ id: 'CredentialRefInput' });
export type CredentialRefInput = z.infer<typeof CredentialRefInputSchema>;

export const UpdateCredentialInputSchema = z
  .object({
    provider: ConnectorProviderSchema,
    credential_id: CredentialIdSchema,
    name: NameSchema.optional().describe('A new name'),
    credential_data: CredentialDataSchema.optional().describe(
      'Replaces the data wholesale (checked as on create for the credential type)',
    ),
  })
  .meta({ id: 'UpdateCredentialInput' });
export type UpdateCredentialInput = z.infer<typeof UpdateCredentialInputSchema>;

/** The sort keys of credential lists; the SDK sends its camelCase names as values, so both spellings are taken. */
export const CREDENTIAL_SORT_KEYS = ['created_at', 'updated_at', 'createdAt', 'updatedAt'] as const;

export const ListCredentialsInputSchema = z
  .object({
    provider: ConnectorProviderSchema,
    limit: LimitSchema,
    offset: z.number().int().min(0).max(1_000_000).optional().describe('Items to skip (default 0)'),
    sort_by: z.enum(CREDENTIAL_SORT_KEYS).optional().describe('created_at (default) or updated_at'),
    order_by: z.enum(['asc', 'desc']).optional().describe('asc or desc (default)'),
    page_token: PageTokenSchema,
  })
  .meta({ id: 'ListCredentialsInput' });
export type ListCredentialsInput = z.infer<typeof ListCredentialsInputSchema>;
