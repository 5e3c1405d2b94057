/**
 * @module applications/dashboard-sessions
 * The dashboard's sessions (docs/dashboard.md): a person signs in with an API key and gets a random session id; only
 * its SHA-256 is stored, with the key's id (never the key). Each request re-reads the key by id, so a revoked or
 * expired key signs its sessions out at once, and any HTTP process can answer any request.
 */
import { createHash } from 'node:crypto';
import { eq, lte } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import { hashApiKey } from './credentials.js';
import { apiKeyById } from './application-store.js';
import { authenticateApiKey, principalOfKey } from './application-keys.js';
import type { ApplicationState } from './application-state.js';
import type { DashboardSession } from './contracts.js';

/** Bytes of randomness in a session id (256 bits). */
const SESSION_BYTES = 32;

/** The CSRF token of a session: derived from its id, so it needs no storage and cannot be guessed without the id. */
function csrfOf(sessionId: string): string {
  return createHash('sha256').update(`agentpost-dashboard-csrf\n${sessionId}`, 'utf8').digest('base64url');
}

/**
 * Signs in with an API key (a 401 as for a Bearer key when it is not valid): stores a session of `lifetimeSeconds`
 * and answers its id (for the cookie) and CSRF token. Expired sessions are deleted on the way, and so is the
 * session `replacing` names (the one the browser signed in with before: session fixation hygiene), whoever's it is.
 */
export async function openDashboardSession(
  state: ApplicationState,
  key: string,
  lifetimeSeconds: number,
  replacing?: string,
): Promise<DashboardSession> {
  const principal = await authenticateApiKey(state, key);
  if (!principal.key) throw new AppError('unauthorized', 'Unauthorized: the API key is not valid.');
  const sessionId = state.randomBytes(SESSION_BYTES).toString('base64url');
  const now = state.now();
  await state.db.write(async (tx) => {
    await tx.delete(tables.dashboardSessions).where(lte(tables.dashboardSessions.expiresAt, now));
    if (replacing !== undefined)
      await tx.delete(tables.dashboardSessions).where(eq(tables.dashboardSessions.idHash, hashApiKey(replacing)));
    await tx.insert(tables.dashboardSessions).values({
      idHash: hashApiKey(sessionId),
      applicationId: principal.applicationId,
      keyId: principal.key!.id,
      createdAt: now,
      expiresAt: now + lifetimeSeconds,
    });
  });
  return { sessionId, csrf: csrfOf(sessionId), principal, expiresAt: now + lifetimeSeconds };
}

/**
 * The session with this id, its key's principal as of now; undefined when the session is unknown or expired, or
 * its key was revoked, expired or deleted (the session is then deleted).
 */
export async function resumeDashboardSession(
  state: ApplicationState,
  sessionId: string,
): Promise<DashboardSession | undefined> {
  if (sessionId.length === 0 || sessionId.length > 128) return undefined;
  const idHash = hashApiKey(sessionId);
  const session = await state.db.orm.query.dashboardSessions.findFirst({
    where: eq(tables.dashboardSessions.idHash, idHash),
  });
  if (!session) return undefined;
  const [row] = await apiKeyById(state.db.orm, session.applicationId, session.keyId);
  let principal: Principal | undefined;
  if (session.expiresAt > state.now() && row && row.revokedAt === null)
    principal = await principalOfKey(state, row).catch((error: unknown) => {
      if (error instanceof AppError && error.code === 'unauthorized') return undefined;
      throw error;
    });
  if (!principal) {
    await closeDashboardSession(state, sessionId);
    return undefined;
  }
  return { sessionId, csrf: csrfOf(sessionId), principal, expiresAt: session.expiresAt };
}

/** Signs a session out (deletes it); nothing happens for an unknown id. */
export async function closeDashboardSession(state: ApplicationState, sessionId: string): Promise<void> {
  const idHash = hashApiKey(sessionId);
  await state.db.write((tx) => tx.delete(tables.dashboardSessions).where(eq(tables.dashboardSessions.idHash, idHash)));
}
