/**
 * @module storage/engine/fast-read
 * The hot read path: a drizzle select run on a read connection of its own (the native `libsql` driver) with its
 * statements prepared once and its rows mapped by a mapper compiled once per query shape. The same query through
 * `@libsql/client` prepares its statement on every call, reads every integer as a BigInt, and builds each row with
 * one `Object.defineProperty` per column, and drizzle then maps it with an `is()` check per column: on a list of 50
 * messages that was most of the request (profile in issue 21). Results are identical: the same SQL (drizzle builds
 * it), the same decoders (the columns' own `mapFromDriverValue`), the same row objects.
 *
 * It applies only to the database's own handle ({@link Database.orm}) of an embedded file, and only while no write
 * transaction is open on that handle: reads made meanwhile go to the shared connection as before, so a read that
 * follows a write in the same transaction (or overlaps one) sees exactly what it saw before. Anything else (a
 * transaction's executor, a libSQL server) runs the query through drizzle unchanged.
 */
import * as drizzle from 'drizzle-orm';
import { Column, fillPlaceholders, getTableColumns, SQL, is, type Table } from 'drizzle-orm';
import type Sqlite from 'libsql';

type Field = { path: string[]; field: unknown };
/**
 * Two helpers of drizzle's own row mapping, exported by `drizzle-orm` at run time but marked internal in its types:
 * the selected fields in SQL order, and the generic row mapper (kept for outer joins).
 */
const { orderSelectedFields, mapResultRow } = drizzle as unknown as {
  orderSelectedFields: (fields: Record<string, unknown>) => Field[];
  mapResultRow: (fields: Field[], row: unknown[], joinsNotNullableMap: Record<string, boolean> | undefined) => unknown;
};

/** What `createDb` registers for its handle (see {@link registerFastReads}). */
interface FastReads {
  connection: () => Sqlite.Database;
  /** Whether the read connection is open already ({@link FastReads.connection} opens it). */
  opened: () => boolean;
  /** True while a write transaction is open on the shared connection. */
  writing: () => boolean;
}

const registry = new WeakMap<object, FastReads>();

/** Makes {@link readAll} serve reads of `handle` from `connection` (by `createDb`, for embedded files). */
export function registerFastReads(handle: object, reads: FastReads): void {
  registry.set(handle, reads);
}

/** A drizzle select (or relational-free query) whose rows are `T`: what {@link readAll} takes. */
export interface ReadQuery<T> extends PromiseLike<T[]> {
  toSQL(): { sql: string; params: unknown[] };
}

/** Statements kept prepared per connection (a query with a list of `n` values is a statement per `n`). */
const STATEMENTS_KEPT = 256;
const statements = new WeakMap<Sqlite.Database, Map<string, Prepared>>();
/** Row mappers by SQL text and field paths. */
const mappers = new Map<string, (row: unknown[]) => unknown>();
const MAPPERS_KEPT = 512;
/** A statement whose aggregated result was longer than this is read with `all` from then on. */
const AGGREGATE_MAX_CHARS = 16 * 1024;

/**
 * How a statement's rows are read. The native driver's `all` (and `iterate`) costs tens of microseconds before its
 * first row whatever the query, while `get` costs about a microsecond (issue 21's profile: about half of a short
 * list's time went there). So a query whose columns have distinct names is also prepared as
 * `SELECT json_group_array(json_array(<columns>)), <any REAL> FROM (<query>)` and read with one `get`: the same values
 * in the same order (SQLite does not flatten a subquery with ORDER BY or LIMIT into an aggregate, and JSON holds
 * integers, text and NULL exactly as the driver returns them). The rest is read with `all` after all: a result with a
 * REAL in it (JSON would round it to 15 digits; the second column says so) or a BLOB (which `json_array` refuses).
 * Queries with repeated column names are always read with `all`, and so is a statement once one of its results came
 * to more than {@link AGGREGATE_MAX_CHARS} characters of JSON: for rows of long text (message bodies) escaping them
 * into JSON and parsing them again costs more than `all` (it slowed the main thread under ingest).
 */
interface Prepared {
  rows: (params: unknown[]) => unknown[][];
}

function prepare(connection: Sqlite.Database, sql: string): Prepared {
  const statement = connection.prepare(sql);
  statement.raw(true);
  const all = (params: unknown[]) => statement.all(params) as unknown[][];
  if (!statement.reader) return { rows: all };
  const columns = (statement.columns() as { name: string; type: string | null }[]).map((column) => ({
    name: `"${column.name.replaceAll('"', '""')}"`,
    type: column.type,
  }));
  const names = columns.map((column) => column.name);
  if (names.length === 0 || new Set(names).size !== names.length) return { rows: all };
  // A TEXT column holds no REAL (SQLite's TEXT affinity stores numbers as text); any other may. One sum says whether a
  // row holds one: a REAL in it makes the sum REAL (so does a sum past 64 bits, or text that reads as a decimal number,
  // which only sends the read to `all` needlessly).
  const numeric = columns
    .filter((column) => !/^text$/i.test(column.type ?? ''))
    .map((column) => `coalesce(${column.name}, 0)`);
  const anyReal = numeric.length === 0 ? '0' : `max(typeof(${numeric.join(' + ')}) = 'real')`;
  let aggregated: Sqlite.Statement;
  try {
    aggregated = connection.prepare(
      `SELECT json_group_array(json_array(${names.join(', ')})), ${anyReal} FROM (${sql})`,
    );
  } catch {
    return { rows: all };
  }
  aggregated.raw(true);
  /** Set once a result was large: the statement is read with `all` from then on. */
  let wide = false;
  return {
    rows: (params) => {
      if (wide) return all(params);
      let result: [string, number | null];
      try {
        result = aggregated.get(params) as [string, number | null];
      } catch (error) {
        if (error instanceof Error && /JSON cannot hold BLOB/.test(error.message)) return all(params);
        throw error;
      }
      // Rows of long text (message bodies) cost more as JSON, escaped by SQLite and parsed again, than as they are.
      if (result[0].length > AGGREGATE_MAX_CHARS) wide = true;
      return result[1] ? all(params) : (JSON.parse(result[0]) as unknown[][]);
    },
  };
}

function statementFor(connection: Sqlite.Database, sql: string): Prepared {
  let cache = statements.get(connection);
  if (!cache) statements.set(connection, (cache = new Map<string, Prepared>()));
  let statement = cache.get(sql);
  if (!statement) {
    statement = prepare(connection, sql);
    if (cache.size >= STATEMENTS_KEPT) cache.delete(cache.keys().next().value!);
    cache.set(sql, statement);
  }
  return statement;
}

/** A parameter as `@libsql/client` would bind it. */
function toDriver(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.valueOf();
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  return value;
}

type Decoder = { mapFromDriverValue(value: unknown): unknown };

/** The decoder drizzle's `mapResultRow` uses for a selected field. */
function decoderOf(field: unknown): Decoder {
  if (is(field, Column)) return field;
  if (is(field, SQL)) return (field as unknown as { decoder: Decoder }).decoder;
  const aliased = field as { sql?: { decoder: Decoder }; _?: { sql: { decoder: Decoder } } };
  return aliased.sql?.decoder ?? aliased._!.sql.decoder;
}

/** A row mapper equal to drizzle's `mapResultRow` for queries without outer joins, compiled once. */
function compile(fields: Field[]): (row: unknown[]) => unknown {
  const steps = fields.map(({ path, field }) => ({ path, last: path[path.length - 1]!, decoder: decoderOf(field) }));
  const flat = steps.every((step) => step.path.length === 1);
  if (flat) {
    return (row) => {
      const result: Record<string, unknown> = {};
      for (let index = 0; index < steps.length; index++) {
        const step = steps[index]!;
        const raw = row[index];
        result[step.last] = raw === null ? null : step.decoder.mapFromDriverValue(raw);
      }
      return result;
    };
  }
  return (row) => {
    const result: Record<string, unknown> = {};
    for (let index = 0; index < steps.length; index++) {
      const step = steps[index]!;
      let node = result;
      for (let depth = 0; depth < step.path.length - 1; depth++)
        node = (node[step.path[depth]!] ??= {}) as Record<string, unknown>;
      const raw = row[index];
      node[step.last] = raw === null ? null : step.decoder.mapFromDriverValue(raw);
    }
    return result;
  };
}

/** Drizzle's internals of a select builder that the mapping needs (its selected fields, its outer joins). */
interface SelectInternals {
  config?: { fields?: Record<string, unknown>; table?: Table };
  joinsNotNullableMap?: Record<string, boolean>;
}

/** The mapper of a query's rows, from the cache when its SQL and field paths were seen before. */
function mapperOf(sql: string, fields: Field[]): (row: unknown[]) => unknown {
  const key = `${sql}\u0000${fields.map((field) => field.path.join('.')).join(',')}`;
  let mapper = mappers.get(key);
  if (!mapper) {
    mapper = compile(fields);
    if (mappers.size >= MAPPERS_KEPT) mappers.delete(mappers.keys().next().value!);
    mappers.set(key, mapper);
  }
  return mapper;
}

/** Whether a query selects with an outer join (then drizzle's own mapper nulls the missing side). */
const hasOuterJoin = (internals: SelectInternals) =>
  internals.joinsNotNullableMap !== undefined &&
  Object.values(internals.joinsNotNullableMap).some((notNullable) => !notNullable);

/**
 * Runs a drizzle select on the fast path when `executor` is an embedded database's own handle and no write
 * transaction is open on it; otherwise awaits the query as drizzle runs it. Same rows either way.
 */
export async function readAll<T>(executor: object, query: ReadQuery<T>): Promise<T[]> {
  const reads = registry.get(executor);
  const internals = query as unknown as SelectInternals;
  const selected =
    internals.config?.fields ?? (internals.config?.table ? getTableColumns(internals.config.table) : undefined);
  if (!reads || reads.writing() || !selected) return await query;
  const { sql, params } = query.toSQL();
  const rows = statementFor(reads.connection(), sql).rows(params.map(toDriver));
  const fields = orderSelectedFields(selected);
  if (hasOuterJoin(internals)) return rows.map((row) => mapResultRow(fields, row, internals.joinsNotNullableMap) as T);
  return rows.map(mapperOf(sql, fields) as (row: unknown[]) => T);
}

/** A select built once with `sql.placeholder(name)` for its values (see {@link preparedRead}). */
export interface PreparedQuery<T> extends ReadQuery<T> {
  all(values: Record<string, unknown>): Promise<T[]>;
}

/**
 * A read whose SQL is built once: `build` makes the select with `sql.placeholder(name)` where the values go, and each
 * call fills them in. On the fast path the SQL, the statement and the row mapper are all made once (building the SQL
 * of a select was a quarter of a short list's time); elsewhere (a transaction, a libSQL server, a write under way)
 * the select is built on `executor` and run by drizzle with the values, as `readAll` does.
 */
export function preparedRead<E extends object, T>(
  build: (executor: E) => PreparedQuery<T>,
  options: PreparedReadOptions = {},
): (executor: E, values: Record<string, unknown>) => Promise<T[]> {
  let built: { sql: string; params: unknown[]; map: (row: unknown[]) => unknown } | undefined;
  const memos = options.memo ? new WeakMap<Sqlite.Database, Memo<T>>() : undefined;
  return async (executor, values) => {
    const reads = registry.get(executor);
    if (!reads || reads.writing()) return build(executor).all(values);
    if (!built) {
      const query = build(executor);
      const internals = query as unknown as SelectInternals;
      const selected =
        internals.config?.fields ?? (internals.config?.table ? getTableColumns(internals.config.table) : undefined);
      if (!selected || hasOuterJoin(internals))
        throw new Error('preparedRead: a select of columns without outer joins is expected');
      const { sql, params } = query.toSQL();
      built = { sql, params, map: compile(orderSelectedFields(selected)) };
    }
    const connection = reads.connection();
    const read = () =>
      statementFor(connection, built!.sql)
        .rows(fillPlaceholders(built!.params, values).map(toDriver))
        .map(built!.map as (row: unknown[]) => T);
    if (!memos) return read();
    // Asked before the read: a commit between the two only leaves newer rows under an older version, which the next
    // call finds changed.
    const version = currentVersion(connection);
    let memo = memos.get(connection);
    if (!memo || memo.version !== version) memos.set(connection, (memo = { version, rows: new Map() }));
    const key = JSON.stringify(values);
    let rows = memo.rows.get(key);
    if (!rows) {
      rows = read();
      if (memo.rows.size >= options.memo!) memo.rows.delete(memo.rows.keys().next().value!);
      memo.rows.set(key, rows);
    }
    return rows;
  };
}

/** Options of {@link preparedRead}. */
export interface PreparedReadOptions {
  /**
   * Keep the rows of up to this many sets of values while the database is unchanged: SQLite's `data_version` of the
   * read connection moves with every commit of any other connection, in this process or another, and the kept rows
   * are dropped when it does. The same row objects are then given to every caller: they must not be changed. For
   * reads asked on every request (an API key, a page of a mailbox) that a database read far more than written
   * answers from memory.
   */
  memo?: number;
}

interface Memo<T> {
  version: number;
  rows: Map<string, T[]>;
}

/**
 * Requests begun (see {@link beginReadScope}): a version asked since the current one began is fresh enough for every
 * read of it. A request sees the database as of some moment after it arrived, which is all a read may promise; the
 * second read of a request then costs no `data_version` (a third of a kept read's time).
 */
let readScope = 0;
/** A version is reused at most this long within one scope (a scope left open by a transport that never begins one). */
const VERSION_REUSE_MS = 1;
const versionsAsked = new WeakMap<Sqlite.Database, { scope: number; at: number; version: number }>();

/** Marks the start of a request (the HTTP server calls it first thing for each). */
export function beginReadScope(): void {
  readScope++;
}

/** Forgets the version last asked of `handle`'s read connection: a write of this process just committed. */
export function writeCommitted(handle: object): void {
  const reads = registry.get(handle);
  const asked = reads?.opened() ? versionsAsked.get(reads.connection()) : undefined;
  if (asked) asked.scope = -1;
}

/** The read connection's data version, asked again unless asked already within this request. */
function currentVersion(connection: Sqlite.Database): number {
  const now = performance.now();
  let asked = versionsAsked.get(connection);
  if (asked && asked.scope === readScope && now - asked.at < VERSION_REUSE_MS) return asked.version;
  const version = dataVersion(connection);
  // Changed in place: a new WeakMap entry a request would make the heap's young collections slower.
  if (!asked) versionsAsked.set(connection, (asked = { scope: readScope, at: now, version }));
  asked.scope = readScope;
  asked.at = now;
  asked.version = version;
  return version;
}

const versionStatements = new WeakMap<Sqlite.Database, Sqlite.Statement>();

/** The read connection's `PRAGMA data_version`: it changes once another connection has committed. */
function dataVersion(connection: Sqlite.Database): number {
  let statement = versionStatements.get(connection);
  if (!statement) {
    statement = connection.prepare('PRAGMA data_version');
    statement.raw(true);
    versionStatements.set(connection, statement);
  }
  return (statement.get() as [number])[0];
}
