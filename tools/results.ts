/**
 * @module tools/results
 * The one place MCP maps results and errors: an output object, shaped for a model (tools/compact.ts), becomes
 * `structuredContent` plus a short readable text (not a second copy of the JSON), text from outside fenced as data in
 * both (tools/fence.ts, a new boundary per result); AppError and zod errors become
 * `isError` results whose text tells the agent what to fix.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ZodError } from 'zod';
import { AppError } from '../src/index.js';
import { fieldText } from '../src/operations/index.js';
import { renderForAgent, shapeForAgent } from './compact.js';
import { fenceFields, fenceLine, newFence, type Fence } from './fence.js';

/** The shape `get_attachment` answers with. */
interface FileOutput {
  id: string;
  content_type: string;
  content: { encoding: 'utf8' | 'base64'; data: string; truncated: boolean };
}

function isFile(output: Record<string, unknown>): output is Record<string, unknown> & FileOutput {
  const content = output.content as FileOutput['content'] | undefined;
  return (
    typeof output.content_type === 'string' &&
    typeof content?.data === 'string' &&
    (content.encoding === 'base64' || content.encoding === 'utf8')
  );
}

/**
 * A successful tool result of `tool`, called with `input`. A file (get_attachment) is a text item with its
 * metadata plus the file itself: text inline, binary as an embedded resource, so hosts can show or pass it on
 * without decoding JSON. Anything else is shaped to its budget and read out in a few lines.
 */
export function toMcpResult(
  output: Record<string, unknown>,
  tool = '',
  input: Record<string, unknown> = {},
  fence: Fence = newFence(),
): CallToolResult {
  return shapedMcpResult(isFile(output) ? output : shapeForAgent(tool, output, input), tool, input, fence);
}

/** The text of a result with its outside text fenced, opened by the line naming the markers when it has any. */
function fencedText(text: string, fence: Fence): string {
  return text.includes(fence.open) ? `${fenceLine(fence)}\n${text}` : text;
}

/** {@link toMcpResult} of an output already shaped for an agent (what `readForAgent` answers). */
export function shapedMcpResult(
  shaped: Record<string, unknown>,
  tool = '',
  input: Record<string, unknown> = {},
  fence: Fence = newFence(),
): CallToolResult {
  if (isFile(shaped)) {
    const { content, ...metadata } = shaped;
    const file =
      content.encoding === 'utf8'
        ? { type: 'text' as const, text: content.data }
        : {
            type: 'resource' as const,
            resource: {
              uri: `agentpost://attachments/${encodeURIComponent(shaped.id)}`,
              mimeType: shaped.content_type,
              blob: content.data,
            },
          };
    const kept =
      content.encoding === 'base64' ? Buffer.from(content.data, 'base64').length : Buffer.byteLength(content.data);
    const note = content.truncated
      ? {
          hint: `only the first ${kept} of ${fieldText(shaped.size ?? '?')} bytes are here (max_bytes); call get_attachment with a larger max_bytes, or download the whole file: GET /v3/grants/${fieldText(input.grant_id ?? shaped.grant_id ?? '{grant_id}')}/attachments/${shaped.id}/download?message_id=${fieldText(input.message_id ?? '{message_id}')}`,
        }
      : undefined;
    return {
      content: [
        {
          type: 'text',
          text: fencedText(
            renderForAgent(tool, { ...metadata, ...(note ? { truncated: note } : {}) }, input, fence),
            fence,
          ),
        },
        file,
      ],
      structuredContent: { ...fenceFields(metadata, fence), content },
    };
  }
  return {
    content: [{ type: 'text', text: fencedText(renderForAgent(tool, shaped, input, fence), fence) }],
    structuredContent: fenceFields(shaped, fence),
  };
}

/** What an agent reads when a call fails: `<code>: <message>` (`<code> (<type>): <message>` for an error with a type of its own). */
export function errorText(error: unknown): string {
  if (error instanceof AppError)
    return `${error.code}${error.type !== undefined ? ` (${error.type})` : ''}: ${error.message}`;
  if (error instanceof ZodError) {
    return `invalid_request: ${error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')}`;
  }
  return 'internal: the operation failed unexpectedly; try again later.';
}

/** A failed tool result. */
export function toMcpError(error: unknown): CallToolResult {
  return { content: [{ type: 'text', text: errorText(error) }], isError: true };
}
