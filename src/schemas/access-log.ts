/**
 * The access log (extension, not in Nylas; issue 36): one entry per operation call on every face and per refused
 * authentication, read by the application through `GET /v3/access-log`. An entry names what a call touched by its
 * ids, never by its content.
 */
import { z } from 'zod';
import { IdSchema, LimitSchema, PageTokenSchema, UnixSecondsSchema } from './common.js';

/** The faces a call comes through. */
export const ACCESS_FACES = ['http', 'mcp', 'ai-sdk', 'smtp', 'dashboard', 'review-link', 'worker'] as const;

export const AccessLogEntrySchema = z
  .object({
    id: z.string().describe('The entry id'),
    object: z.literal('access_log_entry').describe('Always access_log_entry'),
    time: UnixSecondsSchema.describe('When the call ended'),
    api_key_id: z.string().nullable().describe('The key the caller used; null when it used none (or none was valid)'),
    api_key_name: z.string().nullable().describe('That key’s name, as it was at the time of the call'),
    principal: z
      .enum(['api_key', 'service_account', 'local'])
      .nullable()
      .describe('How the caller proved itself; null for a refused authentication'),
    face: z
      .enum(ACCESS_FACES)
      .describe(
        'The face the call came through (review-link: a reviewer\u2019s signed link; worker: the service\u2019s own decision, as an approval expiring). Over /v3 a client may say it is an MCP or AI SDK host (X-Agentpost-Face): descriptive, not proven',
      ),
    client: z
      .object({
        name: z.string().nullable().describe('The MCP client’s name (initialize clientInfo.name)'),
        version: z.string().nullable().describe('The MCP client’s version'),
        session: z.string().nullable().describe('The MCP session (Streamable HTTP Mcp-Session-Id)'),
      })
      .nullable()
      .describe('The agent host behind an MCP call; null on other faces'),
    tool: z.string().nullable().describe('The MCP or AI SDK tool called; null over plain HTTP'),
    operation: z.string().describe('The operation (the tool name, e.g. get_message); authenticate for a refused key'),
    grant_id: z.string().nullable().describe('The grant the call named (id or address, as given)'),
    object_ids: z
      .record(z.string(), z.string())
      .describe('The ids the call named (message_id, draft_id, …) and created_id for an object it made'),
    status: z.number().int().describe('The outcome as an HTTP status (200, 404, 401, …), on every face'),
    error_type: z.string().nullable().describe('The Nylas error type of a failure; null on success'),
    address: z.string().nullable().describe('The client’s network address, when the face knows it'),
    request_id: z.string().nullable().describe('The request id (x-request-id of an HTTP call)'),
  })
  .meta({ id: 'AccessLogEntry' });
export type AccessLogEntry = z.infer<typeof AccessLogEntrySchema>;

export const ListAccessLogInputSchema = z
  .object({
    limit: LimitSchema,
    page_token: PageTokenSchema,
    api_key_id: IdSchema.optional().describe('Only calls made with this key'),
    grant_id: z.string().min(1).max(320).optional().describe('Only calls that named this grant (as they named it)'),
    operation: z.string().min(1).max(100).optional().describe('Only calls of this operation (e.g. send_message)'),
    status: z.number().int().min(100).max(599).optional().describe('Only calls with this outcome (e.g. 403)'),
    since: UnixSecondsSchema.optional().describe('Only calls at or after this time'),
    until: UnixSecondsSchema.optional().describe('Only calls before this time'),
  })
  .meta({ id: 'ListAccessLogInput' });
export type ListAccessLogInput = z.infer<typeof ListAccessLogInputSchema>;
