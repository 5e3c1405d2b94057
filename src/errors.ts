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

/** The statuses an error response may carry: 4xx and 5xx with a body. */
export type HttpErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 410 | 413 | 422 | 429 | 500 | 502 | 503 | 504;

/**
 * HTTP status and Nylas `error.type` of each error code: how every face answers a refusal (the HTTP error envelope of
 * src/operations/http-errors.ts, the dashboard's pages, the send gate's `oversight_decision` events).
 */
export const HTTP_ERRORS: Record<ErrorCode, { status: HttpErrorStatus; type: string }> = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
  unauthorized: { status: 401, type: 'unauthorized' },
  forbidden: { status: 403, type: 'forbidden' },
  not_found: { status: 404, type: 'not_found_error' },
  conflict: { status: 409, type: 'conflict_error' },
  gone: { status: 410, type: 'gone_error' },
  payload_too_large: { status: 413, type: 'request_too_large' },
  // The request is sound, what it names is not (an attachment that cannot be read): 422, with a type of its own.
  unprocessable: { status: 422, type: 'unprocessable_entity_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  upstream_error: { status: 502, type: 'provider_error' },
  unavailable: { status: 503, type: 'service_unavailable' },
  // An upstream that did not answer in time (Smart Compose's model): Nylas answers a provider timeout 504 `provider_error`.
  timeout: { status: 504, type: 'provider_error' },
  // What a call waited for did not happen within its own timeout (wait_for_message): 408, as a request timeout.
  request_timeout: { status: 408, type: 'request_timeout' },
  internal: { status: 500, type: 'unexpected_error' },
};

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

/** Codes of a failure that may pass when tried again: ours, a dependency down or slow, or a limit for now. */
const TRANSIENT_CODES: ReadonlySet<ErrorCode> = new Set([
  'internal',
  'unavailable',
  'upstream_error',
  'timeout',
  'request_timeout',
  'rate_limited',
]);

/**
 * Whether a failure is worth trying again later (a worker postpones it) rather than final: not an AppError at all
 * (a crash of ours), a code of {@link TRANSIENT_CODES}, or a suspended grant (resuming it lets the work go on).
 */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof AppError)) return true;
  return TRANSIENT_CODES.has(error.code) || error.type === 'grant_suspended';
}
