/**
 * @module applications/application-service
 * Applications, API keys and service accounts; turns request credentials into a {@link Principal}.
 */
import { generateKeyPairSync } from 'node:crypto';
import { and, eq, isNull, lt, ne } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError } from '../errors.js';
import { API_KEY_PREFIX, canonicalJson, hashApiKey, newApiKey, sameDigest, verifySignature } from './credentials.js';
import { allApplications, apiKeyByHash, apiKeysOf } from './application-store.js';
import type {
  ApiKeyInfo,
  ApplicationInfo,
  ApplicationService,
  Plan,
  ServiceAccountCredentials,
  SignedRequest,
} from './contracts.js';

/** Name of the key that `AGENTPOST_API_KEY` sets, so a changed value can replace it. */
const ENV_KEY_NAME = 'AGENTPOST_API_KEY';

/** How far a signed request's timestamp may be from our clock, either way. */
const SIGNATURE_WINDOW_SECONDS = 5 * 60;

/** Creates the application service. */
export function createApplicationService({
  db,
  clock,
  newId,
  randomBytes,
  config,
  logger,
}: CoreDeps): ApplicationService {
  const now = () => unixSeconds(clock.now());

  async function insertKey(
    tx: Parameters<Parameters<typeof db.write>[0]>[0],
    applicationId: string,
    name: string,
    key: string,
  ) {
    const id = newId();
    await tx.insert(tables.apiKeys).values({
      id,
      applicationId,
      name,
      prefix: key.slice(0, API_KEY_PREFIX.length + 6),
      keyHash: hashApiKey(key),
      createdAt: now(),
    });
    return id;
  }

  async function insertApplication(
    tx: Parameters<Parameters<typeof db.write>[0]>[0],
    name: string,
    plan: Plan,
    isDefault: boolean,
  ) {
    const id = newId();
    const at = now();
    await tx.insert(tables.applications).values({ id, name, plan, isDefault, createdAt: at, updatedAt: at });
    // Every application has exactly one default workspace from the start (spec: Workspace).
    await tx.insert(tables.workspaces).values({
      id: newId(),
      applicationId: id,
      name: 'Default workspace',
      isDefault: true,
      autoGroup: false,
      createdAt: at,
      updatedAt: at,
    });
    return id;
  }

  function toInfo(row: typeof tables.applications.$inferSelect): ApplicationInfo {
    return { id: row.id, name: row.name, plan: row.plan, is_default: row.isDefault, created_at: row.createdAt };
  }

  async function getApplication(applicationId: string): Promise<ApplicationInfo> {
    const row = await db.orm.query.applications.findFirst({ where: eq(tables.applications.id, applicationId) });
    if (!row) throw new AppError('not_found', `Application ${JSON.stringify(applicationId)} was not found.`);
    return toInfo(row);
  }

  return {
    /**
     * First-start bootstrap: makes the default application and its key when the database is empty, and makes
     * `AGENTPOST_API_KEY` a valid key of it. Returns the key when one was generated (to be printed once).
     */
    async ensureDefaultApplication(): Promise<{ application: ApplicationInfo; generatedKey?: string }> {
      return db.write(async (tx) => {
        let app = await tx.query.applications.findFirst({ where: eq(tables.applications.isDefault, true) });
        let generatedKey: string | undefined;
        if (!app) {
          const id = await insertApplication(tx, 'Default application', 'production', true);
          app = (await tx.query.applications.findFirst({ where: eq(tables.applications.id, id) }))!;
          if (!config.apiKey) {
            generatedKey = newApiKey(randomBytes(32));
            await insertKey(tx, id, 'default', generatedKey);
          }
        }
        if (config.apiKey) {
          const hash = hashApiKey(config.apiKey);
          const existing = await tx.query.apiKeys.findFirst({ where: eq(tables.apiKeys.keyHash, hash) });
          if (!existing) await insertKey(tx, app.id, ENV_KEY_NAME, config.apiKey);
          else if (existing.revokedAt !== null)
            logger.warn('AGENTPOST_API_KEY names a revoked key; requests with it are refused');
          // A changed AGENTPOST_API_KEY replaces the one it set before: the old value stops working (rotation).
          const replaced = await tx
            .update(tables.apiKeys)
            .set({ revokedAt: now() })
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
    },

    /** The default application's id. */
    async defaultApplicationId(): Promise<string> {
      const app = await db.orm.query.applications.findFirst({ where: eq(tables.applications.isDefault, true) });
      if (!app)
        throw new AppError(
          'internal',
          'No default application: the service has not been started on this database yet.',
        );
      return app.id;
    },

    /** Creates an application with its default workspace and a first API key. */
    async createApplication(input: {
      name: string;
      plan: Plan;
    }): Promise<{ application: ApplicationInfo; apiKey: string }> {
      const apiKey = newApiKey(randomBytes(32));
      const id = await db.write(async (tx) => {
        const id = await insertApplication(tx, input.name, input.plan, false);
        await insertKey(tx, id, 'default', apiKey);
        return id;
      });
      const row = await db.orm.query.applications.findFirst({ where: eq(tables.applications.id, id) });
      return { application: toInfo(row!), apiKey };
    },

    /** Every application. */
    async listApplications(): Promise<ApplicationInfo[]> {
      const rows = await allApplications(db.orm);
      return rows.map(toInfo);
    },

    /** The application with this id, or a 404. */
    getApplication,

    /** Issues a new API key; the key is returned once and only its hash is kept. */
    async createKey(applicationId: string, name = 'key'): Promise<{ id: string; apiKey: string }> {
      await getApplication(applicationId);
      const apiKey = newApiKey(randomBytes(32));
      const id = await db.write((tx) => insertKey(tx, applicationId, name, apiKey));
      return { id, apiKey };
    },

    /** An application's keys, revoked ones included. */
    async listKeys(applicationId: string): Promise<ApiKeyInfo[]> {
      await getApplication(applicationId);
      const rows = await apiKeysOf(db.orm, applicationId);
      return rows.map((row) => ({
        id: row.id,
        application_id: row.applicationId,
        name: row.name,
        prefix: row.prefix,
        created_at: row.createdAt,
        revoked_at: row.revokedAt,
      }));
    },

    /** Revokes a key at once; requests with it get 401 from then on. */
    async revokeKey(applicationId: string, keyId: string): Promise<void> {
      const result = await db.write((tx) =>
        tx
          .update(tables.apiKeys)
          .set({ revokedAt: now() })
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
    },

    /** Resolves a Bearer key to its application; anything else is a 401. */
    async authenticateApiKey(key: string | undefined): Promise<Principal> {
      if (!key) throw new AppError('unauthorized', 'Missing API key: send Authorization: Bearer <API_KEY>.');
      const hash = hashApiKey(key);
      const [row] = await apiKeyByHash(db.orm, { hash });
      // The lookup is by digest of a high-entropy secret; the digests are still compared in constant time.
      if (!row || !sameDigest(row.keyHash, hash) || row.revokedAt !== null) {
        throw new AppError('unauthorized', 'Unauthorized: the API key is not valid.');
      }
      return { applicationId: row.applicationId, via: 'api_key' };
    },

    /**
     * Issues a service account: an RSA key pair whose public half is kept. The private key is returned once,
     * in the form the `nylas` SDK's `ServiceAccountSigner` takes (`privateKeyPem`, `privateKeyId`).
     */
    async createServiceAccount(applicationId: string): Promise<ServiceAccountCredentials> {
      const application = await getApplication(applicationId);
      const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const id = newId();
      await db.write((tx) =>
        tx.insert(tables.serviceAccounts).values({
          id,
          applicationId,
          publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
          createdAt: now(),
        }),
      );
      return {
        name: `${application.name} service account`,
        type: 'service_account',
        private_key_id: id,
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        organization_id: applicationId,
        application_id: applicationId,
        region: 'us',
      };
    },

    /**
     * Verifies a service-account signature: known key id, timestamp within five minutes, a nonce never seen
     * before (remembered until the window passes), and an RSA-SHA256 signature over the canonical request.
     */
    async authenticateSignedRequest(request: SignedRequest): Promise<Principal> {
      const reject = (why: string) => new AppError('unauthorized', `Unauthorized: ${why}`);
      const timestamp = Number(request.timestamp);
      if (!Number.isInteger(timestamp)) throw reject('X-Nylas-Timestamp must be a Unix time in seconds.');
      const current = now();
      if (Math.abs(current - timestamp) > SIGNATURE_WINDOW_SECONDS)
        throw reject('X-Nylas-Timestamp is more than 5 minutes from the server clock.');
      if (!/^[A-Za-z0-9_-]{8,128}$/.test(request.nonce))
        throw reject('X-Nylas-Nonce must be 8 to 128 letters or digits.');
      const account = await db.orm.query.serviceAccounts.findFirst({
        where: eq(tables.serviceAccounts.id, request.keyId),
      });
      if (!account || account.revokedAt !== null) throw reject('unknown X-Nylas-Kid.');
      let body = request.body;
      if (body) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          // not JSON: the raw bytes are what was signed
        }
        // A body too deep to canonicalise is a 400 (canonicalJson bounds its recursion), never a stack overflow.
        if (parsed !== undefined) body = canonicalJson(parsed);
      }
      const parts = { method: request.method, path: request.path, nonce: request.nonce, timestamp, body };
      if (!verifySignature(account.publicKeyPem, parts, request.signature))
        throw reject('the X-Nylas-Signature does not match the request.');
      const fresh = await db.write(async (tx) => {
        await tx.delete(tables.serviceAccountNonces).where(lt(tables.serviceAccountNonces.expiresAt, current));
        const inserted = await tx
          .insert(tables.serviceAccountNonces)
          .values({
            serviceAccountId: account.id,
            nonce: request.nonce,
            expiresAt: timestamp + SIGNATURE_WINDOW_SECONDS,
          })
          .onConflictDoNothing()
          .returning();
        return inserted.length === 1;
      });
      if (!fresh) throw reject('this X-Nylas-Nonce was already used.');
      return { applicationId: account.applicationId, via: 'service_account' };
    },
  };
}

export type {
  ApiKeyInfo,
  ApplicationInfo,
  ApplicationService,
  Plan,
  ServiceAccountCredentials,
  SignedRequest,
} from './contracts.js';
