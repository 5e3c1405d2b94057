/**
 * Authentication: `Authorization: Bearer <API key>` on every `/v3` route; on `/v3/admin/*` also a
 * Nylas service-account signature (`X-Nylas-Kid`, `X-Nylas-Timestamp`, `X-Nylas-Nonce`, `X-Nylas-Signature`).
 */
import type { MiddlewareHandler } from 'hono';
import { AppError, type Core } from '../../src/index.js';
import type { AppEnv } from '../types.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Authenticates the request and sets `principal`. */
export function authenticate(core: Core): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    const signature = c.req.header('x-nylas-signature');
    if (authorization) {
      const match = BEARER.exec(authorization);
      c.set('principal', await core.applications.authenticateApiKey(match?.[1]));
    } else if (signature && new URL(c.req.url).pathname.startsWith('/v3/admin/')) {
      const method = c.req.method;
      const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? await c.req.text() : undefined;
      c.set(
        'principal',
        await core.applications.authenticateSignedRequest({
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
    await next();
  };
}
