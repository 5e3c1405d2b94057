/**
 * @module server/openapi-routes
 * The routes of the OpenAPI document (./openapi.ts) written by hand, not generated from an operation: attachment
 * bytes, the ICS feed, `/mcp`, the health and metrics routes, this document; with the error envelope every route
 * answers with.
 */
import { z } from 'zod';
import { CalendarRefInputSchema } from '../src/schemas/calendars.js';
import { GetAttachmentInputSchema } from '../src/schemas/messages.js';

/** A JSON Schema object of the document. */
export type JsonSchema = Record<string, unknown>;

/** The request id of every envelope. */
export const REQUEST_ID: JsonSchema = { type: 'string', description: 'Request id (also in the x-request-id header)' };

/** The error envelope, the `Error` component. */
export const ERROR_SCHEMA: JsonSchema = {
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

export const ERROR_RESPONSE = {
  description: 'Error',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
};

/** `in: path|query` parameters of a hand-written route, from the zod schema it parses its input with. */
export function parametersOf(schema: z.ZodObject, inPath: readonly string[]): JsonSchema[] {
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
export const HAND_WRITTEN_ROUTES: Record<string, Record<string, unknown>> = {
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
        "The attachment's exact bytes, with its own Content-Type (image/png, application/pdf, text/plain, …; application/octet-stream when it has none or an unusable one) and a Content-Disposition carrying the file name. Errors are JSON.",
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
            // The attachment's own media type, whatever it is; the generic one when it has none.
            '*/*': {
              schema: {
                type: 'string',
                description: "The bytes, as the attachment's own media type (its content_type)",
              },
            },
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
      // The pre-signed URL's token is the credential: no API key.
      security: [],
    },
  },
  '/approvals/review': {
    get: {
      operationId: 'approval_review_page',
      summary: "A reviewer's confirmation page of a held send",
      description:
        'Extension (docs/oversight.md): the page a reviewer named by the policy is mailed a link to. Shows the held send and, while it is pending, a form to approve or reject it; opening it decides nothing. No key needed: the signed token is the credential. A forged or altered token is a 404 page.',
      security: [],
      parameters: [
        {
          name: 'token',
          in: 'query',
          required: true,
          schema: { type: 'string' },
          description: 'The signed review token',
        },
      ],
      responses: {
        '200': { description: 'The page', content: { 'text/html': { schema: { type: 'string' } } } },
        '404': { description: 'Not a valid review link', content: { 'text/html': { schema: { type: 'string' } } } },
      },
    },
    post: {
      operationId: 'approval_review_decide',
      summary: 'Decide a held send from its confirmation page',
      description:
        "The page's form (application/x-www-form-urlencoded: token, decision = approve|reject, reason): decides once, as the reviewer the token names. 409 when it was decided already.",
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              required: ['token', 'decision'],
              properties: {
                token: { type: 'string' },
                decision: { type: 'string', enum: ['approve', 'reject'] },
                reason: { type: 'string', maxLength: 2000 },
              },
            },
          },
        },
      },
      responses: {
        '200': { description: 'Decided', content: { 'text/html': { schema: { type: 'string' } } } },
        '404': { description: 'Not a valid review link', content: { 'text/html': { schema: { type: 'string' } } } },
        '409': { description: 'Decided already', content: { 'text/html': { schema: { type: 'string' } } } },
      },
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
  '/v3/events/stream': {
    get: {
      operationId: 'stream_events',
      summary: 'Stream events (Server-Sent Events or WebSocket)',
      description:
        'Extension. The notifications webhooks carry (the same ids and payloads, with a cursor), as they are committed: Server-Sent Events (`id:` is the cursor; a comment line is the heartbeat), or, with `Upgrade: websocket`, one JSON notification per text frame. Resume after an event with `Last-Event-ID` or `cursor`; a cursor older than AGENTPOST_EVENT_RETENTION_HOURS answers 410 `cursor_expired`. Needs mail.read, calendar.read, contacts.read, approvals.decide or webhooks.manage; the stream carries the event types those cover.',
      'x-agentpost-permissions': ['mail.read', 'calendar.read', 'contacts.read', 'webhooks.manage', 'approvals.decide'],
      parameters: [
        {
          name: 'grant_id',
          in: 'query',
          required: false,
          schema: { type: 'array', items: { type: 'string' } },
          style: 'form',
          explode: true,
          description:
            'Only these grants’ events (repeatable, or comma-separated); absent: every grant the key reaches',
        },
        {
          name: 'trigger_types',
          in: 'query',
          required: false,
          schema: { type: 'string' },
          description: 'Comma-separated trigger types; absent: every type the key may see',
        },
        {
          name: 'cursor',
          in: 'query',
          required: false,
          schema: { type: 'string' },
          description: 'Resume after this event (as Last-Event-ID)',
        },
        {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          schema: { type: 'string' },
          description: 'The cursor of the last event received (EventSource sends it when it reconnects)',
        },
      ],
      responses: {
        '200': {
          description: 'The stream',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        '101': { description: 'Switching to a WebSocket (a request with Upgrade: websocket)' },
        default: ERROR_RESPONSE,
      },
      security: [{ apiKey: [] }],
    },
  },
};
