/**
 * @module tools/registry
 * The operations that agents get as tools, with `grant_id` removed from the schema when the tool set is bound
 * to one mailbox. Both the MCP server and the AI SDK tool set are built from this list.
 */
import { z } from 'zod';
import { operations, type AnyOperation } from '../src/index.js';

/** One tool: its operation and the input schema the agent sees. */
export interface AgentTool {
  operation: AnyOperation;
  inputSchema: z.ZodObject;
  /** The output schema as an inline object (MCP requires `type: object` at the root, not a `$ref`). */
  outputSchema: z.ZodObject;
  /** Completes the agent's input (adds the bound grant). */
  prepare(input: Record<string, unknown>): Record<string, unknown>;
  /** True when a person must approve each call first (`requireApproval` on a sending tool). */
  approval: boolean;
}

/** The tools that send mail: gated by `requireApproval`. */
export const SENDING_TOOLS: ReadonlySet<string> = new Set(['send_message', 'send_draft']);

/** Options shared by every face. */
export interface ToolSetOptions {
  /** Bind every tool to this grant (id or email): `grant_id` disappears from the tool schemas. */
  grantId?: string | undefined;
  /**
   * Human in the loop: `send_message` and `send_draft` need a person's approval (AI SDK: the tool's
   * `needsApproval`; MCP: elicitation where the client supports it, otherwise a draft is created instead).
   */
  requireApproval?: boolean | undefined;
}

/** The agent tool list, in registry order. */
export function agentTools({ grantId, requireApproval = false }: ToolSetOptions = {}): AgentTool[] {
  return operations
    .filter((operation) => operation.tool)
    .map((operation) => {
      const outputSchema = inline(operation.output);
      const approval = requireApproval && SENDING_TOOLS.has(operation.name);
      const takesGrant = 'grant_id' in operation.input.shape;
      if (grantId === undefined || !takesGrant) {
        return { operation, inputSchema: inline(operation.input), outputSchema, prepare: (input) => input, approval };
      }
      const { grant_id: _bound, ...shape } = operation.input.shape;
      return { operation, inputSchema: z.object(shape), outputSchema, prepare: (input) => ({ ...input, grant_id: grantId }), approval };
    });
}

/**
 * The same object schema without its registry id: a schema with `.meta({ id })` renders as a `$ref` at the
 * root of its JSON Schema, which MCP does not accept for tool input and output schemas.
 */
function inline(schema: z.ZodType): z.ZodObject {
  if (!(schema instanceof z.ZodObject)) throw new Error('Tool schemas must be objects (MCP structuredContent is an object).');
  return z.object(schema.shape);
}
