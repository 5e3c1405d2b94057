/**
 * @module tools/results
 * The one place MCP maps results and errors: output objects become `structuredContent` plus JSON text;
 * AppError and zod errors become `isError` results whose text tells the agent what to fix.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ZodError } from 'zod';
import { AppError } from '../src/index.js';

/** The shape `get_attachment` answers with. */
interface FileOutput {
  id: string;
  content_type: string;
  content: { encoding: 'utf8' | 'base64'; data: string; truncated: boolean };
}

function isFile(output: Record<string, unknown>): output is Record<string, unknown> & FileOutput {
  const content = output.content as FileOutput['content'] | undefined;
  return typeof output.content_type === 'string' && typeof content?.data === 'string' && (content.encoding === 'base64' || content.encoding === 'utf8');
}

/**
 * A successful tool result. A file (get_attachment) is a text item with its metadata plus the file itself:
 * text inline, binary as an embedded resource, so hosts can show or pass it on without decoding JSON.
 */
export function toMcpResult(output: Record<string, unknown>): CallToolResult {
  if (isFile(output)) {
    const { content, ...metadata } = output;
    const file =
      content.encoding === 'utf8'
        ? { type: 'text' as const, text: content.data }
        : { type: 'resource' as const, resource: { uri: `agentpost://attachments/${encodeURIComponent(output.id)}`, mimeType: output.content_type, blob: content.data } };
    return { content: [{ type: 'text', text: JSON.stringify({ ...metadata, truncated: content.truncated }) }, file], structuredContent: output };
  }
  return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
}

/** What an agent reads when a call fails: `<code>: <message>`. */
export function errorText(error: unknown): string {
  if (error instanceof AppError) return `${error.code}: ${error.message}`;
  if (error instanceof ZodError) {
    return `invalid_request: ${error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')}`;
  }
  return 'internal: the operation failed unexpectedly; try again later.';
}

/** A failed tool result. */
export function toMcpError(error: unknown): CallToolResult {
  return { content: [{ type: 'text', text: errorText(error) }], isError: true };
}
