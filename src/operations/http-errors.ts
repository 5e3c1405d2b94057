/**
 * @module operations/http-errors
 * The HTTP error table and envelopes, next to the registry whose `http` bindings they answer for: each error code's
 * status and Nylas `error.type`, and the error body of each face. Plain data and functions (no Hono), so the server
 * maps thrown errors with it (server/middleware/error-handler.ts) and the remote tool executor (tools/executor.ts)
 * reads a `/v3` status back into the code it stands for, without either face importing the other.
 */
import { ZodError } from 'zod';
import type { RateLimitDetails } from '../access.js';
import { AppError, HTTP_ERRORS, type ErrorCode, type HttpErrorStatus } from '../errors.js';

export { HTTP_ERRORS, type HttpErrorStatus } from '../errors.js';

/** The inverse of the table: each status back to the one error code it stands for. */
const CODE_OF_STATUS = new Map<number, ErrorCode>(
  (Object.entries(HTTP_ERRORS) as [ErrorCode, { status: number }][]).map(([code, { status }]) => [status, code]),
);

/** The error code an HTTP status stands for (`404` → `not_found`), or undefined for a status the table does not use. */
export function errorCodeOfStatus(status: number): ErrorCode | undefined {
  return CODE_OF_STATUS.get(status);
}

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
  if (face === 'mcp')
    return {
      jsonrpc: '2.0',
      error: { code: JSON_RPC_CODES[type] ?? -32000, message, data: { type, request_id: requestId } },
      id: null,
    };
  return { request_id: requestId, error: { type, message } };
}

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

/** What an HTTP face answers for a thrown value: code, status, Nylas type, message and, for `rate_limited`, the wait. */
export interface HttpError {
  code: ErrorCode;
  status: HttpErrorStatus;
  type: string;
  message: string;
  retryAfterSeconds?: number;
}

/** The generic message of an `internal` error: its cause is logged, never sent. */
const INTERNAL_MESSAGE = 'An unexpected error occurred; it has been logged.';

/**
 * The HTTP error for an AppError, a ZodError (`invalid_request`) or anything else (`internal`, with a generic
 * message). Transport-specific errors (Hono's HTTPException) are the server's to map first.
 */
export function httpErrorOf(error: unknown): HttpError {
  let code: ErrorCode = 'internal';
  let message = INTERNAL_MESSAGE;
  let type: string | undefined;
  if (error instanceof AppError) {
    code = error.code;
    message = error.message;
    // An error with a type of its own (sending_paused) keeps it; its status is still its code's.
    if (code !== 'internal') type = error.type;
  } else if (error instanceof ZodError) {
    code = 'invalid_request';
    message = describeZodError(error);
  }
  const retryAfterSeconds =
    error instanceof AppError && code === 'rate_limited'
      ? (error.details as RateLimitDetails | undefined)?.retryAfterSeconds
      : undefined;
  return {
    code,
    ...HTTP_ERRORS[code],
    ...(type !== undefined ? { type } : {}),
    message,
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
  };
}
