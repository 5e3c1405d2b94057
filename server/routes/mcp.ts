/**
 * MCP over Streamable HTTP at `/mcp`, with the same Bearer authentication as `/v3`. Sessions, as in the MCP SDK's
 * stateful examples: an `initialize` request opens one (its id comes back in `Mcp-Session-Id`), later requests
 * carrying that header reach the same server, so the client's capabilities are known and elicitation (approval
 * of a send) reaches the person over the request's event stream; `DELETE /mcp` ends it. A session is bound to
 * the application that opened it (optionally to one grant with `?grant_id=`; `require_approval=true` gates
 * sending), is dropped after {@link MCP_SESSION_IDLE_MS} idle, and at most {@link MAX_MCP_SESSIONS} are kept.
 * A request without a session that is not an `initialize` is served statelessly, as before sessions existed.
 * The body is read here, within its limit, so the request can be counted against the grant it names; errors take
 * the JSON-RPC shape.
 */
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { AppError, type Core } from '../../src/index.js';
import { localExecutor } from '../../tools/executor.js';
import { createMcpServer, localEventFeed, type McpRequestInfo } from '../../tools/mcp.js';
import { authenticate } from '../middleware/auth.js';
import { peerAddress, type RateLimiter, type RateTarget } from '../middleware/rate-limit.js';
import type { AppEnv } from '../types.js';

/** Largest `/mcp` request body: 4 MB, the MCP SDK's own default (a JSON-RPC message, not a file upload). */
export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/** An idle session is closed after 15 minutes (an approval prompt waits on a person; a chat turn rarely takes longer). */
export const MCP_SESSION_IDLE_MS = 15 * 60 * 1000;
/** Sessions kept at once; opening one more closes the least recently used (each holds a server and its streams). */
export const MAX_MCP_SESSIONS = 1000;

interface McpSession {
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  applicationId: string;
  /** The key that opened it: only that key may use it. */
  keyId: string | undefined;
  lastUsed: number;
}

/** JSON-RPC error answer outside any transport (an unknown or foreign session). */
const rpcError = (status: number, code: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });

/** Mounts `/mcp` on the app. Returns a function that closes every open session (for shutdown). */
export function mountMcp(app: Hono<AppEnv>, core: Core, limiter: RateLimiter): () => Promise<void> {
  const sessions = new Map<string, McpSession>();
  const close = async (id: string) => {
    const session = sessions.get(id);
    sessions.delete(id);
    await session?.server.close().catch(() => undefined);
  };
  const sweep = setInterval(
    () => {
      const idleSince = Date.now() - MCP_SESSION_IDLE_MS;
      for (const [id, session] of sessions) if (session.lastUsed < idleSince) void close(id);
    },
    Math.min(60_000, MCP_SESSION_IDLE_MS),
  );
  sweep.unref();

  const limit = bodyLimit({
    maxSize: MAX_MCP_BODY_BYTES,
    onError: () => {
      throw new AppError(
        'payload_too_large',
        `The request body is larger than the ${MAX_MCP_BODY_BYTES / 1024 / 1024} MB limit of /mcp.`,
      );
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
    const principal = c.get('principal');
    // The request's id and the client's address reach the tool calls it carries (access log, provenance) as the
    // transport's auth info.
    const passed: McpRequestInfo = { requestId: c.get('requestId'), address: peerAddress(c) };
    const authInfo = { token: '', clientId: principal.applicationId, scopes: [], extra: { ...passed } };
    const options = parsedBody !== undefined ? { parsedBody, authInfo } : { authInfo };
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId) {
      const session = sessions.get(sessionId);
      // Another application's session, or another key's, is answered as unknown: its id must not tell that it exists.
      if (!session || session.applicationId !== principal.applicationId || session.keyId !== principal.key?.id)
        return rpcError(404, -32001, 'Session not found: start a new one with initialize.');
      session.lastUsed = Date.now();
      return session.transport.handleRequest(request, options);
    }
    if (c.req.method === 'POST' && isInitializeRequest(parsedBody)) {
      if (sessions.size >= MAX_MCP_SESSIONS) {
        const [oldest] = [...sessions].sort(([, a], [, b]) => a.lastUsed - b.lastUsed)[0] ?? [];
        if (oldest) await close(oldest);
      }
      const permissions = principal.permissions;
      const server = createMcpServer({
        executor: localExecutor(core, principal),
        grantId,
        requireApproval,
        permissions,
        // Resource subscriptions (notifications on the session's GET stream), ended with the session.
        events: localEventFeed(core, principal),
      });
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        maxRequestBodySize: MAX_MCP_BODY_BYTES,
        // Event streams, not single JSON answers: a tool call may send the client a request (elicitation) before it ends.
        onsessioninitialized: (id) => {
          sessions.set(id, {
            server,
            transport,
            applicationId: principal.applicationId,
            keyId: principal.key?.id,
            lastUsed: Date.now(),
          });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      return transport.handleRequest(request, options);
    }
    // No session: one server for this request only (clients that never initialize, curl); a transport without a
    // sessionIdGenerator is stateless.
    const server = createMcpServer({
      executor: localExecutor(core, principal),
      grantId,
      requireApproval,
      permissions: principal.permissions,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      enableJsonResponse: true,
      maxRequestBodySize: MAX_MCP_BODY_BYTES,
    });
    await server.connect(transport);
    return transport.handleRequest(request, options);
  });
  return async () => {
    clearInterval(sweep);
    await Promise.all([...sessions.keys()].map(close));
  };
}

/**
 * What an `/mcp` request is counted against: the grant bound with `?grant_id=`, or the `grant_id` argument of a
 * single tool call; else the application. A batch costs one token per message.
 */
export function mcpTarget(boundGrant: string | undefined, body: unknown): RateTarget {
  if (Array.isArray(body))
    return boundGrant !== undefined
      ? { grant: boundGrant, cost: Math.max(1, body.length) }
      : { cost: Math.max(1, body.length) };
  if (boundGrant !== undefined) return { grant: boundGrant };
  const message = body as { method?: unknown; params?: { arguments?: { grant_id?: unknown } } } | undefined;
  const grant = message?.method === 'tools/call' ? message.params?.arguments?.grant_id : undefined;
  return typeof grant === 'string' && grant !== '' ? { grant } : {};
}
