/**
 * MCP over Streamable HTTP at `/mcp`, with the same Bearer authentication as `/v3`. Stateless: each request
 * gets a fresh server and transport bound to the caller's application (optionally to one grant with the
 * `grant_id` query parameter; `require_approval=true` gates sending on a person's approval).
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Hono } from 'hono';
import type { Core } from '../../src/index.js';
import { localExecutor } from '../../tools/executor.js';
import { createMcpServer } from '../../tools/mcp.js';
import { authenticate } from '../middleware/auth.js';
import type { AppEnv } from '../types.js';

/** Mounts `/mcp` on the app. */
export function mountMcp(app: Hono<AppEnv>, core: Core): void {
  app.all('/mcp', authenticate(core), async (c) => {
    const grantId = c.req.query('grant_id') || undefined;
    const requireApproval = c.req.query('require_approval') === 'true';
    const server = createMcpServer({ executor: localExecutor(core, c.get('principal')), grantId, requireApproval });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });
}
