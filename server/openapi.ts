/**
 * The OpenAPI 3.1 document of the HTTP server, generated from the operations registry (the same zod schemas that
 * validate requests and define the MCP and AI SDK tools), plus the routes written by hand (attachment bytes, the ICS
 * feed, `/mcp`, the health and metrics routes, this document). Every success schema is one closed object, the exact
 * envelope the binder writes (`{request_id, data}`, `{request_id, data, next_cursor}` or `{request_id}`), so a strict
 * draft 2020-12 validator accepts the live responses (test/server/openapi-live.test.ts checks that).
 */
import { z } from 'zod';
import { hasJsonBody, type AnyOperation } from '../src/index.js';
import { CalendarRefInputSchema } from '../src/schemas/calendars.js';
import { GetAttachmentInputSchema } from '../src/schemas/messages.js';

type JsonSchema = Record<string, unknown>;

/** `:param` → `{param}`. */
function openApiPath(path: string): string {
  return `/v3${path.replace(/:([a-z_]+)/g, '{$1}')}`;
}

/** Moves `$defs` of a generated schema into the shared components and points `$ref`s there. */
function hoist(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const { $defs, $schema: _dialect, ...rest } = schema as JsonSchema & { $defs?: Record<string, JsonSchema> };
  for (const [name, definition] of Object.entries($defs ?? {})) components[name] = retarget(definition) as JsonSchema;
  return retarget(rest) as JsonSchema;
}

/**
 * Points `$ref`s at the components, and drops zod's `format: "base64"`: it is no format of JSON Schema 2020-12 or
 * OpenAPI 3.1 (strict validators refuse it), and zod writes the standard `contentEncoding: "base64"` next to it.
 */
function retarget(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(retarget);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(
          ([key, inner]) =>
            !(key === 'format' && inner === 'base64' && (value as JsonSchema).contentEncoding === 'base64'),
        )
        .map(([key, inner]) => [
          key,
          key === '$ref' && typeof inner === 'string'
            ? inner.replace('#/$defs/', '#/components/schemas/')
            : retarget(inner),
        ]),
    );
  }
  return value;
}

/** A schema itself, or the component a top-level `$ref` points to (list outputs may be named components). */
function resolve(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const target = components[ref.replace('#/components/schemas/', '')];
  if (!target) throw new Error(`OpenAPI: unresolved ${ref}`);
  return resolve(target, components);
}

const REQUEST_ID: JsonSchema = { type: 'string', description: 'Request id (also in the x-request-id header)' };

/**
 * The success envelope, as one closed object (no `allOf`: `additionalProperties: false` in a subschema of `allOf`
 * would reject the envelope's other keys). `list` spreads the output object's own properties next to `request_id`.
 */
function envelopeOf(
  output: JsonSchema,
  kind: 'data' | 'list' | 'empty',
  components: Record<string, JsonSchema>,
): JsonSchema {
  if (kind === 'empty')
    return {
      type: 'object',
      properties: { request_id: REQUEST_ID },
      required: ['request_id'],
      additionalProperties: false,
    };
  if (kind === 'data')
    return {
      type: 'object',
      properties: { request_id: REQUEST_ID, data: output },
      required: ['request_id', 'data'],
      additionalProperties: false,
    };
  const page = resolve(output, components);
  if (page.type !== 'object' || !page.properties)
    throw new Error('OpenAPI: a list envelope needs an object output with properties');
  const {
    properties,
    required = [],
    additionalProperties: _closed,
    type: _type,
    ...annotations
  } = page as JsonSchema & { properties: JsonSchema; required?: string[] };
  return {
    ...annotations,
    type: 'object',
    properties: { request_id: REQUEST_ID, ...properties },
    required: ['request_id', ...required],
    additionalProperties: false,
  };
}

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'The Nylas v3 error envelope',
  properties: {
    request_id: REQUEST_ID,
    error: {
      type: 'object',
      properties: {
        type: {
          type: 'string',
          description: 'Nylas error type (invalid_request_error, unauthorized, not_found_error, rate_limit_error, …)',
        },
        message: { type: 'string', description: 'What went wrong and how to fix it' },
      },
      required: ['type', 'message'],
      additionalProperties: false,
    },
  },
  required: ['request_id', 'error'],
  additionalProperties: false,
};

const ERROR_RESPONSE = {
  description: 'Error',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

/** `in: path|query` parameters of a hand-written route, from the zod schema it parses its input with. */
function parametersOf(schema: z.ZodObject, inPath: readonly string[]): JsonSchema[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema & {
    properties: Record<string, JsonSchema>;
    required?: string[];
  };
  const required = new Set(json.required ?? []);
  return Object.entries(json.properties).map(([name, property]) => ({
    name,
    in: inPath.includes(name) ? 'path' : 'query',
    required: inPath.includes(name) || required.has(name),
    schema: property,
    ...(property.description ? { description: property.description } : {}),
  }));
}

const THREADS_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'Worker threads that stopped on their own since start (each was replaced), by name',
  additionalProperties: {
    type: 'object',
    properties: {
      exits: { type: 'integer', description: 'How many times it stopped' },
      lastExit: {
        type: 'object',
        properties: { at: { type: 'string', description: 'When (ISO 8601)' }, reason: { type: 'string' } },
        required: ['at', 'reason'],
        additionalProperties: false,
      },
    },
    required: ['exits'],
    additionalProperties: false,
  },
};

const LIVENESS: JsonSchema = {
  summary: 'Liveness',
  description: 'The process answers. No key needed; not rate limited.',
  security: [],
  responses: {
    '200': {
      description: 'Alive',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { status: { const: 'ok' }, threads: THREADS_SCHEMA },
            required: ['status', 'threads'],
            additionalProperties: false,
          },
        },
      },
    },
  },
};

const READINESS_BODY: JsonSchema = {
  type: 'object',
  properties: {
    status: { enum: ['ready', 'not ready', 'shutting down'] },
    checks: {
      type: 'object',
      description: 'Each check: "ok", or why it failed',
      properties: { database: { type: 'string' }, migrations: { type: 'string' }, workers: { type: 'string' } },
      required: ['database', 'migrations', 'workers'],
      additionalProperties: false,
    },
    threads: THREADS_SCHEMA,
  },
  required: ['status'],
  additionalProperties: false,
};

/** The routes written by hand (server/index.ts, server/routes/*), keyed by OpenAPI path and method. */
const HAND_WRITTEN_ROUTES: Record<string, Record<string, unknown>> = {
  '/livez': { get: { operationId: 'livez', ...LIVENESS } },
  '/healthz': { get: { operationId: 'healthz', ...LIVENESS, description: 'The earlier name of /livez; same answer.' } },
  '/readyz': {
    get: {
      operationId: 'readyz',
      summary: 'Readiness',
      description:
        'The database answers and carries every migration, and the background loops report in time. No key needed; not rate limited.',
      security: [],
      responses: {
        '200': { description: 'Ready', content: { 'application/json': { schema: READINESS_BODY } } },
        '503': {
          description: 'Not ready, or shutting down',
          content: { 'application/json': { schema: READINESS_BODY } },
        },
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description:
        'The Prometheus text exposition. Off (404) unless AGENTPOST_METRICS_TOKEN is set; then it needs Authorization: Bearer <that token>, not an API key.',
      security: [{ metricsToken: [] }],
      responses: {
        '200': { description: 'Metrics', content: { 'text/plain': { schema: { type: 'string' } } } },
        default: ERROR_RESPONSE,
      },
    },
  },
  '/v3/openapi.json': {
    get: {
      operationId: 'openapi',
      summary: 'This document',
      description: 'The OpenAPI 3.1 document of the service. No key needed.',
      security: [],
      responses: {
        '200': { description: 'The document', content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
  },
  '/mcp': {
    description:
      'MCP over Streamable HTTP (JSON-RPC 2.0; see the MCP specification), with the same Bearer authentication as /v3. ' +
      'The tools are the operations of this document that carry x-agentpost-tool: true, under their operationId. ' +
      "`?grant_id=` binds every tool to one mailbox; `?require_approval=true` gates sending on a person's approval (elicitation). " +
      'Requests are at most 4 MB. Errors take the JSON-RPC shape {jsonrpc, error: {code, message, data: {type, request_id}}, id: null}.',
    post: {
      operationId: 'mcp',
      summary: 'MCP (Streamable HTTP)',
      description:
        'Send a JSON-RPC request, notification or batch; the answer is JSON (or an SSE stream when the client accepts only that).',
      parameters: [
        {
          name: 'grant_id',
          in: 'query',
          required: false,
          schema: { type: 'string' },
          description: 'Bind every tool to this grant (id or email address)',
        },
        {
          name: 'require_approval',
          in: 'query',
          required: false,
          schema: { enum: ['true', 'false'] },
          description: 'Ask a person before send_message / send_draft',
        },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { description: 'A JSON-RPC 2.0 message or batch' } } },
      },
      responses: {
        '200': {
          description: 'JSON-RPC response',
          content: {
            'application/json': { schema: { description: 'A JSON-RPC 2.0 response or batch' } },
            'text/event-stream': { schema: { type: 'string' } },
          },
        },
        '202': { description: 'Notification accepted' },
        default: {
          description: 'JSON-RPC error',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { jsonrpc: { const: '2.0' }, error: { type: 'object' }, id: {} },
                required: ['jsonrpc', 'error'],
              },
            },
          },
        },
      },
      security: [{ apiKey: [] }],
    },
  },
  '/v3/grants/{grant_id}/attachments/{attachment_id}/download': {
    get: {
      operationId: 'download_attachment',
      summary: 'Download an attachment',
      description:
        "The attachment's exact bytes, with its own Content-Type and a Content-Disposition carrying the file name.",
      parameters: parametersOf(GetAttachmentInputSchema, ['grant_id', 'attachment_id']),
      responses: {
        '200': {
          description: 'The bytes',
          headers: {
            'Content-Disposition': {
              schema: { type: 'string' },
              description: 'attachment (or inline) with the file name',
            },
          },
          content: {
            'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
          },
        },
        default: ERROR_RESPONSE,
      },
      security: [{ apiKey: [] }],
    },
  },
  '/uploads/{attachment_id}': {
    put: {
      operationId: 'upload_attachment_bytes',
      summary: 'Upload the bytes of a large-attachment upload session',
      description:
        'The pre-signed `url` that creating an upload session returns (`POST /v3/grants/{grant_id}/attachment-uploads`): the raw bytes of the file as the body, up to 40 MB, with the token of the URL and no API key. Complete the session afterwards.',
      parameters: [
        { name: 'attachment_id', in: 'path', required: true, schema: { type: 'string', maxLength: 256 } },
        {
          name: 'token',
          in: 'query',
          required: true,
          schema: { type: 'string' },
          description: 'The token of the pre-signed URL',
        },
      ],
      requestBody: {
        required: true,
        content: {
          'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
        },
      },
      responses: { '200': { description: 'The bytes are stored' }, default: ERROR_RESPONSE },
    },
  },
  '/t/o/{token}': {
    get: {
      operationId: 'tracking_pixel',
      summary: 'Open-tracking pixel',
      description:
        'The 1×1 GIF a tracked message (tracking_options.opens) carries: each load is recorded as an open (HEAD, scanners, proxies, the first 10 s and repeats within a minute are recorded but flagged, not counted). No key needed; the query string is ignored. A forged, altered or unknown token is a 404.',
      security: [],
      parameters: [
        {
          name: 'token',
          in: 'path',
          required: true,
          schema: { type: 'string' },
          description: 'The signed token of the pixel URL',
        },
      ],
      responses: {
        '200': {
          description: 'The pixel (Cache-Control: no-store)',
          content: { 'image/gif': { schema: { type: 'string', contentMediaType: 'image/gif' } } },
        },
        default: ERROR_RESPONSE,
      },
    },
  },
  '/t/l/{token}': {
    get: {
      operationId: 'tracking_redirect',
      summary: 'Link-tracking redirect',
      description:
        'A rewritten link of a tracked message (tracking_options.links): records the click and redirects to the URL recorded at send time for that link, never to anything the request carries. No key needed; the query string is ignored. A forged, altered or unknown token is a 404.',
      security: [],
      parameters: [
        {
          name: 'token',
          in: 'path',
          required: true,
          schema: { type: 'string' },
          description: 'The signed token of the link URL',
        },
      ],
      responses: {
        '302': { description: 'To the original URL (Location)', headers: { Location: { schema: { type: 'string' } } } },
        default: ERROR_RESPONSE,
      },
    },
  },
  '/v3/grants/{grant_id}/calendars/{calendar_id}/ics': {
    get: {
      operationId: 'calendar_ics',
      summary: 'Calendar as an iCalendar feed',
      description: 'The calendar as text/calendar (METHOD:PUBLISH), so a calendar app can subscribe with the API key.',
      parameters: parametersOf(CalendarRefInputSchema, ['grant_id', 'calendar_id']),
      responses: {
        '200': {
          description: 'The feed',
          content: { 'text/calendar': { schema: { type: 'string', contentMediaType: 'text/calendar' } } },
        },
        default: ERROR_RESPONSE,
      },
      security: [{ apiKey: [] }],
    },
  },
};

/**
 * The `multipart/form-data` body of an operation with `http.multipart` (as the nylas SDK sends large attachments):
 * the JSON body in one form field, and one file part per attachment.
 */
function multipartBody(field: string): JsonSchema {
  return {
    schema: {
      type: 'object',
      description: `The application/json body's fields as JSON in the "${field}" field (or "draft"), and one file part per attachment (named by its content id for inline images, else file<n>); up to 40 MB in all`,
      properties: {
        [field]: {
          type: 'string',
          contentMediaType: 'application/json',
          description: 'The request as JSON (the fields of the application/json body)',
        },
      },
      additionalProperties: {
        type: 'string',
        contentMediaType: 'application/octet-stream',
        description: 'An attachment',
      },
    },
    encoding: { [field]: { contentType: 'application/json' } },
  };
}

/**
 * The components the paths use, directly or through other components. Named inputs are inlined into path, query and
 * body (their component would list the path parameters as body fields), so their components are left out.
 */
function reachable(paths: unknown, components: Record<string, JsonSchema>): Set<string> {
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/schemas/')) {
          const name = inner.slice('#/components/schemas/'.length);
          if (!used.has(name)) {
            used.add(name);
            visit(components[name]);
          }
        } else visit(inner);
      }
    }
  };
  visit(paths);
  return used;
}

/** Builds the document. */
export function buildOpenApiDocument(operations: readonly AnyOperation[], info: { version: string }): JsonSchema {
  const components: Record<string, JsonSchema> = { Error: ERROR_SCHEMA };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    const binding = operation.http;
    if (!binding) continue;
    // Named inputs (`.meta({ id })`) come back as a `$ref`: their properties are split into path, query and body here.
    const input = resolve(
      hoist(z.toJSONSchema(operation.input, { io: 'input', unrepresentable: 'any' }), components),
      components,
    );
    const output = hoist(z.toJSONSchema(operation.output, { io: 'output', unrepresentable: 'any' }), components);
    const pathParams = [...binding.path.matchAll(/:([a-z_]+)/g)].map((match) => match[1]!);
    const properties = (input.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((input.required ?? []) as string[]);
    const hasBody = hasJsonBody(binding);
    const parameters = [
      ...pathParams.map((name) => ({
        name,
        in: 'path',
        required: true,
        schema: properties[name] ?? { type: 'string' },
      })),
      ...(hasBody
        ? []
        : Object.entries(properties)
            .filter(([name]) => !pathParams.includes(name))
            .map(([name, schema]) => ({
              name,
              in: 'query',
              required: required.has(name),
              schema,
              ...(schema.description ? { description: schema.description } : {}),
            }))),
    ];
    const bodyProperties = Object.fromEntries(
      Object.entries(properties).filter(([name]) => !pathParams.includes(name)),
    );
    const success = envelopeOf(output, binding.envelope ?? 'data', components);
    const statuses = binding.statuses ?? [binding.status ?? 200];
    (paths[openApiPath(binding.path)] ??= {})[binding.method.toLowerCase()] = {
      operationId: operation.name,
      summary: operation.title,
      description:
        operation.stability === 'beta'
          ? `Beta (Agent Accounts are in beta; see docs/http-api.md, Versioning and beta). ${operation.description}`
          : operation.description,
      ...(operation.stability === 'beta' ? { 'x-beta': true } : {}),
      ...(operation.deprecation
        ? {
            deprecated: true,
            'x-deprecation-date': operation.deprecation.since,
            ...(operation.deprecation.sunset !== undefined ? { 'x-sunset-date': operation.deprecation.sunset } : {}),
            ...(operation.deprecation.note !== undefined ? { 'x-deprecation-note': operation.deprecation.note } : {}),
          }
        : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(hasBody
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: {
                    ...input,
                    properties: bodyProperties,
                    required: [...required].filter((name) => !pathParams.includes(name)),
                  },
                },
                ...(binding.multipart ? { 'multipart/form-data': multipartBody(binding.multipart) } : {}),
              },
            },
          }
        : {}),
      responses: {
        ...Object.fromEntries(
          statuses.map((status) => [
            String(status),
            {
              description: status === 202 ? 'Accepted (scheduled)' : 'Success',
              content: {
                'application/json': { schema: success },
                // Streamed (Accept: text/event-stream): one `data: <JSON>` event per piece of the output, of its shape.
                ...(binding.stream
                  ? {
                      'text/event-stream': {
                        schema: {
                          type: 'string',
                          description:
                            "Server-sent events: `data: <JSON>` per piece, each of the output's shape; an error after the start is a last `event: error` with the error envelope",
                          contentMediaType: 'text/event-stream',
                        },
                      },
                    }
                  : {}),
              },
            },
          ]),
        ),
        default: ERROR_RESPONSE,
      },
      security:
        binding.auth === 'api_key_or_service_account' ? [{ apiKey: [] }, { serviceAccount: [] }] : [{ apiKey: [] }],
      'x-agentpost-tool': operation.tool,
    };
  }
  for (const [path, item] of Object.entries(HAND_WRITTEN_ROUTES)) {
    if (paths[path]) throw new Error(`OpenAPI: ${path} is both an operation and a hand-written route`);
    paths[path] = item;
  }
  const used = reachable(paths, components);
  return {
    openapi: '3.1.0',
    info: { title: 'Agentpost API (Nylas v3 compatible)', version: info.version },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: Object.fromEntries(
        Object.entries(components)
          .filter(([name]) => used.has(name))
          .sort(([a], [b]) => a.localeCompare(b)),
      ),
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>' },
        serviceAccount: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Nylas-Signature',
          description: 'Nylas service-account RSA signature (with X-Nylas-Kid, X-Nylas-Timestamp, X-Nylas-Nonce)',
        },
        metricsToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'Authorization: Bearer <AGENTPOST_METRICS_TOKEN> (only for /metrics)',
        },
      },
    },
  };
}
