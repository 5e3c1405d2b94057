/**
 * The one place HTTP maps errors: AppError and ZodError to the error body of the face that received the request,
 * with the right status. `/v3` answers the Nylas envelope `{request_id, error: {type, message}}`; `/mcp` answers a
 * JSON-RPC error `{jsonrpc: "2.0", error: {code, message, data: {type, request_id}}, id: null}`, the shape its
 * transport (and every MCP client) reads. The Node server's own refusals (server/http-limits.ts) use the same bodies.
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ZodError } from 'zod';
import { AppError, type ErrorCode } from '../../src/index.js';
import type { AppEnv } from '../types.js';

/** HTTP status and Nylas `error.type` of each error code. */
export const HTTP_ERRORS: Record<ErrorCode, { status: ContentfulStatusCode; type: string }> = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
  unauthorized: { status: 401, type: 'unauthorized' },
  forbidden: { status: 403, type: 'forbidden' },
  not_found: { status: 404, type: 'not_found_error' },
  conflict: { status: 409, type: 'conflict_error' },
  payload_too_large: { status: 413, type: 'request_too_large' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  upstream_error: { status: 502, type: 'provider_error' },
  unavailable: { status: 503, type: 'service_unavailable' },
  internal: { status: 500, type: 'unexpected_error' },
};

/** The faces of the HTTP server: each answers errors in its own shape. */
export type Face = 'v3' | 'mcp';

/** The face of a request path (`/mcp` is MCP; everything else, `/v3` and `/healthz`, answers as Nylas does). */
export function faceOf(path: string): Face {
  return path === '/mcp' || path.startsWith('/mcp?') || path.startsWith('/mcp/') ? 'mcp' : 'v3';
}

/**
 * JSON-RPC error codes on `/mcp`: -32600 (Invalid Request) for requests refused as sent, -32603 (Internal error)
 * for our faults, and -32000 (the start of JSON-RPC's implementation-defined server errors, as the MCP SDK's own
 * transport uses it) for the rest. `error.data.type` carries the Nylas type, so clients can tell them apart.
 */
const JSON_RPC_CODES: Partial<Record<string, number>> = {
  invalid_request_error: -32600,
  request_too_large: -32600,
  request_timeout: -32600,
  not_found_error: -32600,
  unexpected_error: -32603,
};

/** The error body of a face: the Nylas envelope on `/v3`, a JSON-RPC error on `/mcp`. */
export function errorBody(face: Face, requestId: string, type: string, message: string): Record<string, unknown> {
  if (face === 'mcp') return { jsonrpc: '2.0', error: { code: JSON_RPC_CODES[type] ?? -32000, message, data: { type, request_id: requestId } }, id: null };
  return { request_id: requestId, error: { type, message } };
}

/** `details` of a `rate_limited` AppError: how long to wait, sent as `Retry-After`. */
export interface RateLimitDetails {
  retryAfterSeconds: number;
}

/** Error codes of the 4xx statuses Hono's own HTTPException may carry. */
const HTTP_EXCEPTION_CODES: Partial<Record<number, ErrorCode>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  429: 'rate_limited',
};

/** Longest path part echoed in an error message: a path part can be a client's 100 KB metadata key. */
const MAX_ECHOED_PATH_PART = 64;

/** `field.path: message; …` for the first few issues, so the caller knows what to fix. */
export function describeZodError(error: ZodError): string {
  const part = (segment: PropertyKey) => {
    const text = String(segment);
    return text.length > MAX_ECHOED_PATH_PART ? `${text.slice(0, MAX_ECHOED_PATH_PART)}…` : text;
  };
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.map(part).join('.') : 'body'}: ${issue.message}`)
    .join('; ');
}

/** Writes the error envelope for any thrown value. */
export function errorResponse(c: Context<AppEnv>, error: unknown): Response {
  const requestId = c.get('requestId') ?? '';
  let code: ErrorCode = 'internal';
  let message = 'An unexpected error occurred; it has been logged.';
  if (error instanceof AppError) {
    code = error.code;
    message = error.message;
  } else if (error instanceof ZodError) {
    code = 'invalid_request';
    message = describeZodError(error);
  } else if (error instanceof HTTPException && error.status < 500) {
    // Thrown by Hono itself or its middleware (for example a malformed body): keep its status class.
    code = HTTP_EXCEPTION_CODES[error.status] ?? 'invalid_request';
    message = error.message || HTTP_ERRORS[code].type;
  }
  if (code === 'internal') {
    c.get('logger')?.error('request failed', { request_id: requestId, path: c.req.path, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
  const { status, type } = HTTP_ERRORS[code];
  // An over-size body is answered before it is read; the rest of it is still on the socket, so the connection
  // cannot carry another request. Saying so keeps clients from reusing it (they would see a reset instead).
  if (code === 'payload_too_large') c.header('Connection', 'close');
  const retryAfter = error instanceof AppError && code === 'rate_limited' ? (error.details as RateLimitDetails | undefined)?.retryAfterSeconds : undefined;
  if (retryAfter !== undefined) c.header('Retry-After', String(retryAfter));
  return c.json(errorBody(faceOf(c.req.path), requestId, type, message), status);
}
