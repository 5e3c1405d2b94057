/**
 * The access log (issue 36): every operation call on every face, with its outcome, read through
 * `GET /v3/access-log` (filters, cursor paging, the NDJSON export). Through the nylas SDK, raw fetch, the MCP client
 * SDK over Streamable HTTP and the AI SDK tools, against the real service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import type { Principal } from '../../src/index.js';

interface Entry {
  id: string;
  time: number;
  api_key_id: string | null;
  api_key_name: string | null;
  principal: string | null;
  face: string;
  client: { name: string | null; version: string | null; session: string | null } | null;
  tool: string | null;
  operation: string;
  grant_id: string | null;
  object_ids: Record<string, string>;
  status: number;
  error_type: string | null;
  address: string | null;
  request_id: string | null;
}

describe('access log', () => {
  let service: TestService;
  let principal: Principal;
  let grantId: string;
  let keyId: string;
  const auth = () => ({ authorization: `Bearer ${service.apiKey}` });
  const log = async (query = ''): Promise<{ data: Entry[]; next_cursor?: string }> => {
    const response = await fetch(`${service.url}/v3/access-log${query}`, { headers: auth() });
    expect(response.status).toBe(200);
    return (await response.json()) as { data: Entry[]; next_cursor?: string };
  };

  beforeAll(async () => {
    service = await startTestService();
    principal = await service.core.accounts.applications.authenticateApiKey(service.apiKey);
    keyId = principal.key!.id;
    await service.core.accounts.domains.create(principal, { name: 'Log', domain_address: 'log.agentpost.localhost' });
    const { grant } = await service.core.accounts.grants.create(principal, {
      provider: 'nylas',
      settings: { email: 'log@log.agentpost.localhost' },
    });
    grantId = grant.id;
  });
  afterAll(async () => {
    await service.close();
  });

  it('records HTTP calls with their key, face and outcome: 200, 404 and a 401 of a revoked key', async () => {
    await service.nylas.folders.list({ identifier: grantId });
    const missing = await fetch(`${service.url}/v3/grants/${grantId}/messages/nope`, { headers: auth() });
    expect(missing.status).toBe(404);
    const missingId = missing.headers.get('x-request-id');
    const created = await service.core.accounts.applications.createKey(principal.applicationId, 'revoked later');
    await service.core.accounts.applications.revokeKey(principal.applicationId, created.id);
    const refused = await fetch(`${service.url}/v3/grants/${grantId}/folders`, {
      headers: { authorization: `Bearer ${created.apiKey}` },
    });
    expect(refused.status).toBe(401);

    const { data } = await log();
    const folders = data.find((entry) => entry.operation === 'list_folders')!;
    expect(folders).toMatchObject({
      face: 'http',
      api_key_id: keyId,
      principal: 'api_key',
      grant_id: grantId,
      status: 200,
      error_type: null,
      tool: null,
      client: null,
    });
    expect(folders.address).toBe('127.0.0.1');
    const notFound = data.find((entry) => entry.operation === 'get_message')!;
    expect(notFound).toMatchObject({
      status: 404,
      error_type: 'not_found_error',
      object_ids: { message_id: 'nope' },
      request_id: missingId,
    });
    const unauthorized = data.find((entry) => entry.operation === 'authenticate')!;
    expect(unauthorized).toMatchObject({
      status: 401,
      face: 'http',
      api_key_id: created.id,
      api_key_name: 'revoked later',
      principal: null,
    });
  });
});
