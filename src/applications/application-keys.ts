/**
 * @module applications/application-keys
 * The application service's API keys (./application-service.ts): the first-start bootstrap of the default application
 * and `AGENTPOST_API_KEY`, issuing, listing and revoking keys, and authenticating a Bearer key.
 */
import { and, eq, isNull, ne } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal, RefusedKey } from '../access.js';
import { AppError } from '../errors.js';
import { hashApiKey, newApiKey, sameDigest } from './credentials.js';
import { apiKeyByHash, apiKeysOf } from './application-store.js';
import type { ApiKeyInfo, ApplicationInfo } from './contracts.js';
import { getApplication, insertApplication, insertKey, toInfo, type ApplicationState } from './application-state.js';

/** Name of the key that `AGENTPOST_API_KEY` sets, so a changed value can replace it. */
const ENV_KEY_NAME = 'AGENTPOST_API_KEY';

/**
 * First-start bootstrap: makes the default application and its key when the database is empty, and makes
 * `AGENTPOST_API_KEY` a valid key of it. Returns the key when one was generated (to be printed once).
 */
export async function ensureDefaultApplication(
  state: ApplicationState,
): Promise<{ application: ApplicationInfo; generatedKey?: string }> {
  const { db, config, randomBytes, logger } = state;
  return db.write(async (tx) => {
    let app = await tx.query.applications.findFirst({ where: eq(tables.applications.isDefault, true) });
    let generatedKey: string | undefined;
    if (!app) {
      const id = await insertApplication(state, tx, 'Default application', 'production', true);
      app = (await tx.query.applications.findFirst({ where: eq(tables.applications.id, id) }))!;
      if (!config.apiKey) {
        generatedKey = newApiKey(randomBytes(32));
        await insertKey(state, tx, id, 'default', generatedKey);
      }
    }
    if (config.apiKey) {
      const hash = hashApiKey(config.apiKey);
      const existing = await tx.query.apiKeys.findFirst({ where: eq(tables.apiKeys.keyHash, hash) });
      if (!existing) await insertKey(state, tx, app.id, ENV_KEY_NAME, config.apiKey);
      else if (existing.revokedAt !== null)
        logger.warn('AGENTPOST_API_KEY names a revoked key; requests with it are refused');
      // A changed AGENTPOST_API_KEY replaces the one it set before: the old value stops working (rotation).
      const replaced = await tx
        .update(tables.apiKeys)
        .set({ revokedAt: state.now() })
        .where(
          and(
            eq(tables.apiKeys.applicationId, app.id),
            eq(tables.apiKeys.name, ENV_KEY_NAME),
            isNull(tables.apiKeys.revokedAt),
            ne(tables.apiKeys.keyHash, hash),
          ),
        );
      if (replaced.rowsAffected > 0) logger.info('AGENTPOST_API_KEY changed; the previous value was revoked');
    }
    return { application: toInfo(app), ...(generatedKey ? { generatedKey } : {}) };
  });
}

/** Issues a new API key; the key is returned once and only its hash is kept. */
export async function createKey(
  state: ApplicationState,
  applicationId: string,
  name = 'key',
): Promise<{ id: string; apiKey: string }> {
  await getApplication(state, applicationId);
  const apiKey = newApiKey(state.randomBytes(32));
  const id = await state.db.write((tx) => insertKey(state, tx, applicationId, name, apiKey));
  return { id, apiKey };
}

/** An application's keys, revoked ones included. */
export async function listKeys(state: ApplicationState, applicationId: string): Promise<ApiKeyInfo[]> {
  await getApplication(state, applicationId);
  const rows = await apiKeysOf(state.db.orm, applicationId);
  return rows.map((row) => ({
    id: row.id,
    application_id: row.applicationId,
    name: row.name,
    prefix: row.prefix,
    created_at: row.createdAt,
    revoked_at: row.revokedAt,
  }));
}

/** Revokes a key at once; requests with it get 401 from then on. */
export async function revokeKey(state: ApplicationState, applicationId: string, keyId: string): Promise<void> {
  const result = await state.db.write((tx) =>
    tx
      .update(tables.apiKeys)
      .set({ revokedAt: state.now() })
      .where(
        and(
          eq(tables.apiKeys.id, keyId),
          eq(tables.apiKeys.applicationId, applicationId),
          isNull(tables.apiKeys.revokedAt),
        ),
      ),
  );
  if (result.rowsAffected === 0)
    throw new AppError('not_found', `No active key ${JSON.stringify(keyId)} in this application.`);
}

/** Resolves a Bearer key to its application; anything else is a 401. */
export async function authenticateApiKey(state: ApplicationState, key: string | undefined): Promise<Principal> {
  if (!key) throw new AppError('unauthorized', 'Missing API key: send Authorization: Bearer <API_KEY>.');
  const hash = hashApiKey(key);
  const [row] = await apiKeyByHash(state.db.orm, { hash });
  // The lookup is by digest of a high-entropy secret; the digests are still compared in constant time.
  if (!row || !sameDigest(row.keyHash, hash) || row.revokedAt !== null) {
    // A revoked key is still the application's: the access log records the refusal against it (never sent).
    const known = row && sameDigest(row.keyHash, hash);
    throw new AppError(
      'unauthorized',
      'Unauthorized: the API key is not valid.',
      known
        ? ({ applicationId: row.applicationId, key: { id: row.id, name: row.name } } satisfies RefusedKey)
        : undefined,
    );
  }
  return { applicationId: row.applicationId, via: 'api_key', key: { id: row.id, name: row.name } };
}
