/**
 * The access log (extension, not in Nylas; issue 36): who called what, through which face, with what outcome.
 * Administration, so HTTP only (no agent tool reads it).
 */
import { z } from 'zod';
import { AccessLogEntrySchema, ListAccessLogInputSchema } from '../schemas/access-log.js';
import { defineOperation } from './define-operation.js';

export const listAccessLog = defineOperation({
  name: 'list_access_log',
  title: 'Read the access log',
  description:
    'Lists the calls made to this application on every face (HTTP, MCP, AI SDK), newest first: key, face, MCP client and session, tool, operation, grant, object ids, outcome, client address and request id; never the content read or written. ' +
    'Filters: api_key_id, grant_id, operation, status, since and until (unix seconds). limit up to 200, then page_token = next_cursor. ' +
    'With Accept: application/x-ndjson, every matching entry as newline-delimited JSON (an export; limit is ignored).',
  input: ListAccessLogInputSchema,
  output: z.object({
    data: z.array(AccessLogEntrySchema).describe('Entries, newest first'),
    next_cursor: z.string().optional().describe('Pass as page_token for the next page'),
  }),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/access-log', envelope: 'list', export: true },
  tool: false,
  run: (core, input, { principal }) => core.accessLog.list(principal, input),
  runStream: async (core, input, { principal }) => core.accessLog.export(principal, input),
});
