/**
 * The one place HTTP maps errors: AppError and ZodError to the error body of the face that received the request,
 * with the right status. `/v3` answers the Nylas envelope `{request_id, error: {type, message}}`; `/mcp` answers a
 * JSON-RPC error `{jsonrpc: "2.0", error: {code, message, data: {type, request_id}}, id: null}`, the shape its
 * transport (and every MCP client) reads. The table and the bodies are plain data in src/operations/http-errors.ts;
 * this module adds what only Hono knows (its HTTPException, the context). The Node server's own refusals
 * (server/http-limits.ts) use the same bodies.
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { HTTP_ERRORS, errorBody, errorCodeOfStatus, faceOf, httpErrorOf, type HttpError } from '../../src/index.js';
import type { AppEnv } from '../types.js';

/** The HTTP error of Hono's own 4xx HTTPException (for example a malformed body): it keeps its status class. */
function fromHttpException(error: HTTPException): HttpError {
  const code = errorCodeOfStatus(error.status) ?? 'invalid_request';
  return { code, ...HTTP_ERRORS[code], message: error.message || HTTP_ERRORS[code].type };
}

/** Writes the error envelope for any thrown value. */
export function errorResponse(c: Context<AppEnv>, error: unknown): Response {
  const requestId = c.get('requestId') ?? '';
  const { code, status, type, message, retryAfterSeconds } =
    error instanceof HTTPException && error.status < 500 ? fromHttpException(error) : httpErrorOf(error);
  if (code === 'internal') {
    c.get('logger')?.error('request failed', {
      request_id: requestId,
      path: c.req.path,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
  // An over-size body is answered before it is read; the rest of it is read and dropped (server/http-limits.ts
  // discardUnreadBodies), so the client finishes writing, reads this answer, and may reuse the connection.
  if (retryAfterSeconds !== undefined) c.header('Retry-After', String(retryAfterSeconds));
  return c.json(errorBody(faceOf(c.req.path), requestId, type, message), status);
}
