/**
 * @module tools/results
 * The one place MCP maps results and errors: output objects become `structuredContent` plus JSON text;
 * AppError and zod errors become `isError` results whose text tells the agent what to fix.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ZodError } from 'zod';
import { AppError } from '../src/index.js';

/** A successful tool result. */
export function toMcpResult(output: Record<string, unknown>): CallToolResult {
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
