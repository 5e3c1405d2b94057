/**
 * @module schemas/grants
 * Grants (Agent Accounts) on the wire, as in Nylas v3 `models/grants.ts`.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, UnixSecondsSchema } from './common.js';

/** Provider values of a hosted Agent Account: `nylas` (the SDK) and `hosted` (the spec) name the same thing. */
export const HostedProviderSchema = z.enum(['nylas', 'hosted']).describe('Agent Account provider: "nylas" (Nylas SDK) or "hosted" (both accepted)');

/** Extension: the grant's sending state (paused by the service on a bounce or complaint threshold). */
export const GrantSendingSchema = z
  .object({
    status: z.enum(['active', 'paused']).describe('"paused": sends are refused (403 sending_paused) until resumed with PATCH /v3/grants/{id} {"sending": {"status": "active"}}'),
    reason: z.string().optional().describe('Why sending is paused: the rate, its threshold and the window'),
    paused_at: UnixSecondsSchema.optional().describe('When sending was paused'),
  })
  .describe('Extension: whether this grant may send. The service pauses it when its hard-bounce or complaint rate crosses a threshold');

export const GrantSchema = z
  .object({
    id: z.string().describe('Grant id: use it in every /v3/grants/{grant_id}/… path'),
    provider: z.string().describe('"nylas" for Agent Accounts hosted by this service'),
    grant_status: z.enum(['valid', 'invalid']).describe('Whether the grant can be used'),
    email: z.string().describe('The mailbox address'),
    name: z.string().optional().describe('Display name'),
    state: z.string().optional().describe('The opaque state passed when the grant was created'),
    scope: z.array(z.string()).describe('Granted scopes (empty for Agent Accounts: they can do everything)'),
    settings: z.record(z.string(), z.unknown()).describe('Provider settings; secrets are write-only and never returned'),
    workspace_id: z.string().optional().describe('Workspace the Agent Account belongs to'),
    blocked: z.boolean().describe('True when sending is blocked for this grant'),
    sending: GrantSendingSchema,
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

export const CreateGrantInputSchema = z
  .object({
    provider: HostedProviderSchema,
    settings: z
      .object({
        email: z.email().max(320).describe('Address of the new mailbox, on a registered domain of this application'),
        app_password: AppPasswordSchema.optional(),
        policy_id: IdSchema.optional().describe('Policy applied to this account'),
      })
      .loose(),
    name: z.string().max(256).optional().describe('Display name used in From headers'),
    workspace_id: IdSchema.optional().describe('Workspace to place the account in'),
    state: z.string().max(256).optional().describe('Opaque value stored with the grant'),
    scope: z.array(z.string()).optional().describe('Ignored for Agent Accounts'),
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
  sending: z
    .object({ status: z.literal('active').describe('"active" resumes sending') })
    .optional()
    .describe('Extension: {"status": "active"} resumes a grant whose sending the service paused (recorded with the request id; the bounce and complaint rates then count only what is sent after the resume)'),
});
export type UpdateGrantInput = z.infer<typeof UpdateGrantInputSchema>;
