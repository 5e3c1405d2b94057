/**
 * @module operations/access-record
 * Records each operation call in the access log (src/access-log) once its outcome is known: who (the principal and
 * its key), through which face (HTTP, MCP, the AI SDK; with the MCP client and session, and the tool), what (the
 * operation, the grant, the ids its path names and the id it made), the outcome as an HTTP status with the error's
 * type, the client's address and the request id. Refusals are recorded as well as successes. Never the content of
 * what was read or written: a read of a message body is a row naming the message.
 */
import type { OperationContext } from '../access.js';
import type { Core } from '../core-types.js';
import { httpErrorOf } from './http-errors.js';

/** What the log reads of an operation (a part of define-operation's `Operation`, named here to keep imports one way). */
interface AnyOperation {
  name: string;
  hints: { readOnly: boolean };
  http?: { method: string; path: string; status?: number; statusOf?: (result: unknown) => number } | undefined;
}

/** The path parameters of each operation's HTTP binding other than `grant_id` (its own column), found once. */
const pathIdsOf = new WeakMap<AnyOperation, readonly string[]>();

function pathIds(operation: AnyOperation): readonly string[] {
  let names = pathIdsOf.get(operation);
  if (names === undefined) {
    names = [...(operation.http?.path ?? '').matchAll(/:([a-z_]+)/g)]
      .map((match) => match[1]!)
      .filter((name) => name !== 'grant_id');
    pathIdsOf.set(operation, names);
  }
  return names;
}

/** The ids a call named (its path parameters) and, for a write, the id of what it made (`created_id`). Pure. */
export function objectIdsOf(
  operation: AnyOperation,
  input: unknown,
  result: unknown,
): Record<string, string> | undefined {
  let ids: Record<string, string> | undefined;
  const fields = (input ?? {}) as Record<string, unknown>;
  for (const name of pathIds(operation)) {
    const value = fields[name];
    if (typeof value === 'string' || typeof value === 'number') (ids ??= {})[name] = String(value).slice(0, 320);
  }
  if (result !== undefined && operation.http?.method !== 'GET' && operation.hints.readOnly === false) {
    const data = typeof result === 'object' && result !== null && 'data' in result ? result.data : undefined;
    const created = idOf(result) ?? idOf(data);
    if (typeof created === 'string' && created !== ids?.[pathIds(operation).at(-1) ?? ''])
      (ids ??= {}).created_id = created;
  }
  return ids;
}

/** The `id` of an object, when it has a string one. */
function idOf(value: unknown): string | undefined {
  const id = typeof value === 'object' && value !== null ? (value as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** The HTTP status of a success, as the HTTP face answers it. */
function successStatus(operation: AnyOperation, result: unknown): number {
  return operation.http?.statusOf?.(result) ?? operation.http?.status ?? 200;
}

/**
 * Runs `work` and records its outcome in the access log (a queued row; the write is batched), whether it succeeded
 * or threw. The error is thrown on unchanged.
 */
export async function recorded<T>(
  operation: AnyOperation,
  core: Core,
  rawInput: unknown,
  context: OperationContext,
  work: () => Promise<T>,
): Promise<T> {
  // A call that came through no face (an in-process call of the core, as a background job makes) is not logged.
  if (context.face === undefined) return work();
  let result: T;
  try {
    result = await work();
  } catch (error) {
    const { status, type } = httpErrorOf(error);
    record(operation, core, rawInput, context, undefined, status, type);
    throw error;
  }
  record(operation, core, rawInput, context, result, successStatus(operation, result), undefined);
  return result;
}

function record(
  operation: AnyOperation,
  core: Core,
  rawInput: unknown,
  context: OperationContext,
  result: unknown,
  status: number,
  errorType: string | undefined,
): void {
  const grant = (rawInput as { grant_id?: unknown } | null | undefined)?.grant_id;
  core.accessLog.record({
    principal: context.principal,
    face: context.face!,
    client: context.client,
    tool: context.tool,
    operation: operation.name,
    grantId: typeof grant === 'string' ? grant.slice(0, 320) : undefined,
    objectIds: objectIdsOf(operation, rawInput, result),
    status,
    errorType,
    address: context.address,
    requestId: context.requestId,
  });
}
