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
  /** What the request names existed but is no longer kept (an event stream's cursor older than the retention). */
  | 'gone'
  | 'payload_too_large'
  /** Well-formed, but what it names cannot be processed (an attachment that cannot be read: a zip bomb, a damaged PDF). */
  | 'unprocessable'
  | 'rate_limited'
  | 'upstream_error'
  | 'unavailable'
  | 'timeout'
  /** The caller's own deadline passed before what it waited for happened (wait_for_message's timeout). */
  | 'request_timeout'
  | 'internal';

/** Options of an {@link AppError}: the cause, and a more precise error type than its code's. */
export interface AppErrorOptions extends ErrorOptions {
  /**
   * The Nylas `error.type` to answer instead of the code's usual one (`sending_paused` for a 403 `forbidden`): the
   * status and everything else still follow the code. Faces show it where they show a type: HTTP and `/mcp` in
   * `error.type`, MCP tool results and AI SDK tool errors in the text's prefix.
   */
  type?: string | undefined;
}

/** The error every core operation throws. `message` is written for the caller (a developer or a model). */
export class AppError extends Error {
  override readonly name = 'AppError';
  /** The error's own type, when it has one more precise than its code's (see {@link AppErrorOptions.type}). */
  readonly type: string | undefined;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    options?: AppErrorOptions,
  ) {
    super(message, options);
    this.type = options?.type;
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
