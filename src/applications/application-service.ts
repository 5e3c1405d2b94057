/**
 * @module applications/application-service
 * Applications, API keys and service accounts; turns request credentials into a {@link Principal}.
 *
 * The service is plain functions over a small state made here: its API keys and the first-start bootstrap
 * (./application-keys.ts), its service accounts and signed requests (./service-accounts.ts) and what they share
 * (./application-state.ts).
 */
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError } from '../errors.js';
import { newApiKey } from './credentials.js';
import { allApplications, moveTestClock, testClockRow } from './application-store.js';
import { outsideTestClock } from '../clock-scope.js';
import type {
  ApplicationInfo,
  ApplicationService,
  Plan,
  ServiceAccountCredentials,
  SignedRequest,
} from './contracts.js';
import {
  authenticateApiKey,
  createKey,
  ensureDefaultApplication,
  getKey,
  listKeys,
  revokeKey,
} from './application-keys.js';
import { getApplication, insertApplication, insertKey, toInfo, type ApplicationState } from './application-state.js';
import { authenticateSignedRequest, createServiceAccount } from './service-accounts.js';
import { closeDashboardSession, openDashboardSession, resumeDashboardSession } from './dashboard-sessions.js';

/** Production applications remembered at most (a bound; past it the memory starts over). */
const PRODUCTION_MEMO = 10_000;

/** Creates the application service. */
export function createApplicationService({
  db,
  clock,
  newId,
  randomBytes,
  config,
  logger,
}: CoreDeps): ApplicationService {
  const state: ApplicationState = { db, newId, randomBytes, config, logger, now: () => unixSeconds(clock.now()) };
  /** Applications known to be production ones (on real time): no read of their clock again. */
  const production = new Set<string>();

  return {
    /**
     * First-start bootstrap: makes the default application and its key when the database is empty, and makes
     * `AGENTPOST_API_KEY` a valid key of it. Returns the key when one was generated (to be printed once).
     */
    ensureDefaultApplication: (): Promise<{ application: ApplicationInfo; generatedKey?: string }> =>
      ensureDefaultApplication(state),

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
      testMode?: boolean | undefined;
    }): Promise<{ application: ApplicationInfo; apiKey: string }> {
      const apiKey = newApiKey(randomBytes(32));
      // A test clock starts at the real time of the application's creation.
      const clockAt = input.testMode ? outsideTestClock(() => clock.now().getTime()) : null;
      const id = await db.write(async (tx) => {
        const id = await insertApplication(state, tx, input.name, input.plan, false, clockAt);
        await insertKey(state, tx, id, 'default', apiKey);
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

    async testClockOf(applicationId: string): Promise<number | undefined> {
      if (production.has(applicationId)) return undefined;
      const [row] = await testClockRow(db.orm, { application: applicationId });
      if (row?.at != null) return row.at;
      // Production (or unknown, as a deleted application): an application never changes mode.
      if (row) {
        if (production.size >= PRODUCTION_MEMO) production.clear();
        production.add(applicationId);
      }
      return undefined;
    },

    advanceTestClock: (applicationId: string, at: number) => db.write((tx) => moveTestClock(tx, applicationId, at)),

    /** The application with this id, or a 404. */
    getApplication: (applicationId: string): Promise<ApplicationInfo> => getApplication(state, applicationId),

    createKey: (applicationId, options) => createKey(state, applicationId, options),
    listKeys: (applicationId, viewer) => listKeys(state, applicationId, viewer),
    getKey: (applicationId, keyId, viewer) => getKey(state, applicationId, keyId, viewer),
    revokeKey: (applicationId, keyId, viewer) => revokeKey(state, applicationId, keyId, viewer),

    /** Resolves a Bearer key to its application; anything else is a 401. */
    authenticateApiKey: (key: string | undefined): Promise<Principal> => authenticateApiKey(state, key),
    openDashboardSession: (key, lifetimeSeconds, replacing) =>
      openDashboardSession(state, key, lifetimeSeconds, replacing),
    resumeDashboardSession: (sessionId) => resumeDashboardSession(state, sessionId),
    closeDashboardSession: (sessionId) => closeDashboardSession(state, sessionId),

    /**
     * Issues a service account: an RSA key pair whose public half is kept. The private key is returned once,
     * in the form the `nylas` SDK's `ServiceAccountSigner` takes (`privateKeyPem`, `privateKeyId`).
     */
    createServiceAccount: (applicationId: string): Promise<ServiceAccountCredentials> =>
      createServiceAccount(state, applicationId),

    /**
     * Verifies a service-account signature: known key id, timestamp within five minutes, a nonce never seen
     * before (remembered until the window passes), and an RSA-SHA256 signature over the canonical request.
     */
    authenticateSignedRequest: (request: SignedRequest): Promise<Principal> =>
      authenticateSignedRequest(state, request),
  };
}
