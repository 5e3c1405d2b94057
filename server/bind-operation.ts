/**
 * Turns an operation and its `http` binding into a Hono route: path params + query (+ JSON body) → the
 * operation's input schema → `runOperation` → the Nylas envelope. No logic of its own beyond translation.
 */
import type { Context, Hono } from 'hono';
import type { z } from 'zod';
import {
  AppError,
  deprecationHeaders,
  errorBody,
  hasJsonBody,
  httpErrorOf,
  runOperation,
  runOperationJson,
  runOperationStream,
  type AccessFace,
  type AnyOperation,
  type ClientInfo,
} from '../src/index.js';
import { peerAddress } from './middleware/rate-limit.js';
import type { ReadTurns } from './read-turns.js';
import type { AppEnv } from './types.js';

type Kind = 'number' | 'boolean' | 'array' | 'other';

/** The JSON kind a schema field expects, looking through optional/default/nullable wrappers. */
function kindOf(schema: z.ZodType | undefined): Kind {
  let current = schema as { _zod?: { def: { type: string; innerType?: unknown } } } | undefined;
  while (current?._zod) {
    const { type, innerType } = current._zod.def;
    if (type === 'number' || type === 'int' || type === 'bigint') return 'number';
    if (type === 'boolean') return 'boolean';
    if (type === 'array') return 'array';
    if (type === 'optional' || type === 'default' || type === 'nullable' || type === 'prefault') {
      current = innerType as typeof current;
      continue;
    }
    return 'other';
  }
  return 'other';
}

/**
 * Converts query-string values to the types the input schema expects (numbers, booleans, arrays), leaving
 * anything unconvertible as a string so the schema rejects it with the field's name.
 */
export function coerceQuery(input: z.ZodObject, url: URL): Record<string, unknown> {
  const shape = input.shape as Record<string, z.ZodType>;
  const result: Record<string, unknown> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    const kind = kindOf(shape[key]);
    const last = values[values.length - 1] ?? '';
    if (kind === 'array') {
      result[key] = values
        .flatMap((value) => value.split(','))
        .map((value) => value.trim())
        .filter(Boolean);
    } else if (kind === 'number') {
      result[key] = last.trim() !== '' && Number.isFinite(Number(last)) ? Number(last) : last;
    } else if (kind === 'boolean') {
      result[key] = last === 'true' || last === '1' ? true : last === 'false' || last === '0' ? false : last;
    } else {
      result[key] = last;
    }
  }
  return result;
}

async function readJsonBody(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError('invalid_request', 'body: error parsing request body; send a JSON object.');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('invalid_request', 'body: the request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

/** Form fields that carry the request's JSON in a multipart body (the nylas SDK sends `message`, Nylas' spec `draft`). */
const MULTIPART_JSON_FIELDS = ['message', 'draft'];

/**
 * A `multipart/form-data` request as the nylas SDK sends large attachments: the JSON of the request in the
 * `message` field, and one file part per attachment, named by its content id (or `file<n>`). The files become
 * `attachments` entries with Base64 content, so the operation's input schema checks them as it does JSON.
 */
async function readMultipartBody(c: Context<AppEnv>, jsonField: string): Promise<Record<string, unknown>> {
  let form: FormData;
  try {
    form = await c.req.formData();
  } catch {
    throw new AppError('invalid_request', 'body: error parsing the multipart/form-data body.');
  }
  let body: Record<string, unknown> = {};
  const json = [jsonField, ...MULTIPART_JSON_FIELDS]
    .map((name) => form.get(name))
    .find((value) => typeof value === 'string');
  if (typeof json === 'string' && json.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new AppError(
        'invalid_request',
        `${jsonField}: the form field must hold the request as a JSON object; it did not parse.`,
      );
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new AppError('invalid_request', `${jsonField}: the form field must hold a JSON object.`);
    body = parsed as Record<string, unknown>;
  }
  const attachments: unknown[] = Array.isArray(body.attachments) ? [...(body.attachments as unknown[])] : [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') continue;
    const content = Buffer.from(await value.arrayBuffer()).toString('base64');
    const generic = /^file\d*$/.test(name) || name === 'attachment' || name === 'attachments';
    attachments.push({
      filename: value.name || name,
      content_type: value.type || 'application/octet-stream',
      content,
      size: value.size,
      ...(generic ? {} : { content_id: name }),
    });
  }
  if (attachments.length > 0) body.attachments = attachments;
  return body;
}

/**
 * What an operation is told of its request. The origin (a parsed URL) and the abort signal (an AbortController and a
 * close listener a request) are made only when asked; as getters of a class, not of an object literal, whose
 * accessors made every young collection of the heap an order of magnitude slower here.
 */
class RequestContext {
  readonly principal: AppEnv['Variables']['principal'];
  readonly requestId: string;
  readonly idempotencyKey?: string;
  /** A replay of the answer stored for the Idempotency-Key is marked as Nylas marks it. */
  readonly onIdempotentReplay?: () => void;
  readonly #c: Context<AppEnv>;
  readonly #url: () => URL;
  constructor(c: Context<AppEnv>, url: () => URL, idempotencyKey: string | undefined) {
    this.principal = c.get('principal');
    this.requestId = c.get('requestId');
    if (idempotencyKey !== undefined) {
      this.idempotencyKey = idempotencyKey;
      this.onIdempotentReplay = () => c.header('Idempotent-Response', 'true');
    }
    this.#c = c;
    this.#url = url;
  }
  get origin(): string {
    return this.#url().origin;
  }
  /**
   * `http`, or the face a client of /v3 says it relays (`X-Agentpost-Face: mcp` or `ai-sdk`, as the remote executor
   * of `agentpost mcp` and the AI SDK tools sends): descriptive only, for the access log and provenance; it grants
   * nothing and is not proven.
   */
  get face(): AccessFace {
    const said = this.#c.req.header('x-agentpost-face');
    return said === 'mcp' || said === 'ai-sdk' ? said : 'http';
  }
  /** The MCP client and session a relaying client names (`X-Agentpost-Client: name/version`, `X-Agentpost-Session`). */
  get client(): ClientInfo | undefined {
    return relayedClient(this.#c.req.header('x-agentpost-client'), this.#c.req.header('x-agentpost-session'));
  }
  /** The tool a relaying client names (`X-Agentpost-Tool`). */
  get tool(): string | undefined {
    return boundedHeader(this.#c.req.header('x-agentpost-tool'));
  }
  /** The peer of the connection (no forwarding header is trusted). */
  get address(): string | undefined {
    return peerAddress(this.#c);
  }
  get signal(): AbortSignal {
    return this.#c.req.raw.signal;
  }
}

/** A descriptive header's value, bounded (it is stored in the access log). */
function boundedHeader(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed.slice(0, 200) : undefined;
}

/** The client a relaying /v3 caller names: `name/version` (the version after the last slash) and a session. */
export function relayedClient(header: string | undefined, session: string | undefined): ClientInfo | undefined {
  const value = boundedHeader(header);
  const sessionId = boundedHeader(session);
  if (value === undefined && sessionId === undefined) return undefined;
  const slash = value?.lastIndexOf('/') ?? -1;
  return {
    ...(value !== undefined ? { name: slash > 0 ? value.slice(0, slash) : value } : {}),
    ...(value !== undefined && slash > 0 ? { version: value.slice(slash + 1) } : {}),
    ...(sessionId !== undefined ? { session: sessionId } : {}),
  };
}

/** Marks responses made here with their `x-request-id` already in their headers (see {@link carriesRequestId}). */
const WITH_REQUEST_ID = Symbol('x-request-id set');

/**
 * A JSON response with its content type and request id as a plain header object: the server writes those headers as
 * they are, where headers set through the context (a `Headers` object) are copied over one by one (a hot list's path).
 */
function jsonResponse(body: Uint8Array, status: number, requestId: string): Response {
  const response = new Response(body, {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': requestId },
  });
  // A mark on the object itself: a WeakSet entry a request made the heap's young collections slower.
  (response as Response & { [WITH_REQUEST_ID]?: true })[WITH_REQUEST_ID] = true;
  return response;
}

/** Whether `response` was made here with the request's id among its headers (asking its headers would copy them). */
export const carriesRequestId = (response: Response): boolean =>
  (response as Response & { [WITH_REQUEST_ID]?: true })[WITH_REQUEST_ID] === true;

/** Static siblings of Nylas routes this server does not serve (the nylas SDK calls them), by parent path. */
const UNSERVED_SIBLINGS: Record<string, string[]> = {};

/** Whether a request asks for a streamed answer (`Accept: text/event-stream`). */
export function wantsEventStream(accept: string | undefined): boolean {
  return /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept ?? '');
}

/** Whether a request asks for newline-delimited JSON (`Accept: application/x-ndjson`): an export. */
export function wantsNdjson(accept: string | undefined): boolean {
  return /(^|,)\s*application\/(x-)?ndjson\s*(;|,|$)/i.test(accept ?? '');
}

/** How a streamed answer frames its objects: NDJSON lines or server-sent events. */
interface StreamFraming {
  headers: Record<string, string>;
  /** One object's text. */
  frame(object: unknown): string;
  /** The last text of a stream an error ended: the Nylas error envelope. */
  failure(envelope: unknown): string;
  /** Objects written at most in one chunk (many small lines, one write). */
  batch: number;
}

/** Newline-delimited JSON: one object a line; an error after the answer began is one last line of its envelope. */
const NDJSON: StreamFraming = {
  headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-cache' },
  frame: (object) => `${JSON.stringify(object)}\n`,
  failure: (envelope) => `${JSON.stringify(envelope)}\n`,
  batch: 100,
};

/**
 * Server-sent events: `data: <JSON>` per object, each sent as it comes; an error after the answer began (the status
 * is sent by then) is one last `event: error` whose data is the envelope.
 */
const EVENTS: StreamFraming = {
  headers: {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  },
  frame: (object) => `data: ${JSON.stringify(object)}\n\n`,
  failure: (envelope) => `event: error\ndata: ${JSON.stringify(envelope)}\n\n`,
  batch: 1,
};

/** A streamed operation's objects framed as `framing` says; the stream ends after the last object or an error. */
function streamed(
  c: Context<AppEnv>,
  objects: AsyncIterable<Record<string, unknown>>,
  framing: StreamFraming,
): Response {
  const encoder = new TextEncoder();
  const iterator = objects[Symbol.asyncIterator]();
  const requestId = c.get('requestId');
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = '';
      try {
        for (let count = 0; count < framing.batch; count++) {
          const step = await iterator.next();
          if (step.done) {
            if (text) controller.enqueue(encoder.encode(text));
            controller.close();
            return;
          }
          text += framing.frame(step.value);
        }
        controller.enqueue(encoder.encode(text));
      } catch (error) {
        const { code, type, message } = httpErrorOf(error);
        if (code === 'internal')
          c.get('logger')?.error('stream failed', {
            request_id: requestId,
            path: c.req.path,
            error: error instanceof Error ? (error.stack ?? error.message) : String(error),
          });
        controller.enqueue(encoder.encode(text + framing.failure(errorBody('v3', requestId, type, message))));
        controller.close();
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return new Response(body, { status: 200, headers: { ...framing.headers, 'x-request-id': requestId } });
}

/**
 * For each `:param` of `path`, the static segments other routes have in its place under the same parent
 * (`/events/import` beside `/events/:event_id`, plus Nylas routes not served here). A param holding one of those is
 * a route this server does not have for that method (`DELETE /events/import`): it answers "No route …", not
 * "Event "import" was not found". Other values stay ids (a folder may well be called `drafts`).
 */
export function staticSiblings(operations: readonly AnyOperation[], path: string): Map<string, Set<string>> {
  const norm = (segment: string) => (segment.startsWith(':') ? ':' : segment);
  const own = path.split('/');
  const others = operations.flatMap((operation) => (operation.http ? [operation.http.path.split('/')] : []));
  const result = new Map<string, Set<string>>();
  own.forEach((segment, index) => {
    if (!segment.startsWith(':')) return;
    const parent = own.slice(0, index).map(norm).join('/');
    const words = new Set(UNSERVED_SIBLINGS[parent] ?? []);
    for (const other of others) {
      const word = other[index];
      if (word !== undefined && !word.startsWith(':') && other.slice(0, index).map(norm).join('/') === parent)
        words.add(word);
    }
    if (words.size > 0) result.set(segment.slice(1), words);
  });
  return result;
}

/**
 * Registers one operation on the app. `all`: every operation, so that a path parameter holding a sibling route's
 * static segment answers a plain "No route" 404 (see {@link staticSiblings}). `readTurns`: GET operations run at their
 * turn of the event loop, one a turn, so that reads never hold the loop from the mail flow (server/read-turns.ts).
 */
export function bindOperation(
  app: Hono<AppEnv>,
  operation: AnyOperation,
  all: readonly AnyOperation[] = [],
  readTurns?: ReadTurns,
): void {
  const binding = operation.http;
  if (!binding) return;
  const hasBody = hasJsonBody(binding);
  const siblings = staticSiblings(all, binding.path);
  // A deprecated operation says so on every answer, errors included (README, Versioning).
  const deprecation = operation.deprecation ? Object.entries(deprecationHeaders(operation.deprecation)) : [];
  app.on(binding.method, binding.path, async (c) => {
    for (const [name, value] of deprecation) c.header(name, value);
    const params: Record<string, string> = c.req.param();
    if (Object.entries(params).some(([name, value]) => siblings.get(name)?.has(value))) {
      throw new AppError('not_found', `No route ${c.req.method} ${new URL(c.req.url).pathname}.`);
    }
    // The URL is parsed only when something needs it: a query string, the origin (absolute links).
    let url: URL | undefined;
    const urlOf = () => (url ??= new URL(c.req.url));
    const query = c.req.url.includes('?') ? coerceQuery(operation.input, urlOf()) : {};
    const multipart =
      hasBody && binding.multipart !== undefined && /^multipart\/form-data\b/i.test(c.req.header('content-type') ?? '');
    const body = multipart ? await readMultipartBody(c, binding.multipart!) : hasBody ? await readJsonBody(c) : {};
    const input = { ...query, ...body, ...params };
    const idempotencyKey = c.req.header('idempotency-key');
    const taken = readTurns && binding.method === 'GET' ? readTurns.take() : undefined;
    const turn = taken instanceof Promise ? await taken : taken;
    try {
      const context = new RequestContext(c, urlOf, idempotencyKey);
      const requestId = c.get('requestId');
      if (binding.stream && operation.runStream && wantsEventStream(c.req.header('accept'))) {
        return streamed(c, await runOperationStream(operation, c.get('core'), input, context), EVENTS);
      }
      if (binding.export && operation.runStream && wantsNdjson(c.req.header('accept'))) {
        return streamed(c, await runOperationStream(operation, c.get('core'), input, context), NDJSON);
      }
      if (operation.runJson && binding.envelope === 'list') {
        const answer = await runOperationJson(operation, c.get('core'), input, context);
        if ('json' in answer) {
          // The bytes c.json writes for `{ request_id, data, next_cursor }`, with `data` already serialised: one copy.
          const { data, next_cursor: cursor } = answer.json;
          const body = Buffer.concat([
            Buffer.from(`{"request_id":${JSON.stringify(requestId)},"data":`),
            ...data,
            Buffer.from(cursor !== undefined ? `,"next_cursor":${JSON.stringify(cursor)}}` : '}'),
          ]);
          const status = binding.status ?? 200;
          return deprecation.length === 0
            ? jsonResponse(body, status, requestId)
            : c.body(body, status, { 'content-type': 'application/json' });
        }
        return c.json(
          { request_id: requestId, ...(answer.result as Record<string, unknown>) },
          binding.statusOf?.(answer.result) ?? binding.status ?? 200,
        );
      }
      const result = (await runOperation(operation, c.get('core'), input, context)) as Record<string, unknown>;
      const status = binding.statusOf?.(result) ?? binding.status ?? 200;
      switch (binding.envelope ?? 'data') {
        case 'empty':
          return c.json({ request_id: requestId }, status);
        case 'list':
          return c.json({ request_id: requestId, ...result }, status);
        default:
          return c.json({ request_id: requestId, data: result }, status);
      }
    } finally {
      turn?.end();
    }
  });
}
