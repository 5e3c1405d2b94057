/**
 * An MCP client session over stdio, as an agent host runs it: spawns `agentpost mcp` bound to one mailbox,
 * lists the tools, sends a message to a second mailbox and reads the thread back.
 *
 *   npx tsx examples/mcp-stdio-client.ts
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createMailboxes, exampleService, waitFor } from './support/service.js';

const service = await exampleService();
const clients: Client[] = [];
try {
  const [writer, reader] = await createMailboxes(service, ['writer', 'reader']);
  const connect = async (grantId: string) => {
    const client = new Client({ name: 'example-host', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(import.meta.dirname, '..', 'bin', 'agentpost.js'), 'mcp'],
        env: {
          PATH: process.env.PATH ?? '',
          AGENTPOST_URL: service.apiUri,
          AGENTPOST_API_KEY: service.apiKey,
          AGENTPOST_GRANT_ID: grantId,
          AGENTPOST_LOG_LEVEL: 'warn',
        },
      }),
    );
    clients.push(client);
    return client;
  };
  const writerSession = await connect(writer!);
  const readerSession = await connect(reader!);

  const { tools } = await writerSession.listTools();
  console.log(`${tools.length} tools: ${tools.map((tool) => tool.name).join(', ')}`);
  assert.ok(tools.some((tool) => tool.name === 'send_message'));

  const sent = await writerSession.callTool({
    name: 'send_message',
    arguments: { to: [{ email: reader }], subject: 'Hello over MCP', body: '<p>Hi!</p>' },
  });
  assert.ok(!sent.isError, JSON.stringify(sent.content));

  const received = await waitFor(async () => {
    const page = (
      await readerSession.callTool({ name: 'list_messages', arguments: { in: ['inbox'], subject: 'Hello over MCP' } })
    ).structuredContent as { data: { id: string; thread_id: string }[] };
    return page.data[0];
  });
  await readerSession.callTool({
    name: 'send_message',
    // The writer is an agent too, so its message carries Auto-Submitted: answering it is on purpose.
    arguments: {
      to: [{ email: writer }],
      body: 'Hi back',
      reply_to_message_id: received.id,
      allow_automated_reply: true,
    },
  });
  const thread = await waitFor(async () => {
    const result = (await readerSession.callTool({ name: 'get_thread', arguments: { thread_id: received.thread_id } }))
      .structuredContent as { message_ids: string[] };
    return result.message_ids.length === 2 ? result : undefined;
  });
  const resource = await readerSession.readResource({
    uri: `agentpost://grants/${encodeURIComponent(reader!)}/threads/${received.thread_id}`,
  });
  assert.equal(
    (JSON.parse((resource.contents[0] as { text: string }).text) as { messages: unknown[] }).messages.length,
    2,
  );
  console.log(`ok: thread ${received.thread_id} has ${thread.message_ids.length} messages`);
} finally {
  for (const client of clients) await client.close();
  await service.close();
}
