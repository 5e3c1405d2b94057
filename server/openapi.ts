/**
 * The OpenAPI 3.1 document of the HTTP server, generated from the operations registry (the same zod schemas that
 * validate requests and define the MCP and AI SDK tools), plus the routes written by hand (attachment bytes, the ICS
 * feed, `/mcp`, the health and metrics routes, this document). Every success schema is one closed object, the exact
 * envelope the binder writes (`{request_id, data}`, `{request_id, data, next_cursor}` or `{request_id}`), so a strict
 * draft 2020-12 validator accepts the live responses (test/server/openapi-live.test.ts checks that).
 */
import { z } from 'zod';
import { hasJsonBody, OPERATION_NEEDS, permissionsFor, type AnyOperation } from '../src/index.js';
import { CONNECT_ROUTES } from './openapi-connect.js';
import { ERROR_RESPONSE, ERROR_SCHEMA, HAND_WRITTEN_ROUTES, REQUEST_ID, type JsonSchema } from './openapi-routes.js';

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
      // What a key needs to call it (any one of these; empty: every key), docs/keys.md. An operation outside the
      // registry (an embedder's own) has no entry: it states none.
      ...(operation.name in OPERATION_NEEDS ? { 'x-agentpost-permissions': permissionsFor(operation.name) } : {}),
    };
  }
  for (const [path, item] of Object.entries({ ...HAND_WRITTEN_ROUTES, ...CONNECT_ROUTES })) {
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
