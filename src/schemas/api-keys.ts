/**
 * @module schemas/api-keys
 * API keys with a scope, permissions and an expiry (issue 36): an extension, `/v3/api-keys`.
 */
import { z } from 'zod';
import { PERMISSIONS } from '../access.js';
import { IdSchema, UnixSecondsSchema } from './common.js';

export const PermissionSchema = z.enum(PERMISSIONS).describe('A permission: ' + PERMISSIONS.join(', '));

export const KeyScopeSchema = z
  .strictObject({
    workspace_ids: z
      .array(IdSchema)
      .max(100)
      .optional()
      .describe('Workspaces whose grants the key reaches (grants moved in later are reached too)'),
    grant_ids: z.array(IdSchema).max(1000).optional().describe('Grants the key reaches'),
  })
  .describe('What the key reaches; absent or empty: the whole application (its grants and its own objects)')
  .meta({ id: 'ApiKeyScope' });

export const CreateApiKeyInputSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(100).default('key').describe('A name people tell keys apart by'),
    scope: KeyScopeSchema.optional(),
    permissions: z
      .array(PermissionSchema)
      .max(PERMISSIONS.length)
      .optional()
      .describe('What the key may do; absent: everything the creating key may do'),
    expires_at: UnixSecondsSchema.optional().describe('When the key stops working (unix seconds); absent: never'),
    agent: z
      .boolean()
      .optional()
      .describe(
        "Extension: an agent's key. Its sends are agent sends whatever face they come through: they count against the per-thread budget and do not answer automated mail (docs/oversight.md). Absent: the calling key's; a key made by an agent's key is an agent's too",
      ),
  })
  .meta({ id: 'CreateApiKeyInput' });
export type CreateApiKeyInput = z.infer<typeof CreateApiKeyInputSchema>;

export const ApiKeySchema = z
  .object({
    id: IdSchema,
    application_id: IdSchema.describe('The application the key belongs to'),
    name: z.string(),
    prefix: z.string().describe('The first characters of the key, to tell keys apart'),
    scope: KeyScopeSchema,
    permissions: z.array(PermissionSchema),
    expires_at: z.number().int().nullable(),
    created_at: z.number().int(),
    last_used_at: z.number().int().nullable().describe('When the key last authenticated a request (to the minute)'),
    created_by: z.string().nullable().describe('The key that made this one; null: the CLI or the bootstrap'),
    revoked_at: z.number().int().nullable(),
    agent: z.boolean().describe("Extension: an agent's key (its sends are agent sends)"),
  })
  .meta({ id: 'ApiKey' });

export const ApiKeyWithSecretSchema = ApiKeySchema.extend({
  key: z.string().describe('The secret: shown only in this answer, stored hashed'),
}).meta({ id: 'ApiKeyWithSecret' });

export const ListApiKeysInputSchema = z.object({}).meta({ id: 'ListApiKeysInput' });

export const ApiKeyRefInputSchema = z
  .object({ api_key_id: IdSchema.describe('The key id') })
  .meta({ id: 'ApiKeyRefInput' });

export const ApiKeyRevokedSchema = z
  .object({ status: z.literal('success').describe('Always "success"') })
  .meta({ id: 'ApiKeyRevoked' });
