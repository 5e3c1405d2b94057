/**
 * @module tools/mcp
 * `createMcpServer({ executor })`: every agent tool of the registry as an MCP tool (same names, schemas and
 * descriptions as the AI SDK tools and the HTTP API).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { OperationHints } from '../src/index.js';
import type { Executor } from './executor.js';
import { agentTools, type ToolSetOptions } from './registry.js';
import { runWithApproval } from './approval.js';
import { registerMailResources } from './resources.js';
import { toMcpError, toMcpResult } from './results.js';

// The executors a server is made with: on a core in this process, or against a running service's /v3 API.
export { localExecutor, remoteExecutor, type Executor } from './executor.js';

/** Package version reported to MCP clients. */
export const SERVER_INFO = { name: 'agentpost', version: '0.1.0' } as const;

function annotations(hints: OperationHints, title: string) {
  return {
    title,
    readOnlyHint: hints.readOnly,
    destructiveHint: hints.destructive ?? false,
    idempotentHint: hints.idempotent ?? hints.readOnly,
    openWorldHint: hints.openWorld ?? false,
  };
}

/** Options of {@link createMcpServer}. */
export interface McpServerOptions extends ToolSetOptions {
  executor: Executor;
}

/** Builds an MCP server (not yet connected to a transport). */
export function createMcpServer({ executor, grantId, requireApproval }: McpServerOptions): McpServer {
  const server = new McpServer(SERVER_INFO, {
    instructions:
      'Agentpost gives you a mailbox and a calendar. Start with list_folders or list_messages; reply with send_message and reply_to_message_id so replies thread. Times are Unix seconds; give time zones explicitly.',
  });
  for (const tool of agentTools({ grantId, requireApproval })) {
    const { operation } = tool;
    server.registerTool(
      operation.name,
      {
        title: operation.title,
        description: operation.description,
        inputSchema: tool.inputSchema,
        // A gated tool may answer with a draft instead of a sent message, so it declares no output schema.
        ...(tool.approval ? {} : { outputSchema: tool.outputSchema }),
        annotations: annotations(operation.hints, operation.title),
      },
      async (input: unknown) => {
        try {
          const prepared = tool.prepare((input ?? {}) as Record<string, unknown>);
          if (tool.approval) return await runWithApproval(server, executor, tool, prepared);
          return toMcpResult(await executor(operation, prepared));
        } catch (error) {
          return toMcpError(error);
        }
      },
    );
  }
  registerMailResources(server, executor, grantId);
  return server;
}
