/**
 * @module server
 * `createApp({ core })` builds the Hono app: `/v3` (Nylas-compatible, built from the operations registry)
 * and `/healthz`. It never listens; `server/main.ts` does.
 */
import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError, operations, type Core } from '../src/index.js';
import { bindOperation } from './bind-operation.js';
import { buildOpenApiDocument } from './openapi.js';
import { mountMcp } from './routes/mcp.js';
import { authenticate } from './middleware/auth.js';
import { errorResponse } from './middleware/error-handler.js';
import type { AppEnv } from './types.js';

/** JSON requests are limited to 3 MB, as in Nylas v3 (larger sends use multipart). */
export const MAX_JSON_BODY_BYTES = 3 * 1024 * 1024;

/** Options of {@link createApp}. */
export interface CreateAppOptions {
  core: Core;
}

/** Builds the HTTP application. */
export function createApp({ core }: CreateAppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.use('*', async (c, next) => {
    const requestId = randomUUID();
    c.set('requestId', requestId);
    c.set('core', core);
    c.set('logger', core.deps.logger);
    c.header('x-request-id', requestId);
    await next();
    c.header('x-request-id', requestId);
  });
  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) => errorResponse(c, new AppError('not_found', `No route ${c.req.method} ${new URL(c.req.url).pathname}.`)));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  const openApi = buildOpenApiDocument(operations, { version: '0.1.0' });
  app.get('/v3/openapi.json', (c) => c.json(openApi));
  mountMcp(app, core);

  const v3 = new Hono<AppEnv>();
  v3.use(
    '*',
    bodyLimit({
      maxSize: MAX_JSON_BODY_BYTES,
      onError: () => {
        throw new AppError('payload_too_large', `The request body is larger than the ${MAX_JSON_BODY_BYTES / 1024 / 1024} MB limit for JSON requests.`);
      },
    }),
  );
  v3.use('*', authenticate(core));
  for (const operation of operations) bindOperation(v3, operation);
  app.route('/v3', v3);
  return app;
}
