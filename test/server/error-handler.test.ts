import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorResponse } from '../../server/middleware/error-handler.js';
import type { AppEnv } from '../../server/types.js';
import { AppError, createLogger } from '../../src/index.js';

/** A bare app that throws `error` and maps it with the one HTTP error mapper. */
async function answer(error: unknown): Promise<{
  status: number;
  body: { request_id: string; error: { type: string; message: string } };
  connection: string | null;
}> {
  const app = new Hono<AppEnv>();
  app.use('*', async (c, next) => {
    c.set('requestId', 'req-1');
    c.set('logger', createLogger('silent'));
    await next();
  });
  app.onError((thrown, c) => errorResponse(c, thrown));
  app.get('/', () => {
    throw error;
  });
  const response = await app.request('/');
  return {
    status: response.status,
    body: (await response.json()) as { request_id: string; error: { type: string; message: string } },
    connection: response.headers.get('connection'),
  };
}

describe('errorResponse', () => {
  it.each([
    ['invalid_request', 400, 'invalid_request_error'],
    ['unauthorized', 401, 'unauthorized'],
    ['forbidden', 403, 'forbidden'],
    ['not_found', 404, 'not_found_error'],
    ['conflict', 409, 'conflict_error'],
    ['payload_too_large', 413, 'request_too_large'],
    ['rate_limited', 429, 'rate_limit_error'],
    ['upstream_error', 502, 'provider_error'],
    ['unavailable', 503, 'service_unavailable'],
    ['timeout', 504, 'provider_error'],
  ] as const)('maps AppError %s to %i %s with its message', async (code, status, type) => {
    const result = await answer(new AppError(code, `field: ${code} happened`));
    expect(result.status).toBe(status);
    expect(result.body).toEqual({ request_id: 'req-1', error: { type, message: `field: ${code} happened` } });
  });

  // Issue 39: the rest of an over-size body is read and dropped (test/server/oversize-body.test.ts), so the
  // connection stays usable after a 413.
  it('keeps the connection after a 413', async () => {
    expect((await answer(new AppError('payload_too_large', 'too big'))).connection).toBeNull();
    expect((await answer(new AppError('not_found', 'x'))).connection).toBeNull();
  });

  it('names the fields of a zod error', async () => {
    const parsed = z
      .object({ settings: z.object({ email: z.email() }), limit: z.number() })
      .safeParse({ settings: { email: 'x' }, limit: 'a' });
    const result = await answer(parsed.error);
    expect(result.status).toBe(400);
    expect(result.body.error.message).toContain('settings.email: ');
    expect(result.body.error.message).toContain('limit: ');
  });

  it('keeps the status of a Hono HTTPException', async () => {
    const result = await answer(new HTTPException(401, { message: 'no entry' }));
    expect(result.status).toBe(401);
    expect(result.body.error).toEqual({ type: 'unauthorized', message: 'no entry' });
  });

  it('hides the details of anything else behind a generic 500', async () => {
    const result = await answer(new Error('database password is hunter2'));
    expect(result.status).toBe(500);
    expect(result.body.error.type).toBe('unexpected_error');
    expect(result.body.error.message).not.toContain('hunter2');
  });
});
