/**
 * @module tools/ai-sdk
 * `createAgentpostTools(...)`: the registry's agent tools as Vercel AI SDK (`ai` v6) tools, in-process (a core
 * and a principal) or remote (a service URL and API key). Same names and schemas as the MCP tools.
 */
import { jsonSchema, tool, type JSONSchema7, type Tool } from 'ai';
import { ZodError } from 'zod';
import { AppError, describeZodError, type Core, type Principal } from '../src/index.js';
import { localExecutor, remoteExecutor, withCall, type Executor } from './executor.js';
import { agentTools, callNeedsApproval, type ToolSetOptions } from './registry.js';
import { readForAgent } from './compact.js';
import { inputJsonSchema } from './manifest.js';
import { fenceFields, newFence } from './fence.js';

/** In-process: tools call the core directly as `principal`. */
export interface LocalToolsOptions extends ToolSetOptions {
  core: Core;
  principal: Principal;
}

/** Remote: tools call a running Agentpost's `/v3` API. */
export interface RemoteToolsOptions extends ToolSetOptions {
  url: string;
  apiKey: string;
  fetch?: typeof fetch | undefined;
}

/**
 * Returns a tool set for `generateText` / `streamText`. Results are sized for a model: list tools return compact
 * items, get_message a text body (HTML with `include_html`), every result within a budget. A failing call throws; the AI SDK turns it into a
 * tool-error the model reads, and our messages say what to fix.
 */
export function createAgentpostTools(options: LocalToolsOptions | RemoteToolsOptions): Record<string, Tool> {
  const executor: Executor =
    'core' in options
      ? localExecutor(options.core, options.principal)
      : remoteExecutor({
          url: options.url,
          apiKey: options.apiKey,
          ...(options.fetch ? { fetch: options.fetch } : {}),
        });
  const tools: Record<string, Tool> = {};
  const permissions = options.permissions ?? ('core' in options ? options.principal.permissions : undefined);
  for (const agentTool of agentTools({
    grantId: options.grantId,
    requireApproval: options.requireApproval,
    permissions,
  })) {
    // Every operation the tool runs is recorded as this tool's, through the AI SDK (access log, provenance).
    const called = withCall(executor, { face: 'ai-sdk', tool: agentTool.operation.name });
    tools[agentTool.operation.name] = tool({
      description: agentTool.description,
      // The model reads the same compact JSON Schema as tools/list (tools/manifest.ts), no larger; calls are still
      // checked with the full zod schema.
      inputSchema: jsonSchema(inputJsonSchema(agentTool.inputSchema) as JSONSchema7, {
        validate: (value) => {
          const parsed = agentTool.inputSchema.safeParse(value);
          return parsed.success ? { success: true, value: parsed.data } : { success: false, error: parsed.error };
        },
      }),
      // With requireApproval, generateText stops at a tool-approval-request; the call runs once it is approved.
      // A dry run (send_message's dry_run) sends nothing, so it needs no approval.
      needsApproval:
        agentTool.approval && 'dry_run' in agentTool.inputSchema.shape
          ? (input: unknown) => callNeedsApproval(agentTool, input)
          : agentTool.approval,
      // The same compact items, readable bodies and size budget as over MCP (tools/compact.ts).
      execute: async (input: unknown) => {
        const asked = input as Record<string, unknown>;
        const prepared = agentTool.prepare(asked);
        try {
          // Text from outside fenced as data, a new boundary per result (tools/fence.ts).
          return fenceFields(
            await readForAgent(called, agentTool.operation, prepared, asked),
            newFence(options.random),
          );
        } catch (error) {
          // Input the tool's schema let through but the operation refuses: an invalid_request saying what to fix, as over /v3 and MCP.
          if (error instanceof ZodError)
            throw new AppError('invalid_request', describeZodError(error), undefined, { cause: error });
          throw error;
        }
      },
    });
  }
  return tools;
}
