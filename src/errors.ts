/**
 * @module errors
 * One error class for the whole core. Each transport maps it in exactly one place
 * (HTTP: src/operations/http-errors.ts with server/middleware/error-handler.ts, MCP: tools/results.ts, SMTP: src/mail/inbound-smtp.ts).
 */

/** What went wrong, independent of transport. */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'upstream_error'
  | 'unavailable'
  | 'internal';

/** The error every core operation throws. `message` is written for the caller (a developer or a model). */
export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Shorthand for the common 404, phrased the same way everywhere. */
export function notFound(what: string, id: string): AppError {
  return new AppError('not_found', `${what} ${JSON.stringify(id)} was not found.`);
}

/** Shorthand for a 400 that names the field at fault. */
export function invalid(field: string, message: string): AppError {
  return new AppError('invalid_request', `${field}: ${message}`, { field });
}
