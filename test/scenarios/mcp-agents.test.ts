/**
 * An MCP client as the agent: over Streamable HTTP for one mailbox and over stdio for the other, the two
 * exchange mail and the reply lands in the same thread.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const root = join(import.meta.dirname, '..', '..');
type Page = { data: { id: string; subject?: string; thread_id: string }[] };

describe('MCP clients converse over HTTP and stdio', () => {
  let service: TestService;
  const alice = 'alice@mcp.agentpost.localhost';
  const bob = 'bob@mcp.agentpost.localhost';

  beforeAll(async () => {
    service = await startTestService();
    const principal = {
      applicationId: await service.core.accounts.applications.defaultApplicationId(),
      via: 'local' as const,
    };
    await service.core.accounts.domains.create(principal, { name: 'MCP', domain_address: 'mcp.agentpost.localhost' });
    for (const email of [alice, bob])
      await service.core.accounts.grants.create(principal, { provider: 'nylas', settings: { email } });
  });
  afterAll(async () => {
    await service.close();
  });

  it('sends over HTTP, replies over stdio, and reads one thread', async () => {
    const overHttp = new Client({ name: 'alice-agent', version: '1.0.0' });
    await overHttp.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp?grant_id=${alice}`), {
        requestInit: { headers: { authorization: `Bearer ${service.apiKey}` } },
      }),
    );
    const overStdio = new Client({ name: 'bob-agent', version: '1.0.0' });
    await overStdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(root, 'bin', 'agentpost.js'), 'mcp'],
        env: {
          PATH: process.env.PATH ?? '',
          AGENTPOST_URL: service.url,
          AGENTPOST_API_KEY: service.apiKey,
          AGENTPOST_GRANT_ID: bob,
          AGENTPOST_LOG_LEVEL: 'warn',
        },
        stderr: 'pipe',
      }),
    );
    try {
      for (const client of [overHttp, overStdio]) {
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        expect(names).toEqual(
          expect.arrayContaining(['send_message', 'get_thread', 'list_messages', 'send_rsvp', 'find_availability']),
        );
      }
      const sent = await overHttp.callTool({
        name: 'send_message',
        arguments: { to: [{ email: bob }], subject: 'Over MCP', body: 'Hello Bob' },
      });
      expect(sent.isError).toBeFalsy();

      const received = await eventually(async () => {
        const page = (
          await overStdio.callTool({ name: 'list_messages', arguments: { in: ['inbox'], subject: 'Over MCP' } })
        ).structuredContent as Page;
        return page.data[0];
      });
      const reply = await overStdio.callTool({
        name: 'send_message',
        // The message came from an agent (Auto-Submitted, issue 37): answering it is on purpose.
        arguments: {
          to: [{ email: alice }],
          body: 'Hello Alice',
          reply_to_message_id: received.id,
          allow_automated_reply: true,
        },
      });
      expect(reply.isError).toBeFalsy();

      const answer = await eventually(async () => {
        const page = (
          await overHttp.callTool({ name: 'list_messages', arguments: { in: ['inbox'], subject: 'Re: Over MCP' } })
        ).structuredContent as Page;
        return page.data[0];
      });
      const thread = (await overHttp.callTool({ name: 'get_thread', arguments: { thread_id: answer.thread_id } }))
        .structuredContent as { message_ids: string[] };
      expect(thread.message_ids).toHaveLength(2);
    } finally {
      await overHttp.close();
      await overStdio.close();
    }
  }, 60_000);
});
