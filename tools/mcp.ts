/**
 * @module tools/mcp
 * `createMcpServer({ executor })`: every agent tool of the registry as an MCP tool (same names, schemas and
 * descriptions as the AI SDK tools and the HTTP API).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { OperationHints } from '../src/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { withCall, type Executor, type ToolCall } from './executor.js';
import { agentTools, type ToolSetOptions } from './registry.js';
import { runWithApproval } from './approval.js';
import { inputJsonSchema } from './manifest.js';
import { registerMailResources } from './resources.js';
import { registerSubscriptions } from './subscriptions.js';
import type { EventFeed } from './event-feed.js';
import { readForAgent } from './compact.js';
import { shapedMcpResult, toMcpError } from './results.js';
import { newFence } from './fence.js';

/** The executors a server is made with: on a core in this process, or against a running service's `/v3` API. */
export { localExecutor, remoteExecutor, type Executor, type ToolCall } from './executor.js';
export { localEventFeed, remoteEventFeed, type EventFeed, type FeedEvent } from './event-feed.js';

/** What the HTTP face hands a request's tool calls (`authInfo.extra` of the MCP transport): its id and client address. */
export interface McpRequestInfo {
  requestId?: string | undefined;
  address?: string | undefined;
}

/**
 * Who makes a call: the MCP client as its `initialize` named itself (clientInfo), the session (Streamable HTTP's
 * Mcp-Session-Id), and what the HTTP face passed along (request id, address).
 */
function callOf(
  server: McpServer,
  tool: string | undefined,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification> | undefined,
): ToolCall {
  const info = server.server.getClientVersion();
  const passed = extra?.authInfo?.extra as McpRequestInfo | undefined;
  const client = {
    ...(info?.name ? { name: info.name.slice(0, 200) } : {}),
    ...(info?.version ? { version: info.version.slice(0, 100) } : {}),
    ...(extra?.sessionId ? { session: extra.sessionId } : {}),
  };
  return {
    face: 'mcp',
    tool,
    ...(Object.keys(client).length > 0 ? { client } : {}),
    ...(passed?.requestId ? { requestId: passed.requestId } : {}),
    ...(passed?.address ? { address: passed.address } : {}),
  };
}

/** Package version reported to MCP clients. */
const SERVER_INFO = { name: 'agentpost', version: '0.1.0' } as const;

function annotations(hints: OperationHints) {
  return {
    readOnlyHint: hints.readOnly,
    destructiveHint: hints.destructive ?? false,
    idempotentHint: hints.idempotent ?? hints.readOnly,
    openWorldHint: hints.openWorld ?? false,
  };
}

/**
 * The MCP defaults of each annotation (a hint left out means this): a tool may write, destructively, not
 * idempotently, reaching beyond the server.
 */
const ANNOTATION_DEFAULTS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
} as const;

/**
 * The annotations `tools/list` states: only those that differ from the MCP defaults, and of a read-only tool not
 * destructiveHint or idempotentHint (MCP gives them meaning only for tools that write). Hosts read the same.
 */
function statedAnnotations(hints: OperationHints): Partial<ReturnType<typeof annotations>> {
  const all = annotations(hints);
  const stated: Partial<ReturnType<typeof annotations>> = {};
  for (const key of Object.keys(all) as (keyof typeof all)[]) {
    if (hints.readOnly && (key === 'destructiveHint' || key === 'idempotentHint')) continue;
    if (all[key] !== ANNOTATION_DEFAULTS[key]) stated[key] = all[key];
  }
  return stated;
}

/** Options of {@link createMcpServer}. */
export interface McpServerOptions extends ToolSetOptions {
  executor: Executor;
  /**
   * Where resource subscriptions hear of new mail (./event-feed.ts); without it the server offers no `subscribe`
   * (a stateless server, which lives for one request).
   */
  events?: EventFeed | undefined;
}

/** Builds an MCP server (not yet connected to a transport). */
export function createMcpServer({
  executor,
  grantId,
  requireApproval,
  random,
  permissions,
  events,
}: McpServerOptions): McpServer {
  const server = new McpServer(SERVER_INFO, {
    instructions:
      'Agentpost gives you a mailbox and a calendar. Start with list_folders or list_messages; reply with send_message and reply_to_message_id so replies thread. Times are Unix seconds; give time zones explicitly.',
  });
  const tools = agentTools({ grantId, requireApproval, permissions });
  for (const tool of tools) {
    const { operation } = tool;
    server.registerTool(
      operation.name,
      {
        title: operation.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        // A gated tool may answer with a draft instead of a sent message, so it declares no output schema.
        ...(tool.approval ? {} : { outputSchema: tool.outputSchema }),
        annotations: annotations(operation.hints),
      },
      async (input: unknown, extra) => {
        try {
          const asked = (input ?? {}) as Record<string, unknown>;
          const prepared = tool.prepare(asked);
          // Every operation the tool runs is recorded as this tool's, by this client (access log, provenance).
          const called = withCall(executor, callOf(server, operation.name, extra));
          if (tool.approval) return await runWithApproval(server, called, tool, prepared);
          return shapedMcpResult(
            await readForAgent(called, operation, prepared, asked),
            operation.name,
            asked,
            newFence(random),
          );
        } catch (error) {
          return toMcpError(error);
        }
      },
    );
  }
  // tools/list from our own compact JSON Schemas (tools/manifest.ts) rather than the SDK's full rendering: the
  // manifest is in every agent's context (issue 35: at most 24,000 characters). Calls are still validated by the SDK
  // with the zod schemas registered above, and results checked against their output schemas. The manifest states
  // no output schema: the text content reads each result out, the structured content is self-describing, and the
  // schemas cost a fifth of the manifest for no model's benefit. Nor a title: hosts show the name.
  const manifest: Tool[] = tools.map((tool) => ({
    name: tool.operation.name,
    description: tool.description,
    inputSchema: inputJsonSchema(tool.inputSchema) as Tool['inputSchema'],
    annotations: statedAnnotations(tool.operation.hints),
  }));
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: manifest }));
  // Resource reads run operations too: recorded as this client's, with no tool.
  const resourceExecutor: Executor = (operation, input) =>
    executor(operation, input, callOf(server, undefined, undefined));
  registerMailResources(server, resourceExecutor, grantId, random);
  if (events) registerSubscriptions(server, resourceExecutor, events);
  return server;
}
