/**
 * @module tools/registry
 * The operations that agents get as tools, with `grant_id` removed from the schema when the tool set is bound
 * to one mailbox, and the fields an operation's `agent.omit` names left out. Both the MCP server and the AI SDK tool set are built from this list.
 */
import { z } from 'zod';
import { mayCall, operations, type AnyOperation, type Permission } from '../src/index.js';
import { INCLUDE_HTML_FIELD, READ_FIELDS, compactOutputSchema } from './compact.js';
import { FENCE_RULE, type RandomBytes } from './fence.js';

/** One tool: its operation and the input schema the agent sees. */
export interface AgentTool {
  operation: AnyOperation;
  /** What the agent reads of the tool: its operation's description, and for a tool that reads mail how the fence works. */
  description: string;
  inputSchema: z.ZodObject;
  /**
   * The output schema as an inline object (MCP requires `type: object` at the root, not a `$ref`); list tools
   * whose items are compacted (`agent.compact`, tools/compact.ts) declare the compact item.
   */
  outputSchema: z.ZodObject;
  /** Completes the agent's input (adds the bound grant, drops the tool-only fields: `include_html`, `body_format`, `max_tokens`). */
  prepare(input: Record<string, unknown>): Record<string, unknown>;
  /** True when a person must approve each call first (`requireApproval` on a tool whose operation sends mail: `agent.sends`). */
  approval: boolean;
}

/** Whether one call of a tool waits for a person: a sending tool under `requireApproval`, unless it is a dry run (it sends nothing). */
export function callNeedsApproval(tool: AgentTool, input: unknown): boolean {
  return tool.approval && (input as { dry_run?: unknown } | undefined)?.dry_run !== true;
}

/** Options shared by every face. */
export interface ToolSetOptions {
  /** Bind every tool to this grant (id or email): `grant_id` disappears from the tool schemas. */
  grantId?: string | undefined;
  /**
   * Human in the loop: the tools that send mail (`agent.sends`: `send_message`, `send_draft`) need a person's approval
   * (AI SDK: the tool's `needsApproval`; MCP: elicitation where the client supports it, otherwise a draft is created instead).
   */
  requireApproval?: boolean | undefined;
  /** Where fence boundaries come from (tools/fence.ts): node's crypto unless a test passes its own. */
  random?: RandomBytes | undefined;
  /**
   * Offer only the tools these permissions allow (the calling key's, issue 36); absent: every tool. The server
   * refuses a call the key may not make either way: this keeps such tools out of the agent's sight.
   */
  permissions?: ReadonlySet<Permission> | undefined;
}

/** The agent tool list, in registry order. */
export function agentTools({ grantId, requireApproval = false, permissions }: ToolSetOptions = {}): AgentTool[] {
  return operations
    .filter((operation) => operation.tool && mayCall({ permissions }, operation))
    .map((operation) => {
      const { agent = {} } = operation;
      const outputSchema = agent.compact ? compactOutputSchema(agent.compact) : inline(operation.output);
      const approval = requireApproval && agent.sends !== undefined;
      const bound = grantId !== undefined && 'grant_id' in operation.input.shape;
      const omitted = new Set([...(agent.omit ?? []), ...(bound ? ['grant_id'] : [])]);
      const offered = Object.fromEntries(Object.entries(operation.input.shape).filter(([key]) => !omitted.has(key)));
      const reads = agent.body !== undefined || agent.compact !== undefined;
      // The tool-only fields are the faces' to apply (tools/compact.ts): the operation answers its stored object.
      // Only the fields this face added are taken away (read_attachment's own max_tokens is its operation's).
      // `agent.omit` may name them too (a read whose body matters less than its other fields: wait_for_message).
      const added = Object.fromEntries(
        Object.entries({ ...(agent.body ? INCLUDE_HTML_FIELD : {}), ...(reads ? READ_FIELDS : {}) }).filter(
          ([key]) => !omitted.has(key),
        ),
      );
      const shape = { ...offered, ...added };
      const prepare = (input: Record<string, unknown>) => {
        const forwarded = Object.fromEntries(Object.entries(input).filter(([key]) => !(key in added)));
        return bound ? { ...forwarded, grant_id: grantId } : forwarded;
      };
      // A tool that reads mail says how its text is fenced as data (tools/fence.ts).
      const description = reads ? `${operation.description} ${FENCE_RULE}` : operation.description;
      return { operation, description, inputSchema: z.object(shape), outputSchema, prepare, approval };
    });
}

/**
 * The same object schema without its registry id: a schema with `.meta({ id })` renders as a `$ref` at the
 * root of its JSON Schema, which MCP does not accept for tool input and output schemas.
 */
function inline(schema: z.ZodType): z.ZodObject {
  if (!(schema instanceof z.ZodObject))
    throw new Error('Tool schemas must be objects (MCP structuredContent is an object).');
  return z.object(schema.shape);
}
