/**
 * @module access
 * Who is calling, and with what rights: the principal a face authenticated, the context an operation runs in, and the
 * details a refusal for a spent budget carries. Areas and operations both use these, so they live below both.
 */

/** Who is calling: the application every query is scoped to. */
export interface Principal {
  applicationId: string;
  /** How the caller proved it. */
  via: 'api_key' | 'service_account' | 'local';
}

/** What a handler gets besides its input. */
export interface OperationContext {
  principal: Principal;
  requestId?: string | undefined;
  /** The origin (`scheme://host:port`) an HTTP call reached, for URLs handed back to that client. */
  origin?: string | undefined;
  /** The `Idempotency-Key` header of an HTTP call, when sent. */
  idempotencyKey?: string | undefined;
  /**
   * Called when the answer is the one stored for an earlier request with the same Idempotency-Key (a replay: nothing
   * was done again). HTTP answers such a replay with the header `Idempotent-Response: true`, as Nylas does.
   */
  onIdempotentReplay?: (() => void) | undefined;
  /** Fires when the caller went away (the HTTP client disconnected): long work may stop. */
  signal?: AbortSignal | undefined;
}

/** `details` of a `rate_limited` AppError: how long to wait, sent as `Retry-After`. */
export interface RateLimitDetails {
  retryAfterSeconds: number;
}
