/**
 * Hosted OAuth's routes that speak OAuth's own wire rather than the Nylas envelope (Nylas v3 §2.3): the browser's
 * steps `GET /v3/connect/auth` and `GET /v3/connect/callback` (redirects; no API key: a browser makes them), the token
 * endpoint `POST /v3/connect/token` (an unenveloped answer; the API key as `client_secret` or as the bearer, or none
 * with PKCE) and `POST /v3/connect/revoke` (RFC 7009); and the hosted IMAP form's post, `POST /v3/connect/imap`
 * (./connect-form.ts renders the form). They sit on the root app, before the authenticated `/v3`; the
 * work is `core.accounts.oauth`. Token info and provider detection are operations (src/operations/oauth.ts).
 */
import type { Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError, mayCall, permissionError, permissionsFor } from '../../src/index.js';
import { AuthorizeQuerySchema } from '../../src/schemas/oauth.js';
import { errorResponse } from '../middleware/error-handler.js';
import { imapFormResponse, refusedPage } from './connect-form.js';
import type { RateLimiter } from '../middleware/rate-limit.js';
import type { AppEnv } from '../types.js';

/** The cookie that binds a sign-in to the browser that started it. */
const BINDING_COOKIE = 'agentpost_oauth';

/** The flow's binding cookie (`value` empty with `maxAge` 0 clears it). */
const bindingCookie = (value: string, maxAge: number, secure = '') =>
  `${BINDING_COOKIE}=${value}; Path=/v3/connect; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure}`;

/** The most the hosted IMAP form's post may be (its fields are bounded at 2 KB each). */
const MAX_FORM_BODY_BYTES = 32 * 1024;

/** The most a token or revocation request body may be (a few hundred bytes in practice). */
const MAX_OAUTH_BODY_BYTES = 64 * 1024;

const BEARER = /^Bearer\s+(\S+)\s*$/i;

function cookieOf(c: Context<AppEnv>, name: string): string | undefined {
  for (const part of (c.req.header('cookie') ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

/** This service's origin as the browser reached it (the callback's, unless AGENTPOST_PUBLIC_URL is set). */
function originOf(c: Context<AppEnv>): string {
  return new URL(c.req.url).origin;
}

/** A redirect that no cache keeps. */
function redirect(c: Context<AppEnv>, location: string, cookie?: string): Response {
  const headers: Record<string, string> = { location, 'cache-control': 'no-store' };
  if (cookie !== undefined) headers['set-cookie'] = cookie;
  return c.body(null, 302, headers);
}

/** A token or revocation request's fields: JSON, or form-encoded as OAuth clients send them. */
async function formOrJson(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  if (/^application\/x-www-form-urlencoded\b/i.test(c.req.header('content-type') ?? '')) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new AppError('invalid_request', 'body: send a JSON object or a form-encoded body.', {
    oauth_error: 'invalid_request',
  });
}

/** An OAuth error answer (RFC 6749 §5.2), with Nylas' `error_code` and the request id. */
function oauthErrorResponse(c: Context<AppEnv>, error: unknown): Response {
  if (!(error instanceof AppError) || error.code === 'rate_limited') return errorResponse(c, error);
  const details = error.details as { oauth_error?: string } | undefined;
  const oauthError = details?.oauth_error ?? (error.code === 'unauthorized' ? 'invalid_client' : 'invalid_request');
  const status = oauthError === 'invalid_client' ? 401 : error.code === 'upstream_error' ? 502 : 400;
  return c.json(
    {
      error: oauthError,
      error_code: oauthError,
      error_description: error.message,
      request_id: c.get('requestId') ?? '',
    },
    status,
    { 'cache-control': 'no-store' },
  );
}

/** Mounts the routes on the root app (outside the authenticated `/v3`), before `/v3`. */
export function mountConnect(app: Hono<AppEnv>, limiter: RateLimiter): void {
  const limit = bodyLimit({
    maxSize: MAX_OAUTH_BODY_BYTES,
    onError: () => {
      throw new AppError('payload_too_large', `An OAuth request body may be at most ${MAX_OAUTH_BODY_BYTES} bytes.`);
    },
  });

  app.get('/v3/connect/auth', async (c) => {
    const query = AuthorizeQuerySchema.parse(c.req.query());
    const secure = new URL(c.req.url).protocol === 'https:' ? '; Secure' : '';
    const step = await c.get('core').accounts.oauth.authorize(query, originOf(c));
    const cookie = step.binding !== undefined ? bindingCookie(step.binding, 900, secure) : undefined;
    if ('form' in step) return imapFormResponse(c, step.form, 200, cookie);
    return redirect(c, step.location, cookie);
  });

  // The hosted IMAP form's post (src/oauth/imap-form.ts): a password guessed here counts as a failed authentication.
  app.post(
    '/v3/connect/imap',
    bodyLimit({
      maxSize: MAX_FORM_BODY_BYTES,
      onError: () => {
        throw new AppError('payload_too_large', `The form is larger than ${MAX_FORM_BODY_BYTES / 1024} KB.`);
      },
    }),
    async (c) => {
      limiter.checkAddress(c);
      const body = await c.req.parseBody();
      const fields: Record<string, string> = {};
      for (const [name, value] of Object.entries(body)) if (typeof value === 'string') fields[name] = value;
      let answer;
      try {
        answer = await c.get('core').accounts.oauth.submitImapForm(fields, cookieOf(c, BINDING_COOKIE));
      } catch (error) {
        if (!(error instanceof AppError) || (error.code !== 'invalid_request' && error.code !== 'forbidden'))
          throw error;
        return await refusedPage(c, error.code === 'forbidden' ? 403 : 400, error.message);
      }
      if ('form' in answer) {
        // The form comes back only when the logins were refused: a failed authentication of this client.
        limiter.failedAuthentication(c);
        return imapFormResponse(c, answer.form, 400);
      }
      return redirect(c, answer.location, bindingCookie('', 0));
    },
  );

  app.get('/v3/connect/callback', async (c) => {
    const step = await c.get('core').accounts.oauth.callback(c.req.query(), cookieOf(c, BINDING_COOKIE));
    return redirect(c, step.location, bindingCookie('', 0));
  });

  app.post('/v3/connect/token', limit, async (c) => {
    try {
      limiter.checkAddress(c);
      const bearer = BEARER.exec(c.req.header('authorization') ?? '')?.[1];
      const answer = await c.get('core').accounts.oauth.token(await formOrJson(c), bearer);
      return c.json(answer, 200, { 'cache-control': 'no-store', pragma: 'no-cache' });
    } catch (error) {
      if (error instanceof AppError && error.code === 'unauthorized') limiter.failedAuthentication(c);
      return oauthErrorResponse(c, error);
    }
  });

  app.post('/v3/connect/revoke', limit, async (c) => {
    try {
      limiter.checkAddress(c);
      const bearer = BEARER.exec(c.req.header('authorization') ?? '')?.[1];
      const core = c.get('core');
      let principal;
      try {
        principal = await core.accounts.applications.authenticateApiKey(bearer);
      } catch (error) {
        limiter.failedAuthentication(c);
        throw error;
      }
      // Revoking is what reading a token's information is: the application's own business.
      if (!mayCall(principal, { name: 'get_token_info' })) {
        throw permissionError(permissionsFor('get_token_info')[0]!, 'revoke');
      }
      const body = await formOrJson(c);
      const token = c.req.query('token') ?? (typeof body.token === 'string' ? body.token : undefined);
      if (!token || token.length > 16_384) {
        throw new AppError('invalid_request', 'token: give the token to revoke.', { oauth_error: 'invalid_request' });
      }
      await core.accounts.oauth.revoke(principal, token);
      return c.json({ request_id: c.get('requestId') ?? '' }, 200);
    } catch (error) {
      return oauthErrorResponse(c, error);
    }
  });
}
