/**
 * @module storage/connection-settings
 * SQLite settings that belong to a connection, not to the database, applied on a libSQL server (sqld, Turso).
 * The server opens one connection per stream, and `@libsql/client` opens a stream for every statement, batch and
 * transaction, so a `PRAGMA foreign_keys = ON` run once at start reaches one short-lived connection only: every
 * later write transaction would run without foreign keys (and without their ON DELETE CASCADE). The statements are
 * therefore sent first on every new stream, in the same request (no extra round trip), and their results are taken
 * out of the response before the client reads it.
 */

/** Statements every new stream on a libSQL server runs first. */
export const CONNECTION_SETTINGS = ['PRAGMA foreign_keys = ON'] as const;

/** The part of a Hrana-over-HTTP v2 pipeline body this module reads and writes. */
interface PipelineBody {
  baton?: string | null;
  requests: unknown[];
}
interface PipelineAnswer {
  results: Array<{ type: string; error?: { message?: string } }>;
}

/**
 * A `fetch` for `@libsql/client`'s HTTP mode that runs `statements` at the start of every new stream (a pipeline
 * request without a baton). The client speaks Hrana over HTTP version 2 in JSON (its default); any other encoding
 * of a pipeline is refused rather than sent without the settings.
 */
export function withConnectionSettings(
  statements: readonly string[],
  fetchImpl: typeof fetch = globalThis.fetch,
): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    if (request.method !== 'POST' || !new URL(request.url).pathname.endsWith('/pipeline')) return fetchImpl(request);
    if (!(request.headers.get('content-type') ?? '').startsWith('application/json')) {
      throw new Error(
        `libSQL server: a pipeline in ${request.headers.get('content-type') ?? 'an unknown encoding'} cannot carry the connection settings (only JSON is supported)`,
      );
    }
    const body = (await request.json()) as PipelineBody;
    if (body.baton != null)
      return fetchImpl(
        new Request(request.url, { method: 'POST', headers: request.headers, body: JSON.stringify(body) }),
      );
    const settings = statements.map((sql) => ({ type: 'execute', stmt: { sql, want_rows: false } }));
    const response = await fetchImpl(
      new Request(request.url, {
        method: 'POST',
        headers: request.headers,
        body: JSON.stringify({ ...body, requests: [...settings, ...body.requests] }),
      }),
    );
    if (!response.ok) return response;
    const answer = (await response.json()) as PipelineAnswer;
    const refused = answer.results.slice(0, settings.length).find((result) => result.type !== 'ok');
    if (refused)
      throw new Error(
        `libSQL server refused a connection setting (${statements.join('; ')}): ${refused.error?.message ?? refused.type}`,
      );
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(JSON.stringify({ ...answer, results: answer.results.slice(settings.length) }), {
      status: response.status,
      statusText: response.statusText,
      headers,
    });
  };
}
