/**
 * Authentication: `Authorization: Bearer <API key>` on every `/v3` route; on `/v3/admin/*` also a
 * Nylas service-account signature (`X-Nylas-Kid`, `X-Nylas-Timestamp`, `X-Nylas-Nonce`, `X-Nylas-Signature`).
 * Failed attempts count against the client address; an address over its budget gets 429 before any check.
 */
import type { Context, MiddlewareHandler } from 'hono';
import {
  AppError,
  HTTP_ERRORS,
  assertGrantReached,
  mayCall,
  permissionError,
  permissionsFor,
  type Core,
  type RefusedKey,
} from '../../src/index.js';
import type { AppEnv } from '../types.js';
import { peerAddress, type RateLimiter } from './rate-limit.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Authenticates the request and sets `principal`. */
export function authenticate(core: Core, limiter: RateLimiter): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    limiter.checkAddress(c);
    try {
      await identify(core, c);
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthorized') {
        limiter.failedAuthentication(c);
        recordRefusal(core, c, error);
      }
      throw error;
    }
    await next();
  };
}

/**
 * Records a refused authentication in the access log with what is known: the face, the client's address, the
 * request id, and the application and key when the key was one (revoked, expired).
 */
function recordRefusal(core: Core, c: Context<AppEnv>, error: AppError): void {
  const known = error.details as RefusedKey | undefined;
  const mcp = c.req.path === '/mcp';
  core.accessLog.record({
    applicationId: known?.applicationId,
    key: known?.key,
    face: mcp ? 'mcp' : 'http',
    operation: 'authenticate',
    status: HTTP_ERRORS.unauthorized.status,
    errorType: HTTP_ERRORS.unauthorized.type,
    address: peerAddress(c),
    requestId: c.get('requestId'),
  });
}

/**
 * For a route written by hand (not an operation): refuses the request as the operation `like` would be refused, a
 * 403 for a missing permission, a 404 for a grant outside the key's scope (src/operations/authorize.ts).
 */
export async function authorizeAs(c: Context<AppEnv>, like: string, grantRef: string): Promise<void> {
  const principal = c.get('principal');
  if (!mayCall(principal, { name: like })) throw permissionError(permissionsFor(like)[0]!, like);
  await assertGrantReached(c.get('core'), principal, grantRef);
}

/** Sets `principal` from the request's API key or service-account signature; anything else is a 401. */
async function identify(core: Core, c: Context<AppEnv>): Promise<void> {
  const authorization = c.req.header('authorization');
  const signature = c.req.header('x-nylas-signature');
  if (authorization) {
    const match = BEARER.exec(authorization);
    c.set('principal', await core.accounts.applications.authenticateApiKey(match?.[1]));
  } else if (signature && new URL(c.req.url).pathname.startsWith('/v3/admin/')) {
    const method = c.req.method;
    const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? await c.req.text() : undefined;
    c.set(
      'principal',
      await core.accounts.applications.authenticateSignedRequest({
        keyId: c.req.header('x-nylas-kid') ?? '',
        timestamp: c.req.header('x-nylas-timestamp') ?? '',
        nonce: c.req.header('x-nylas-nonce') ?? '',
        signature,
        method,
        path: new URL(c.req.url).pathname,
        body: body || undefined,
      }),
    );
  } else {
    throw new AppError('unauthorized', 'Unauthorized: send Authorization: Bearer <API_KEY>.');
  }
}
