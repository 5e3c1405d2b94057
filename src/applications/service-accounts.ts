/**
 * @module applications/service-accounts
 * The application service's service accounts (./application-service.ts): issuing one (an RSA key pair whose public
 * half is kept) and verifying the signature of a request made with it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { eq, lt } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import { canonicalJson, verifySignature } from './credentials.js';
import type { ServiceAccountCredentials, SignedRequest } from './contracts.js';
import { getApplication, type ApplicationState } from './application-state.js';

/** How far a signed request's timestamp may be from our clock, either way. */
const SIGNATURE_WINDOW_SECONDS = 5 * 60;

/**
 * Issues a service account: an RSA key pair whose public half is kept. The private key is returned once,
 * in the form the `nylas` SDK's `ServiceAccountSigner` takes (`privateKeyPem`, `privateKeyId`).
 */
export async function createServiceAccount(
  state: ApplicationState,
  applicationId: string,
): Promise<ServiceAccountCredentials> {
  const application = await getApplication(state, applicationId);
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const id = state.newId();
  await state.db.write((tx) =>
    tx.insert(tables.serviceAccounts).values({
      id,
      applicationId,
      publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      createdAt: state.now(),
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
}

/**
 * Verifies a service-account signature: known key id, timestamp within five minutes, a nonce never seen
 * before (remembered until the window passes), and an RSA-SHA256 signature over the canonical request.
 */
export async function authenticateSignedRequest(state: ApplicationState, request: SignedRequest): Promise<Principal> {
  const { db } = state;
  const reject = (why: string) => new AppError('unauthorized', `Unauthorized: ${why}`);
  const timestamp = Number(request.timestamp);
  if (!Number.isInteger(timestamp)) throw reject('X-Nylas-Timestamp must be a Unix time in seconds.');
  const current = state.now();
  if (Math.abs(current - timestamp) > SIGNATURE_WINDOW_SECONDS)
    throw reject('X-Nylas-Timestamp is more than 5 minutes from the server clock.');
  if (!/^[A-Za-z0-9_-]{8,128}$/.test(request.nonce)) throw reject('X-Nylas-Nonce must be 8 to 128 letters or digits.');
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
}
