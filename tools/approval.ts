/**
 * @module tools/approval
 * Human in the loop over MCP: before a tool whose operation sends mail (`agent.sends`) runs, the person is asked
 * through elicitation when the client supports it; otherwise nothing is sent, and a message composed by the call
 * (`sends: 'message'`) is saved as a draft for a person to send.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fieldText } from '../src/operations/index.js';
import type { Executor } from './executor.js';
import { operationNamed } from './compact.js';
import { callNeedsApproval, type AgentTool } from './registry.js';
import { toMcpResult } from './results.js';

/** The question put to the person, as the operation's `agent.sends` says what it sends. */
function summary(tool: AgentTool, input: Record<string, unknown>): string {
  const mailbox = fieldText(input.grant_id ?? 'this mailbox');
  if (tool.operation.agent?.sends === 'draft') return `Send draft ${String(input.draft_id)} from ${mailbox}?`;
  const to = ((input.to as { email: string }[] | undefined) ?? []).map((recipient) => recipient.email).join(', ');
  return `Send "${fieldText(input.subject ?? '(no subject)')}" to ${to || 'nobody'} from ${mailbox}?`;
}

/** Runs a sending tool only with a person's consent. */
export async function runWithApproval(
  server: McpServer,
  executor: Executor,
  tool: AgentTool,
  input: Record<string, unknown>,
): Promise<CallToolResult> {
  // A dry run sends nothing: it runs without asking.
  if (!callNeedsApproval(tool, input))
    return toMcpResult(await executor(tool.operation, input), tool.operation.name, input);
  if (server.server.getClientCapabilities()?.elicitation) {
    const answer = await server.server.elicitInput({
      mode: 'form',
      message: summary(tool, input),
      requestedSchema: {
        type: 'object',
        properties: { approve: { type: 'boolean', title: 'Send it', description: 'Approve sending this message' } },
        required: ['approve'],
      },
    });
    if (answer.action === 'accept' && answer.content?.approve === true)
      return toMcpResult(await executor(tool.operation, input), tool.operation.name, input);
    return {
      content: [
        {
          type: 'text',
          text: `not_sent: the person did not approve (${answer.action}). Ask them what to change, or leave it.`,
        },
      ],
      isError: true,
    };
  }
  if (tool.operation.agent?.sends === 'message') {
    // The message the call composes, kept for a person: create_draft takes the fields of a send, less its schedule.
    const { send_at: _sendAt, use_draft: _useDraft, ...draftInput } = input;
    const draft = await executor(operationNamed('create_draft'), draftInput);
    return {
      content: [
        {
          type: 'text',
          text: `approval_required: nothing was sent. Draft ${String(draft.id)} holds the message; a person must review and send it.`,
        },
      ],
      structuredContent: { approval_required: true, draft },
    };
  }
  return {
    content: [{ type: 'text', text: 'approval_required: a person must send this draft; it was not sent.' }],
    isError: true,
  };
}
