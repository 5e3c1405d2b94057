/**
 * A stand-in for a libSQL server (sqld, Turso) in tests. No sqld binary can be had here (neither the npm registry
 * nor Debian ship one), so this serves the libSQL remote protocol that `@libsql/client` speaks in its HTTP mode
 * (`http:`, `https:` and `libsql:` URLs) on top of a real libSQL database file, opened with the native `libsql`
 * driver, so that the client's real code path runs: its batons, interactive transactions and conditional batches.
 *
 * The subset served ("Hrana over HTTP", version 2, JSON; the sqld HTTP API v2 specification):
 * - `GET /v2` answers 200 (the version probe); `/v3` and `/v3-protobuf` answer 404, so a client that probes them
 *   falls back to v2 as it does against an older sqld. No cursors, no protobuf, no WebSockets, no namespaces.
 * - `POST /v2/pipeline` with `baton` (null opens a stream) and the requests `execute`, `batch` (conditions `ok`,
 *   `error`, `not`, `and`, `or`, `is_autocommit`), `sequence`, `describe` (columns only), `store_sql`,
 *   `close_sql`, `get_autocommit` and `close`. Each request gets its own result; an error in one does not stop
 *   the others, as in the specification.
 * - One SQLite connection per stream, with SQLite's defaults (so `PRAGMA foreign_keys` is off until the stream
 *   turns it on, and a setting made on one stream is not seen by another): an interactive transaction
 *   spans requests because its connection does. Each response carries a new baton; an old or unknown one is
 *   refused with HTTP 400. A stream idle for `streamExpiryMs` is closed (rolling back an open transaction), as
 *   sqld expires abandoned streams; a stream whose pipeline failed with an HTTP error is closed too.
 * - A connection that meets another's write lock waits for it asynchronously (retrying the statement), as sqld's
 *   connections do on their own threads; the native driver would otherwise block this whole event loop.
 * - Values: integers travel as strings (`{"type":"integer","value":"7"}`), JS numbers from the client as
 *   `float` and bound as REAL, as sqld binds them. SQLite errors answer `{ message, code }` with the primary
 *   result code (`SQLITE_CONSTRAINT`), as sqld reports them.
 * - `authToken`: requests without `Authorization: Bearer <token>` get 401.
 * - `onPipeline` lets a test see, delay or fail a pipeline before it runs (a failure answers HTTP 500 and closes
 *   the stream, rolling back its transaction: the server "crashed" before the COMMIT).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Sqlite from 'libsql';

/** A value on the wire (Hrana JSON). */
type WireValue =
  | { type: 'null' }
  | { type: 'integer'; value: string }
  | { type: 'float'; value: number }
  | { type: 'text'; value: string }
  | { type: 'blob'; base64: string };
interface WireStatement {
  sql?: string;
  sql_id?: number;
  args?: WireValue[];
  named_args?: Array<{ name: string; value: WireValue }>;
  want_rows?: boolean;
}
type WireCondition =
  | { type: 'ok' | 'error'; step: number }
  | { type: 'not'; cond: WireCondition }
  | { type: 'and' | 'or'; conds: WireCondition[] }
  | { type: 'is_autocommit' };
type WireRequest =
  | { type: 'close' | 'get_autocommit' }
  | { type: 'execute'; stmt: WireStatement }
  | { type: 'batch'; batch: { steps: Array<{ condition?: WireCondition; stmt: WireStatement }> } }
  | { type: 'sequence' | 'describe'; sql?: string; sql_id?: number }
  | { type: 'store_sql'; sql_id: number; sql: string }
  | { type: 'close_sql'; sql_id: number };
interface WireError {
  message: string;
  code?: string;
}

/** A failure of the stand-in itself, answered as it is (not as an SQLite error). */
class WireFailure extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** One pipeline as a test sees it in {@link LibsqlServer.pipelines} and `onPipeline`. */
export interface PipelineSeen {
  /** The stream's number (the same for every pipeline of one stream). */
  stream: number;
  /** True when the pipeline opened its stream (it came without a baton). */
  opened: boolean;
  /** The request types, in order. */
  types: string[];
  /** The SQL texts the pipeline runs (execute, batch steps, sequence), stored texts resolved. */
  sql: string[];
}

/** Options of {@link startLibsqlServer}. */
export interface LibsqlServerOptions {
  /** The database file served (made when missing). */
  file: string;
  /** Required bearer token, when set. */
  authToken?: string;
  /** Milliseconds after which an idle stream is closed (sqld: about 10 s). */
  streamExpiryMs?: number;
  /** Milliseconds a statement waits for another stream's write lock before it fails with SQLITE_BUSY. */
  busyTimeoutMs?: number;
  /** Called before a pipeline runs; it may wait (delaying the response) or throw (HTTP 500, the stream is closed). */
  onPipeline?: (pipeline: PipelineSeen) => void | Promise<void>;
}

/** A running stand-in. */
export interface LibsqlServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every pipeline served, in order. */
  pipelines: PipelineSeen[];
  /** Streams open now. */
  openStreams(): number;
  /** Stops listening and closes every stream's connection. */
  close(): Promise<void>;
}

interface Stream {
  id: number;
  baton: string;
  connection: Sqlite.Database;
  sqls: Map<number, string>;
  expiry: NodeJS.Timeout | undefined;
}

const delay = (ms: number) => new Promise((done) => setTimeout(done, ms));

function toValue(value: WireValue): unknown {
  switch (value.type) {
    case 'null':
      return null;
    case 'integer':
      return BigInt(value.value);
    case 'float':
      return value.value;
    case 'text':
      return value.value;
    case 'blob':
      return Buffer.from(value.base64, 'base64');
  }
}

function fromValue(value: unknown): WireValue {
  if (value === null || value === undefined) return { type: 'null' };
  if (typeof value === 'bigint') return { type: 'integer', value: value.toString() };
  if (typeof value === 'number') return { type: 'float', value };
  if (typeof value === 'string') return { type: 'text', value };
  if (Buffer.isBuffer(value)) return { type: 'blob', base64: value.toString('base64') };
  throw new Error(`libsql stand-in: cannot send a ${typeof value}`);
}

/** sqld reports the primary result code (SQLITE_CONSTRAINT_FOREIGNKEY → SQLITE_CONSTRAINT). */
function wireError(error: unknown): WireError {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const primary =
    typeof code === 'string' && code.startsWith('SQLITE_') ? code.split('_').slice(0, 2).join('_') : undefined;
  return { message: `SQLite error: ${String(message ?? error)}`, ...(primary ? { code: primary } : {}) };
}

/** Starts the stand-in on an ephemeral port of 127.0.0.1. */
export async function startLibsqlServer(options: LibsqlServerOptions): Promise<LibsqlServer> {
  const { file, streamExpiryMs = 10_000, busyTimeoutMs = 5_000 } = options;
  // sqld keeps its databases in WAL mode; the mode is stored in the file.
  const setup = new Sqlite(file);
  setup.exec('PRAGMA journal_mode = WAL');
  setup.close();

  const streams = new Map<number, Stream>();
  const pipelines: PipelineSeen[] = [];
  let nextStream = 1;

  const closeStream = (stream: Stream) => {
    clearTimeout(stream.expiry);
    streams.delete(stream.id);
    // A transaction left open is rolled back (closing the native connection alone does not release its lock).
    if (stream.connection.open) {
      if (stream.connection.inTransaction) stream.connection.exec('ROLLBACK');
      stream.connection.close();
    }
  };
  const touch = (stream: Stream) => {
    clearTimeout(stream.expiry);
    stream.expiry = setTimeout(() => closeStream(stream), streamExpiryMs);
    stream.expiry.unref();
  };

  const sqlOf = (stream: Stream, source: { sql?: string | undefined; sql_id?: number | undefined }): string => {
    if (source.sql !== undefined) return source.sql;
    const stored = source.sql_id === undefined ? undefined : stream.sqls.get(source.sql_id);
    if (stored === undefined)
      throw new WireFailure(`SQL text ${String(source.sql_id)} is not stored on this stream`, 'SQL_NOT_FOUND');
    return stored;
  };

  /** Runs `work`, retrying while another connection holds the write lock, up to the busy timeout. */
  async function patiently<T>(work: () => T): Promise<T> {
    const deadline = Date.now() + busyTimeoutMs;
    for (;;) {
      try {
        return work();
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
        await delay(2);
      }
    }
  }

  async function execute(stream: Stream, statement: WireStatement) {
    const sql = sqlOf(stream, statement);
    const { connection } = stream;
    const prepared = connection.prepare(sql);
    const named = Object.fromEntries(
      (statement.named_args ?? []).map(({ name, value }) => [name.replace(/^[:@$]/, ''), toValue(value)]),
    );
    const args: unknown[] = (statement.args ?? []).map(toValue);
    if (statement.named_args?.length) args.push(named);
    // (The native driver's pluck() does not pluck: raw rows are used instead.)
    const before = Number((connection.prepare('SELECT total_changes()').raw(true).get() as [number])[0]);
    let rows: unknown[][] = [];
    if (prepared.reader) {
      prepared.safeIntegers(true).raw(true);
      rows = await patiently(() => prepared.all(...args) as unknown[][]);
    } else {
      await patiently(() => prepared.run(...args));
    }
    const [changes, total, rowid] = connection
      .prepare('SELECT changes(), total_changes(), last_insert_rowid()')
      .raw(true)
      .safeIntegers(true)
      .get() as [bigint, bigint, bigint];
    return {
      cols: prepared.reader ? prepared.columns().map((column) => ({ name: column.name, decltype: column.type })) : [],
      rows: statement.want_rows === false ? [] : rows.map((row) => row.map(fromValue)),
      affected_row_count: Number(total) === before ? 0 : Number(changes),
      last_insert_rowid: rowid.toString(),
    };
  }

  async function batch(stream: Stream, steps: Array<{ condition?: WireCondition; stmt: WireStatement }>) {
    const results: Array<Awaited<ReturnType<typeof execute>> | null> = [];
    const errors: Array<WireError | null> = [];
    const holds = (condition: WireCondition): boolean => {
      switch (condition.type) {
        case 'ok':
          return results[condition.step] != null;
        case 'error':
          return errors[condition.step] != null;
        case 'not':
          return !holds(condition.cond);
        case 'and':
          return condition.conds.every(holds);
        case 'or':
          return condition.conds.some(holds);
        case 'is_autocommit':
          return !stream.connection.inTransaction;
      }
    };
    for (const step of steps) {
      if (step.condition && !holds(step.condition)) {
        results.push(null);
        errors.push(null);
        continue;
      }
      try {
        results.push(await execute(stream, step.stmt));
        errors.push(null);
      } catch (error) {
        results.push(null);
        errors.push(wireError(error));
      }
    }
    return { step_results: results, step_errors: errors };
  }

  async function run(stream: Stream, request: WireRequest): Promise<Record<string, unknown>> {
    switch (request.type) {
      case 'close':
        closeStream(stream);
        return { type: 'close' };
      case 'execute':
        return { type: 'execute', result: await execute(stream, request.stmt) };
      case 'batch':
        return { type: 'batch', result: await batch(stream, request.batch.steps) };
      case 'sequence': {
        const sql = sqlOf(stream, request);
        await patiently(() => stream.connection.exec(sql));
        return { type: 'sequence' };
      }
      case 'describe': {
        const prepared = stream.connection.prepare(sqlOf(stream, request));
        const cols = prepared.reader
          ? prepared.columns().map((column) => ({ name: column.name, decltype: column.type }))
          : [];
        return {
          type: 'describe',
          result: {
            params: [],
            cols,
            is_explain: /^\s*explain/i.test(prepared.source),
            is_readonly: !prepared.reader ? false : /^\s*(select|with)/i.test(prepared.source),
          },
        };
      }
      case 'store_sql':
        stream.sqls.set(request.sql_id, request.sql);
        return { type: 'store_sql' };
      case 'close_sql':
        stream.sqls.delete(request.sql_id);
        return { type: 'close_sql' };
      case 'get_autocommit':
        return { type: 'get_autocommit', is_autocommit: !stream.connection.inTransaction };
    }
  }

  function seen(stream: Stream, opened: boolean, requests: WireRequest[]): PipelineSeen {
    const sql: string[] = [];
    // Texts stored by this pipeline count too (the client stores a text and uses it in the same pipeline).
    const stored = new Map(stream.sqls);
    const resolve = (source: { sql?: string | undefined; sql_id?: number | undefined }) =>
      source.sql ?? (source.sql_id === undefined ? undefined : stored.get(source.sql_id)) ?? '?';
    for (const request of requests) {
      if (request.type === 'store_sql') stored.set(request.sql_id, request.sql);
      if (request.type === 'execute') sql.push(resolve(request.stmt));
      if (request.type === 'sequence') sql.push(resolve(request));
      if (request.type === 'batch') for (const step of request.batch.steps) sql.push(resolve(step.stmt));
    }
    return { stream: stream.id, opened, types: requests.map((request) => request.type), sql };
  }

  async function pipeline(body: { baton?: string | null; requests: WireRequest[] }, response: ServerResponse) {
    let stream: Stream;
    const opened = body.baton == null;
    if (opened) {
      const id = nextStream++;
      const connection = new Sqlite(file, { timeout: 0 });
      // The native driver turns foreign keys on for every connection it opens; SQLite's default is off, and a
      // server need not turn them on. Off here, so tests show that Agentpost turns them on itself.
      connection.exec('PRAGMA foreign_keys = OFF');
      stream = { id, baton: '', connection, sqls: new Map(), expiry: undefined };
      streams.set(id, stream);
    } else {
      const found = streams.get(Number(String(body.baton).split('.')[0]));
      if (!found || found.baton !== body.baton)
        return answer(response, 400, {
          message: 'The stream has expired or the baton is not valid',
          code: 'STREAM_EXPIRED',
        });
      stream = found;
    }
    touch(stream);
    const view = seen(stream, opened, body.requests);
    pipelines.push(view);
    try {
      await options.onPipeline?.(view);
    } catch (error) {
      closeStream(stream);
      return answer(response, 500, { message: `stand-in failure: ${String((error as Error).message ?? error)}` });
    }
    const results = [];
    for (const request of body.requests) {
      if (!streams.has(stream.id) && request.type !== 'close') {
        results.push({ type: 'error', error: { message: 'The stream is closed', code: 'STREAM_CLOSED' } });
        continue;
      }
      try {
        results.push({ type: 'ok', response: await run(stream, request) });
      } catch (error) {
        results.push({
          type: 'error',
          error:
            error instanceof WireFailure
              ? { message: error.message, code: error.code }
              : error instanceof Error
                ? wireError(error)
                : (error as WireError),
        });
      }
    }
    const open = streams.has(stream.id);
    if (open) {
      stream.baton = `${stream.id}.${randomBytes(12).toString('hex')}`;
      touch(stream);
    }
    answer(response, 200, { baton: open ? stream.baton : null, base_url: null, results });
  }

  function answer(response: ServerResponse, status: number, body: unknown) {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    if (options.authToken !== undefined && request.headers.authorization !== `Bearer ${options.authToken}`)
      return answer(response, 401, { message: 'Unauthorized' });
    const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
    if (request.method === 'GET' && path === '/v2') return answer(response, 200, {});
    if (request.method === 'GET' && path === '/health') return answer(response, 200, {});
    if (request.method === 'POST' && path === '/v2/pipeline') {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      return pipeline(
        JSON.parse(Buffer.concat(chunks).toString('utf8')) as { baton?: string | null; requests: WireRequest[] },
        response,
      );
    }
    return answer(response, 404, { message: `not served by the stand-in: ${request.method ?? ''} ${path}` });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) answer(response, 500, { message: String(error) });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pipelines,
    openStreams: () => streams.size,
    async close() {
      for (const stream of [...streams.values()]) closeStream(stream);
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
