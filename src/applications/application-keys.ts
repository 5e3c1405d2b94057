/**
 * @module applications/application-keys
 * The application service's API keys (./application-service.ts): the first-start bootstrap of the default application
 * and `AGENTPOST_API_KEY`, issuing, listing and revoking keys, and authenticating a Bearer key.
 */
import { and, eq, isNull, ne } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { PERMISSIONS, type KeyScope, type Permission, type Principal, type RefusedKey } from '../access.js';
import { AppError, notFound } from '../errors.js';
import { hashApiKey, newApiKey, sameDigest } from './credentials.js';
import { apiKeyById, apiKeyByHash, apiKeysOf, grantsOfWorkspaces, scopeRows } from './application-store.js';
import type { ApiKeyInfo, ApplicationInfo, KeyOptions } from './contracts.js';
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
  options: KeyOptions = {},
): Promise<{ id: string; apiKey: string; info: ApiKeyInfo }> {
  await getApplication(state, applicationId);
  const wanted = narrowerThanCreator(state, options);
  await assertScopeExists(state, applicationId, wanted.scope);
  const apiKey = newApiKey(state.randomBytes(32));
  const id = await state.db.write((tx) =>
    insertKey(state, tx, applicationId, options.name ?? 'key', apiKey, {
      scope: wanted.scope ?? null,
      permissions: wanted.permissions ? [...wanted.permissions] : null,
      expiresAt: wanted.expiresAt ?? null,
      createdBy: options.creator?.key?.id ?? null,
      agent: wanted.agent,
    }),
  );
  const [row] = await apiKeyById(state.db.orm, applicationId, id);
  return { id, apiKey, info: keyInfo(row!) };
}

/**
 * The scope, permissions and expiry of a new key: each absent one inherits the creator's; each given one must be no
 * wider than the creator's (a 403 naming what is wider).
 */
function narrowerThanCreator(
  state: ApplicationState,
  options: KeyOptions,
): {
  scope?: KeyScope | undefined;
  permissions?: readonly Permission[] | undefined;
  expiresAt?: number | undefined;
  agent: boolean;
} {
  const creator = options.creator;
  const agent = options.agent ?? creator?.key?.agent === true;
  const scope = normalScope(options.scope) ?? normalScope(creator?.key?.scope);
  const permissions = options.permissions ?? (creator?.permissions ? [...creator.permissions] : undefined);
  const expiresAt = options.expiresAt ?? creator?.key?.expiresAt;
  if (expiresAt !== undefined && expiresAt <= state.now())
    throw new AppError('invalid_request', 'expires_at: must be in the future.');
  if (!creator) return { scope, permissions, expiresAt, agent };
  const wider = (what: string) =>
    new AppError('forbidden', `A key can only create keys narrower than or equal to itself: ${what}.`);
  if (creator.permissions) {
    const extra = (permissions ?? PERMISSIONS).filter((permission) => !creator.permissions!.has(permission));
    if (extra.length > 0) throw wider(`this key lacks ${extra.join(', ')}`);
  }
  if (creator.grantIds) {
    if (!scope) throw wider('this key is not scoped to the whole application');
    const ownWorkspaces = new Set(creator.key?.scope?.workspace_ids ?? []);
    const workspace = scope.workspace_ids?.find((id) => !ownWorkspaces.has(id));
    if (workspace !== undefined) throw wider(`workspace ${workspace} is outside its scope`);
    const grant = scope.grant_ids?.find((id) => !creator.grantIds!.has(id));
    if (grant !== undefined) throw wider(`grant ${grant} is outside its scope`);
  }
  const ownExpiry = creator.key?.expiresAt;
  if (ownExpiry !== undefined && (expiresAt === undefined || expiresAt > ownExpiry))
    throw wider(`it expires at ${ownExpiry}`);
  // An agent's key cannot make a key whose sends escape the agents' guards.
  if (creator.key?.agent === true && !agent) throw wider("it is an agent's key, so the keys it makes are too");
  return { scope, permissions, expiresAt, agent };
}

/** A scope with its empty lists dropped; undefined when nothing is left (the whole application). */
function normalScope(scope: KeyScope | undefined): KeyScope | undefined {
  const workspaceIds = [...new Set(scope?.workspace_ids ?? [])];
  const grantIds = [...new Set(scope?.grant_ids ?? [])];
  if (workspaceIds.length === 0 && grantIds.length === 0) return undefined;
  return {
    ...(workspaceIds.length > 0 ? { workspace_ids: workspaceIds } : {}),
    ...(grantIds.length > 0 ? { grant_ids: grantIds } : {}),
  };
}

/** Every workspace and grant a scope names is one of this application's, else a 404 naming it. */
async function assertScopeExists(state: ApplicationState, applicationId: string, scope: KeyScope | undefined) {
  if (!scope) return;
  const known = await scopeRows(state.db.orm, applicationId, scope);
  for (const id of scope.workspace_ids ?? []) if (!known.workspaceIds.has(id)) throw notFound('Workspace', id);
  for (const id of scope.grant_ids ?? []) if (!known.grantIds.has(id)) throw notFound('Grant', id);
}

/** A key row in its API form (never the secret). */
function keyInfo(row: typeof tables.apiKeys.$inferSelect): ApiKeyInfo {
  return {
    id: row.id,
    application_id: row.applicationId,
    name: row.name,
    prefix: row.prefix,
    scope: row.scope ?? {},
    permissions: (row.permissions as Permission[] | null) ?? [...PERMISSIONS],
    expires_at: row.expiresAt,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
    created_by: row.createdBy,
    revoked_at: row.revokedAt,
    agent: row.agent,
  };
}

/**
 * An application's keys, revoked ones included; for a `viewer` narrower than the application, only the keys it
 * made (and those they made), so a scoped key sees no key it could not have made.
 */
export async function listKeys(
  state: ApplicationState,
  applicationId: string,
  viewer?: Principal,
): Promise<ApiKeyInfo[]> {
  await getApplication(state, applicationId);
  const rows = await apiKeysOf(state.db.orm, applicationId);
  return visibleTo(rows, viewer).map(keyInfo);
}

/** The key with this id, as {@link listKeys} shows it to `viewer`, or a 404. */
export async function getKey(
  state: ApplicationState,
  applicationId: string,
  keyId: string,
  viewer?: Principal,
): Promise<ApiKeyInfo> {
  const key = (await listKeys(state, applicationId, viewer)).find((info) => info.id === keyId);
  if (!key) throw notFound('API key', keyId);
  return key;
}

/** The rows a viewer may see: all for an application-wide viewer, else its own descendants (and itself). */
function visibleTo<Row extends { id: string; createdBy: string | null }>(rows: Row[], viewer?: Principal): Row[] {
  if (!viewer?.grantIds || !viewer.key) return rows;
  const seen = new Set([viewer.key.id]);
  // Rows are oldest first, and a key is made after the key that made it: one pass finds every descendant.
  for (const row of rows) if (row.createdBy !== null && seen.has(row.createdBy)) seen.add(row.id);
  return rows.filter((row) => seen.has(row.id));
}

/** Revokes a key at once; requests with it get 401 from then on. */
export async function revokeKey(
  state: ApplicationState,
  applicationId: string,
  keyId: string,
  viewer?: Principal,
): Promise<void> {
  if (viewer) await getKey(state, applicationId, keyId, viewer);
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

/** How often a key's `last_used_at` is written, at most (seconds). */
const LAST_USED_EVERY = 60;

/**
 * Resolves a Bearer key to its application, the grants it may reach and its permissions; a missing, unknown,
 * revoked or expired key is a 401.
 */
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
  return principalOfKey(state, row);
}

/**
 * The principal of a key row that is not revoked (its scope resolved now, its last use noted); an expired key is a
 * 401 that names it. Shared by {@link authenticateApiKey} and the dashboard's sessions (./dashboard-sessions.ts).
 */
export async function principalOfKey(
  state: ApplicationState,
  row: typeof tables.apiKeys.$inferSelect,
): Promise<Principal> {
  const now = state.now();
  if (row.expiresAt !== null && row.expiresAt <= now)
    throw new AppError('unauthorized', 'Unauthorized: the API key has expired.', {
      applicationId: row.applicationId,
      key: { id: row.id, name: row.name },
    } satisfies RefusedKey);
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_EVERY) noteUse(state, row.id, now);
  const scope = row.scope ?? undefined;
  return {
    applicationId: row.applicationId,
    via: 'api_key',
    key: { id: row.id, name: row.name, scope, expiresAt: row.expiresAt ?? undefined, agent: row.agent },
    grantIds: scope ? await grantsReached(state, row.applicationId, scope) : undefined,
    permissions: row.permissions ? new Set(row.permissions as Permission[]) : undefined,
  };
}

/**
 * The grants a scope reaches, on every request: those it names (checked when the key was made; one deleted since is
 * simply never found) and those of its workspaces now (one cached read while the database is unchanged).
 */
async function grantsReached(state: ApplicationState, applicationId: string, scope: KeyScope): Promise<Set<string>> {
  const reached = new Set(scope.grant_ids ?? []);
  if (scope.workspace_ids && scope.workspace_ids.length > 0) {
    const rows = await grantsOfWorkspaces(state.db.orm, {
      application: applicationId,
      workspaces: JSON.stringify(scope.workspace_ids),
    });
    for (const row of rows) reached.add(row.id);
  }
  return reached;
}

/** Keys whose `last_used_at` write is under way, so a burst of requests writes it once. */
const noting = new Set<string>();

/** Records that a key was used, without holding up the request (a failure is logged, never answered). */
function noteUse(state: ApplicationState, keyId: string, now: number): void {
  if (noting.has(keyId)) return;
  noting.add(keyId);
  state.db
    .write((tx) => tx.update(tables.apiKeys).set({ lastUsedAt: now }).where(eq(tables.apiKeys.id, keyId)))
    .catch((error: unknown) =>
      state.logger.warn('could not record when an API key was last used', { error: String(error) }),
    )
    .finally(() => noting.delete(keyId));
}
