/**
 * @module ports/http
 * Outbound HTTP to third-party endpoints (the real client: src/system/http-requester.ts).
 */

/** One outbound HTTP request to a third-party endpoint (webhook challenge or delivery). */
export interface OutboundHttpRequest {
  url: URL;
  /**
   * The address the core resolved and checked. The connection goes to it and nowhere else (no second DNS
   * look-up, so a rebinding name cannot swap in another address); TLS still verifies `url.hostname`.
   */
  address: { address: string; family: 4 | 6 };
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: Uint8Array | undefined;
  /** The whole exchange (connect, send, response body) must finish within this many milliseconds. */
  timeoutMs: number;
  /** Response body bytes kept at most; the rest is discarded. */
  maxResponseBytes: number;
}

/** The answer to an {@link OutboundHttpRequest}. Redirects are returned as they are, never followed. */
export interface OutboundHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * A `fetch`-like HTTP client for requests to third-party endpoints. It rejects on network errors and timeouts.
 * The default is `nodeHttpRequester` (src/system/http-requester.ts).
 */
export type HttpRequester = (request: OutboundHttpRequest) => Promise<OutboundHttpResponse>;
