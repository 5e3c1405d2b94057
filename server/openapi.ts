/**
 * The OpenAPI 3.1 document of `/v3`, generated from the operations registry (the same zod schemas that
 * validate requests and define the MCP and AI SDK tools).
 */
import { z } from 'zod';
import type { AnyOperation } from '../src/index.js';

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

function retarget(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(retarget);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, key === '$ref' && typeof inner === 'string' ? inner.replace('#/$defs/', '#/components/schemas/') : retarget(inner)]),
    );
  }
  return value;
}

const envelopeOf = (data: JsonSchema, kind: 'data' | 'list' | 'empty'): JsonSchema => {
  const requestId = { type: 'string', description: 'Request id (also in the x-request-id header)' };
  if (kind === 'empty') return { type: 'object', properties: { request_id: requestId }, required: ['request_id'] };
  if (kind === 'list') return { allOf: [{ type: 'object', properties: { request_id: requestId }, required: ['request_id'] }, data] };
  return { type: 'object', properties: { request_id: requestId, data }, required: ['request_id', 'data'] };
};

/** Builds the document. */
export function buildOpenApiDocument(operations: readonly AnyOperation[], info: { version: string }): JsonSchema {
  const components: Record<string, JsonSchema> = {
    Error: {
      type: 'object',
      properties: {
        request_id: { type: 'string' },
        error: { type: 'object', properties: { type: { type: 'string' }, message: { type: 'string' } }, required: ['type', 'message'] },
      },
      required: ['request_id', 'error'],
    },
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    const binding = operation.http;
    if (!binding) continue;
    const input = hoist(z.toJSONSchema(operation.input, { io: 'input', unrepresentable: 'any' }) as JsonSchema, components);
    const output = hoist(z.toJSONSchema(operation.output, { io: 'output', unrepresentable: 'any' }) as JsonSchema, components);
    const pathParams = [...binding.path.matchAll(/:([a-z_]+)/g)].map((match) => match[1]!);
    const properties = ((input.properties ?? {}) as Record<string, JsonSchema>);
    const required = new Set((input.required ?? []) as string[]);
    const hasBody = binding.method === 'POST' || binding.method === 'PUT' || binding.method === 'PATCH';
    const parameters = [
      ...pathParams.map((name) => ({ name, in: 'path', required: true, schema: properties[name] ?? { type: 'string' } })),
      ...(hasBody
        ? []
        : Object.entries(properties)
            .filter(([name]) => !pathParams.includes(name))
            .map(([name, schema]) => ({ name, in: 'query', required: required.has(name), schema, ...(schema.description ? { description: schema.description } : {}) }))),
    ];
    const bodyProperties = Object.fromEntries(Object.entries(properties).filter(([name]) => !pathParams.includes(name)));
    const status = String(binding.status ?? 200);
    (paths[openApiPath(binding.path)] ??= {})[binding.method.toLowerCase()] = {
      operationId: operation.name,
      summary: operation.title,
      description: operation.description,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(hasBody
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: { ...input, properties: bodyProperties, required: [...required].filter((name) => !pathParams.includes(name)) },
                },
              },
            },
          }
        : {}),
      responses: {
        [status]: { description: 'Success', content: { 'application/json': { schema: envelopeOf(output, binding.envelope ?? 'data') } } },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      security: binding.auth === 'api_key_or_service_account' ? [{ apiKey: [] }, { serviceAccount: [] }] : [{ apiKey: [] }],
      'x-agentpost-tool': operation.tool,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Agentpost API (Nylas v3 compatible)', version: info.version },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API_KEY>' },
        serviceAccount: { type: 'apiKey', in: 'header', name: 'X-Nylas-Signature', description: 'Nylas service-account RSA signature (with X-Nylas-Kid, X-Nylas-Timestamp, X-Nylas-Nonce)' },
      },
    },
  };
}
