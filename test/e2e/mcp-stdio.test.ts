import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startTestService, type TestService } from '../helpers/service.js';

const root = join(import.meta.dirname, '..', '..');

async function stdioClient(env: Record<string, string>) {
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(root, 'bin', 'agentpost.js'), 'mcp'],
    env: { PATH: process.env.PATH ?? '', AGENTPOST_LOG_LEVEL: 'warn', ...env },
    stderr: 'pipe',
  });
  await client.connect(transport);
  return client;
}

describe('agentpost mcp (stdio)', () => {
  let service: TestService;
  let grantId: string;
  beforeAll(async () => {
    service = await startTestService();
    const principal = {
      applicationId: await service.core.accounts.applications.defaultApplicationId(),
      via: 'local' as const,
    };
    await service.core.accounts.domains.create(principal, {
      name: 'Stdio',
      domain_address: 'stdio.agentpost.localhost',
    });
    grantId = (
      await service.core.accounts.grants.create(principal, {
        provider: 'nylas',
        settings: { email: 'stdio@stdio.agentpost.localhost' },
      })
    ).grant.id;
  });
  afterAll(async () => {
    await service.close();
  });

  it('calls a running service over /v3 when AGENTPOST_URL is set, bound to one grant', async () => {
    const client = await stdioClient({
      AGENTPOST_URL: service.url,
      AGENTPOST_API_KEY: service.apiKey,
      AGENTPOST_GRANT_ID: grantId,
    });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain('list_folders');
      const result = await client.callTool({ name: 'list_folders', arguments: {} });
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { data: { id: string }[] }).data[0]?.id).toBe('inbox');
      const failed = await client.callTool({
        name: 'get_event',
        arguments: { event_id: 'missing', calendar_id: 'primary' },
      });
      expect(failed.isError).toBe(true);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('runs embedded on the local database when no URL is given', async () => {
    const client = await stdioClient({
      AGENTPOST_DATABASE_URL: service.config.databaseUrl,
      AGENTPOST_API_KEY: service.apiKey,
    });
    try {
      const result = await client.callTool({
        name: 'list_folders',
        arguments: { grant_id: 'stdio@stdio.agentpost.localhost' },
      });
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { data: { grant_id: string }[] }).data[0]?.grant_id).toBe(grantId);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('offers a read-only key scoped to one grant no writing tool, embedded and remote, and refuses what it may not do', async () => {
    const made = await fetch(`${service.url}/v3/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'stdio reader', scope: { grant_ids: [grantId] }, permissions: ['mail.read'] }),
    });
    const { key } = ((await made.json()) as { data: { key: string } }).data;
    for (const env of [
      { AGENTPOST_URL: service.url, AGENTPOST_API_KEY: key },
      { AGENTPOST_DATABASE_URL: service.config.databaseUrl, AGENTPOST_API_KEY: key },
    ]) {
      const client = await stdioClient(env);
      try {
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        expect(names).toContain('list_messages');
        for (const writer of ['send_message', 'create_draft', 'update_message', 'create_event', 'list_events'])
          expect(names, env.AGENTPOST_URL ? 'remote' : 'embedded').not.toContain(writer);
        const read = await client.callTool({ name: 'list_folders', arguments: { grant_id: grantId } });
        expect(read.isError).toBeFalsy();
        // A crafted call of a tool it was not offered is refused.
        const crafted = await client.callTool({
          name: 'send_message',
          arguments: { grant_id: grantId, to: [{ email: 'someone@example.com' }], body: 'hi' },
        });
        expect(crafted.isError).toBe(true);
      } finally {
        await client.close();
      }
    }
  }, 60_000);
});
