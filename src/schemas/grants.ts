/**
 * @module schemas/grants
 * Grants (Agent Accounts) on the wire, as in Nylas v3 `models/grants.ts`.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, UnixSecondsSchema } from './common.js';
import { OversightModeSchema } from './oversight.js';

/** Provider values of a hosted Agent Account: `nylas` (the SDK) and `hosted` (the spec) name the same thing. */
export const HostedProviderSchema = z
  .enum(['nylas', 'hosted'])
  .describe('Agent Account provider: "nylas" (Nylas SDK) or "hosted" (both accepted)');

/** Extension: the grant's sending state (paused by the service on a bounce or complaint threshold). */
export const GrantSendingSchema = z
  .object({
    status: z
      .enum(['active', 'paused'])
      .describe(
        '"paused": sends are refused (403 sending_paused) until resumed with PATCH /v3/grants/{id} {"sending": {"status": "active"}}',
      ),
    reason: z.string().optional().describe('Why sending is paused: the rate, its threshold and the window'),
    paused_at: UnixSecondsSchema.optional().describe('When sending was paused'),
  })
  .describe(
    'Extension: whether this grant may send. The service pauses it when its hard-bounce or complaint rate crosses a threshold',
  );

export const GrantSchema = z
  .object({
    id: z.string().describe('Grant id: use it in every /v3/grants/{grant_id}/… path'),
    provider: z
      .string()
      .describe('"nylas" for Agent Accounts hosted by this service, "imap" for a connected IMAP/SMTP mailbox'),
    grant_status: z
      .enum(['valid', 'invalid'])
      .describe(
        'Whether the grant can be used; "invalid": a connected account\'s server refuses its credentials (connect it again)',
      ),
    email: z.string().describe('The mailbox address'),
    name: z.string().optional().describe('Display name'),
    state: z.string().optional().describe('The opaque state passed when the grant was created'),
    scope: z.array(z.string()).describe('Granted scopes (empty for Agent Accounts: they can do everything)'),
    settings: z
      .record(z.string(), z.unknown())
      .describe(
        'Provider settings; secrets are write-only and never returned. imap: the servers, usernames, security, sync_days, allow_insecure_tls and the sync progress (extension settings.sync)',
      ),
    workspace_id: z.string().optional().describe('Workspace the Agent Account belongs to'),
    blocked: z.boolean().describe('True when sending is blocked for this grant'),
    sending: GrantSendingSchema,
    suspended_at: UnixSecondsSchema.optional().describe(
      'Extension: when the grant was suspended (the kill switch): no send, scheduled send or write until POST /v3/grants/{id}/resume. Absent while not suspended',
    ),
    suspended_reason: z.string().optional().describe('Extension: why the grant is suspended, as every refusal says'),
    oversight_mode: OversightModeSchema.nullable().describe(
      "Extension: the grant's own oversight mode (docs/oversight.md); null follows its workspace's policy",
    ),
    credential_id: z
      .string()
      .optional()
      .describe(
        "google, microsoft: the connector credential whose service account or app mints this grant's tokens (connected with settings.credential_id)",
      ),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Grant' });
export type Grant = z.infer<typeof GrantSchema>;

/** `settings.app_password`: 18–40 printable ASCII characters with an upper, a lower and a digit. */
export const AppPasswordSchema = z
  .string()
  .min(18)
  .max(40)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
  .regex(/[A-Z]/, 'at least one upper-case letter')
  .regex(/[a-z]/, 'at least one lower-case letter')
  .regex(/[0-9]/, 'at least one digit')
  .describe('Password for IMAP/SMTP login with the address as user name; write-only');

/** The settings of a hosted Agent Account (`provider: "nylas"` or `"hosted"`). */
export const HostedGrantSettingsSchema = z
  .object({
    email: z.email().max(320).describe('Address of the new mailbox, on a registered domain of this application'),
    app_password: AppPasswordSchema.optional(),
    policy_id: IdSchema.optional().describe('Policy applied to this account'),
  })
  .loose();
export type HostedGrantSettings = z.infer<typeof HostedGrantSettingsSchema>;

/** A host name or IP address literal: no spaces, no scheme, no port. */
const HostSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9._:[\]-]+$/, 'a host name or IP address, without scheme or port');

/** A TCP port. */
const PortSchema = z.number().int().min(1).max(65_535);

/**
 * How a connection is secured: `tls` is implicit TLS from the first byte (IMAP 993, SMTP 465); `starttls` connects
 * in clear and upgrades with STARTTLS when the server offers it (IMAP 143, SMTP 587).
 */
export const ConnectionSecuritySchema = z.enum(['tls', 'starttls']);
export type ConnectionSecurity = z.infer<typeof ConnectionSecuritySchema>;

/** Most days of mail the initial sync may cover (100 years, as `AGENTPOST_IMAP_SYNC_DAYS`). */
export const MAX_SYNC_DAYS = 36_500;

/** The settings of a connected IMAP/SMTP account (`provider: "imap"`, Nylas bring-your-own authentication). */
export const ImapGrantSettingsSchema = z
  .object({
    imap_username: z.string().min(1).max(320).describe('IMAP login name (often the address)'),
    imap_password: z.string().min(1).max(1024).describe('IMAP password; write-only, stored sealed'),
    imap_host: HostSchema.describe('IMAP server host name or IP address'),
    imap_port: PortSchema.describe('IMAP server port (993: implicit TLS; 143: STARTTLS)'),
    smtp_host: HostSchema.describe('SMTP submission server host name or IP address'),
    smtp_port: PortSchema.describe('SMTP submission port (465: implicit TLS; 587: STARTTLS)'),
    smtp_username: z.string().min(1).max(320).optional().describe('SMTP login name; default the IMAP username'),
    smtp_password: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('SMTP password; default the IMAP password; write-only, stored sealed'),
    email: z
      .email()
      .max(320)
      .optional()
      .describe("Extension: the account's address (the grant's email); default imap_username when it is an address"),
    imap_security: ConnectionSecuritySchema.optional().describe(
      'Extension: "tls" (implicit TLS) or "starttls" (upgrade when offered); default "tls" on port 993, else "starttls"',
    ),
    smtp_security: ConnectionSecuritySchema.optional().describe(
      'Extension: "tls" (implicit TLS) or "starttls" (upgrade when offered); default "tls" on port 465, else "starttls"',
    ),
    allow_insecure_tls: z
      .boolean()
      .optional()
      .describe('Extension: accept TLS certificates that fail verification (self-signed servers); default false'),
    sync_days: z
      .number()
      .int()
      .min(1)
      .max(MAX_SYNC_DAYS)
      .optional()
      .describe('Extension: days of mail the initial sync covers, newest first; default AGENTPOST_IMAP_SYNC_DAYS'),
    server_files_sent: z
      .boolean()
      .optional()
      .describe(
        'Extension: whether the SMTP server files a copy of sent mail in Sent itself (then none is appended); default: known hosts (Gmail, Microsoft) do',
      ),
    caldav_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .describe(
        'CalDAV server (RFC 4791): a calendar home, or a base URL found through /.well-known/caldav; none: the account has no calendars',
      ),
    carddav_url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .describe(
        'CardDAV server (RFC 6352): an address book home, or a base URL found through /.well-known/carddav; none: the account has no contacts here',
      ),
    caldav_username: z.string().min(1).max(320).optional().describe('CalDAV login name; default the IMAP username'),
    caldav_password: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('CalDAV password; default the IMAP password; write-only, stored sealed'),
    carddav_username: z.string().min(1).max(320).optional().describe('CardDAV login name; default the IMAP username'),
    carddav_password: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe('CardDAV password; default the IMAP password; write-only, stored sealed'),
  })
  .loose();
export type ImapGrantSettings = z.infer<typeof ImapGrantSettingsSchema>;

/** Providers `POST /v3/connect/custom` accepts. */
export const CreateGrantProviderSchema = z
  .enum(['nylas', 'hosted', 'imap', 'google', 'microsoft'])
  .describe(
    '"nylas" or "hosted": a hosted Agent Account; "imap": an existing IMAP/SMTP mailbox (bring-your-own authentication); "google", "microsoft": an account of the provider from a refresh token the application obtained (settings.refresh_token; the application\'s connector of the provider refreshes it)',
  );

/** The settings of a Google or Microsoft account connected with a refresh token (Nylas' bring-your-own token). */
/** The fields of a google or microsoft account's settings (see OAuthGrantSettingsSchema). */
const OAuthGrantSettingsFields = z
  .object({
    refresh_token: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        "A refresh token the provider issued to the client of the application's connector; write-only, stored sealed",
      ),
    credential_id: IdSchema.optional().describe(
      "Instead of refresh_token: a credential of the provider's connector that mints the tokens, a Google service account (serviceaccount, domain-wide delegation) or a Microsoft app with admin consent (adminconsent, app-only)",
    ),
    email_address: z
      .email()
      .max(320)
      .optional()
      .describe('With credential_id (required): the user the service account acts for, or the mailbox the app reads'),
    scopes: z
      .array(z.string().min(1).max(512))
      .min(1)
      .max(100)
      .optional()
      .describe(
        "With credential_id: the scopes asked (google default: the connector's; microsoft default: https://outlook.office365.com/.default)",
      ),
    tenant: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9.-]{0,127}$/, 'a tenant id or domain name')
      .optional()
      .describe(
        "microsoft, with credential_id: the tenant (id or domain) whose token URL issues the app's tokens, replacing the /common/ or /organizations/ of the connector's token_url",
      ),
  })
  .loose();

/**
 * The settings of a google or microsoft account: a refresh token, or a connector credential (`credential_id`) with
 * the account's `email_address`.
 */
export const OAuthGrantSettingsSchema = OAuthGrantSettingsFields.check((context) => {
  const value = context.value;
  const issue = (path: string, message: string) =>
    context.issues.push({ code: 'custom', path: [path], message, input: undefined });
  if (value.credential_id === undefined) {
    if (value.refresh_token === undefined) issue('refresh_token', 'Required (or credential_id with email_address)');
    return;
  }
  if (value.refresh_token !== undefined) issue('credential_id', 'give refresh_token or credential_id, not both');
  if (value.email_address === undefined) issue('email_address', 'Required with credential_id');
});

/**
 * The settings object of either provider, every field optional here: the input schema checks the fields against
 * the provider's own schema (one issue per field, under `settings.`), which a union of the two cannot report.
 */
const CreateGrantSettingsSchema = HostedGrantSettingsSchema.partial()
  .extend(ImapGrantSettingsSchema.partial().shape)
  .extend(OAuthGrantSettingsFields.shape)
  .extend({
    email: z
      .email()
      .max(320)
      .optional()
      .describe(
        "Agent Account: the new mailbox's address, on a registered domain of this application (required). imap: the account's address, default imap_username",
      ),
  })
  .loose()
  .describe(
    'Agent Account ("nylas", "hosted"): email (required), app_password, policy_id. imap: imap_username, imap_password, imap_host, imap_port, smtp_host, smtp_port (required), smtp_username, smtp_password and the extensions. google, microsoft: refresh_token, or credential_id with email_address (scopes, tenant)',
  );

export const CreateGrantInputSchema = z
  .object({
    provider: CreateGrantProviderSchema,
    settings: CreateGrantSettingsSchema,
    name: z.string().max(256).optional().describe('Display name used in From headers'),
    workspace_id: IdSchema.optional().describe('Workspace to place the account in'),
    state: z.string().max(256).optional().describe('Opaque value stored with the grant'),
    scope: z
      .array(z.string().max(512))
      .max(100)
      .optional()
      .describe(
        "google, microsoft: the scopes the refresh token was granted (default the provider's answer's, else the connector's); ignored otherwise: a grant of this service can do everything",
      ),
  })
  .check((context) => {
    const { provider } = context.value;
    const schema =
      provider === 'imap'
        ? ImapGrantSettingsSchema
        : provider === 'google' || provider === 'microsoft'
          ? OAuthGrantSettingsSchema
          : HostedGrantSettingsSchema;
    const checked = schema.safeParse(context.value.settings);
    if (checked.success) return;
    // The settings object's own field checks already reported some of these: one issue per field and kind.
    const reported = new Set(context.issues.map((issue) => `${issue.path?.join('.')} ${issue.code}`));
    for (const issue of checked.error.issues) {
      const path = ['settings', ...issue.path];
      if (reported.has(`${path.join('.')} ${issue.code}`)) continue;
      context.issues.push({ ...issue, path, input: undefined });
    }
  })
  .meta({ id: 'CreateGrantInput' });
export type CreateGrantInput = z.infer<typeof CreateGrantInputSchema>;

export const ListGrantsInputSchema = z.object({
  limit: z.number().int().min(1).max(200).optional().describe('Page size, 1 to 200 (default 10)'),
  offset: z.number().int().min(0).optional().describe('Number of grants to skip'),
  sort_by: z.enum(['created_at', 'updated_at']).optional().describe('Sort field (default created_at)'),
  order_by: z.enum(['asc', 'desc']).optional().describe('Sort order (default desc)'),
  since: UnixSecondsSchema.optional().describe('Only grants created at or after this time'),
  before: UnixSecondsSchema.optional().describe('Only grants created before this time'),
  email: z.string().max(320).optional().describe('Only the grant with this address'),
  grant_status: z.enum(['valid', 'invalid']).optional(),
  provider: z.string().max(64).optional().describe('Only grants of this provider ("hosted" and "nylas" are the same)'),
  workspace_id: IdSchema.optional(),
});
export type ListGrantsInput = z.infer<typeof ListGrantsInputSchema>;

export const GrantListSchema = z.object({
  data: z.array(GrantSchema),
  limit: z.number().int().describe('The page size used'),
  offset: z.number().int().describe('The offset used'),
});

export const GrantRefInputSchema = z.object({ grant_id: GrantIdSchema });

export const UpdateGrantInputSchema = z.object({
  grant_id: GrantIdSchema,
  name: z.string().max(256).optional().describe('New display name'),
  settings: z
    .object({ app_password: AppPasswordSchema.optional(), policy_id: IdSchema.optional() })
    .loose()
    .optional()
    .describe('Settings to change (merged into the current ones)'),
  scope: z.array(z.string()).optional(),
  workspace_id: IdSchema.optional().describe('Move the Agent Account to this workspace of the same application'),
  oversight_mode: OversightModeSchema.nullable()
    .optional()
    .describe("Extension: the grant's oversight mode; null follows its workspace's policy (docs/oversight.md)"),
  sending: z
    .object({ status: z.literal('active').describe('"active" resumes sending') })
    .optional()
    .describe(
      'Extension: {"status": "active"} resumes a grant whose sending the service paused (recorded with the request id; the bounce and complaint rates then count only what is sent after the resume)',
    ),
});
export type UpdateGrantInput = z.infer<typeof UpdateGrantInputSchema>;
