/**
 * API keys with a scope, permissions and an expiry (`/v3/api-keys`, an extension; issue 36). A key may only make
 * keys no wider than itself; a key narrower than the application sees and revokes only the keys it made.
 * Application configuration, so HTTP only (not agent tools).
 */
import {
  ApiKeyRefInputSchema,
  ApiKeyRevokedSchema,
  ApiKeySchema,
  ApiKeyWithSecretSchema,
  CreateApiKeyInputSchema,
  ListApiKeysInputSchema,
} from '../schemas/api-keys.js';
import { z } from 'zod';
import { AppError } from '../errors.js';
import { defineOperation } from './define-operation.js';

export const createApiKey = defineOperation({
  name: 'create_api_key',
  title: 'Create an API key',
  description:
    'Issues an API key scoped to the application, some workspaces or some grants, with permissions and an optional expiry. ' +
    "Absent fields inherit the calling key's; a key can only create keys narrower than or equal to itself (else 403). " +
    'The secret `key` is in this answer only; it is stored hashed.',
  input: CreateApiKeyInputSchema,
  output: ApiKeyWithSecretSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/api-keys', status: 201 },
  tool: false,
  run: async (core, input, { principal }) => {
    const made = await core.accounts.applications.createKey(principal.applicationId, {
      name: input.name,
      scope: input.scope,
      permissions: input.permissions,
      expiresAt: input.expires_at,
      agent: input.agent,
      creator: principal.via === 'api_key' ? principal : undefined,
    });
    return { ...made.info, key: made.apiKey };
  },
});

export const listApiKeys = defineOperation({
  name: 'list_api_keys',
  title: 'List API keys',
  description:
    'Lists the API keys (never their secrets), revoked ones included, oldest first. A key narrower than the application sees the keys it made.',
  input: ListApiKeysInputSchema,
  output: z.array(ApiKeySchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/api-keys' },
  tool: false,
  run: (core, _input, { principal }) => core.accounts.applications.listKeys(principal.applicationId, principal),
});

// Named to sort before `getApiKey`: `/api-keys/current` must be bound before `/api-keys/:api_key_id`.
export const currentApiKey = defineOperation({
  name: 'get_current_api_key',
  title: 'Get the calling API key',
  description:
    'Returns the key this request authenticated with: its scope, permissions and expiry (any key may ask). Agent hosts use it to offer only the tools the key may call.',
  input: z.object({}).meta({ id: 'GetCurrentApiKeyInput' }),
  output: ApiKeySchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/api-keys/current' },
  tool: false,
  run: async (core, _input, { principal }) => {
    if (!principal.key) throw new AppError('not_found', 'This request did not authenticate with an API key.');
    return core.accounts.applications.getKey(principal.applicationId, principal.key.id);
  },
});

export const getApiKey = defineOperation({
  name: 'get_api_key',
  title: 'Get an API key',
  description: 'Returns one API key (never its secret): scope, permissions, expiry, last use, the key that made it.',
  input: ApiKeyRefInputSchema,
  output: ApiKeySchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/api-keys/:api_key_id' },
  tool: false,
  run: (core, input, { principal }) =>
    core.accounts.applications.getKey(principal.applicationId, input.api_key_id, principal),
});

export const deleteApiKey = defineOperation({
  name: 'delete_api_key',
  title: 'Revoke an API key',
  description: 'Revokes an API key at once: requests with it get 401 from then on. The key stays listed as revoked.',
  input: ApiKeyRefInputSchema,
  output: ApiKeyRevokedSchema,
  hints: { readOnly: false, destructive: true, idempotent: false },
  http: { method: 'DELETE', path: '/api-keys/:api_key_id' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.accounts.applications.revokeKey(principal.applicationId, input.api_key_id, principal);
    return { status: 'success' as const };
  },
});
