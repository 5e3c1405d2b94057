/**
 * MCP over Streamable HTTP at `/mcp`, with the same Bearer authentication as `/v3`. Stateless: each request
 * gets a fresh server and transport bound to the caller's application (optionally to one grant with the
 * `grant_id` query parameter; `require_approval=true` gates sending on a person's approval). The body is read here,
 * within its limit, so the request can be counted against the grant it names; errors take the JSON-RPC shape.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError, type Core } from '../../src/index.js';
import { localExecutor } from '../../tools/executor.js';
import { createMcpServer } from '../../tools/mcp.js';
import { authenticate } from '../middleware/auth.js';
import type { RateLimiter, RateTarget } from '../middleware/rate-limit.js';
import type { AppEnv } from '../types.js';

/** Largest `/mcp` request body: 4 MB, the MCP SDK's own default (a JSON-RPC message, not a file upload). */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/** Mounts `/mcp` on the app. */
export function mountMcp(app: Hono<AppEnv>, core: Core, limiter: RateLimiter): void {
  const limit = bodyLimit({
    maxSize: MAX_MCP_BODY_BYTES,
    onError: () => {
      throw new AppError('payload_too_large', `The request body is larger than the ${MAX_MCP_BODY_BYTES / 1024 / 1024} MB limit of /mcp.`);
    },
  });
  app.all('/mcp', limit, authenticate(core, limiter), async (c) => {
    const grantId = c.req.query('grant_id') || undefined;
    const requireApproval = c.req.query('require_approval') === 'true';
    let request = c.req.raw;
    let parsedBody: unknown;
    if (c.req.method === 'POST' && /^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
      const text = await c.req.text();
      try {
        parsedBody = JSON.parse(text);
      } catch {
        // Not JSON: the transport answers it (-32700) from the text, as it would have read it.
        request = new Request(c.req.raw.url, { method: 'POST', headers: c.req.raw.headers, body: text });
      }
    }
    limiter.take(c, mcpTarget(grantId, parsedBody));
    const server = createMcpServer({ executor: localExecutor(core, c.get('principal')), grantId, requireApproval });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: MAX_MCP_BODY_BYTES });
    await server.connect(transport);
    return transport.handleRequest(request, parsedBody !== undefined ? { parsedBody } : undefined);
  });
}

/**
 * What an `/mcp` request is counted against: the grant bound with `?grant_id=`, or the `grant_id` argument of a
 * single tool call; else the application. A batch costs one token per message.
 */
export function mcpTarget(boundGrant: string | undefined, body: unknown): RateTarget {
  if (Array.isArray(body)) return boundGrant !== undefined ? { grant: boundGrant, cost: Math.max(1, body.length) } : { cost: Math.max(1, body.length) };
  if (boundGrant !== undefined) return { grant: boundGrant };
  const message = body as { method?: unknown; params?: { arguments?: { grant_id?: unknown } } } | undefined;
  const grant = message?.method === 'tools/call' ? message.params?.arguments?.grant_id : undefined;
  return typeof grant === 'string' && grant !== '' ? { grant } : {};
}
