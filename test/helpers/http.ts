/** Plain `fetch` calls against a running service, for what the SDK cannot send (raw bodies, bad headers). */

/** A response with its JSON body parsed (or `undefined` when the body is not JSON). */
export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** Options of {@link request}. */
export interface RequestOptions {
  /** Sent as `Authorization: Bearer <key>` unless undefined. */
  key?: string | undefined;
  /** A value is sent as JSON; a string is sent verbatim. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Sends one request to `baseUrl + path` and reads the whole answer. */
export async function request(
  baseUrl: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<JsonResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** Asserts nothing; returns true when a body is the Nylas error envelope `{request_id, error: {type, message}}`. */
export function isErrorEnvelope(body: unknown): boolean {
  const value = body as { request_id?: unknown; error?: { type?: unknown; message?: unknown } } | undefined;
  return (
    typeof value?.request_id === 'string' &&
    typeof value.error?.type === 'string' &&
    typeof value.error.message === 'string'
  );
}
