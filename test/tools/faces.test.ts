import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { unfencedClient, unfencedTools } from '../helpers/fence.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpServer } from '../../tools/mcp.js';
import { RESOURCES_PAGE_SIZE } from '../../tools/resources.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { localExecutor, remoteExecutor } from '../../tools/executor.js';
import { startTestService, type TestService } from '../helpers/service.js';
import type { Principal } from '../../src/index.js';

async function connect(server: ReturnType<typeof createMcpServer>) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = unfencedClient(new Client({ name: 'test', version: '1.0.0' }));
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return client;
}

describe('MCP and AI SDK tools from the one registry', () => {
  let service: TestService;
  let principal: Principal;
  let grantId: string;

  beforeAll(async () => {
    service = await startTestService();
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
    await service.core.accounts.domains.create(principal, {
      name: 'Faces',
      domain_address: 'faces.agentpost.localhost',
    });
    const { grant } = await service.core.accounts.grants.create(principal, {
      provider: 'nylas',
      settings: { email: 'faces@faces.agentpost.localhost' },
    });
    grantId = grant.id;
  });
  afterAll(async () => {
    await service.close();
  });

  it('lists tools with annotations and runs one, returning structured content', async () => {
    const client = await connect(createMcpServer({ executor: localExecutor(service.core, principal) }));
    const { tools } = await client.listTools();
    const listFolders = tools.find((tool) => tool.name === 'list_folders');
    expect(listFolders?.annotations?.readOnlyHint).toBe(true);
    expect(listFolders?.inputSchema.required).toContain('grant_id');
    expect(tools.some((tool) => tool.name === 'create_agent_account')).toBe(false);

    const result = await client.callTool({ name: 'list_folders', arguments: { grant_id: grantId } });
    expect(result.isError).toBeFalsy();
    const content = result.structuredContent as { data: { name: string }[] };
    expect(content.data.map((folder) => folder.name).slice(0, 2)).toEqual(['inbox', 'sent']);
  });

  it('binds to one grant: grant_id leaves the schema and is filled in', async () => {
    const client = await connect(createMcpServer({ executor: localExecutor(service.core, principal), grantId }));
    const { tools } = await client.listTools();
    const createFolder = tools.find((tool) => tool.name === 'create_folder');
    expect(Object.keys(createFolder?.inputSchema.properties ?? {})).not.toContain('grant_id');
    const result = await client.callTool({ name: 'create_folder', arguments: { name: 'Receipts' } });
    expect((result.structuredContent as { name: string }).name).toBe('Receipts');
  });

  it('turns errors into isError results that say what to fix', async () => {
    const client = await connect(createMcpServer({ executor: localExecutor(service.core, principal) }));
    const missing = await client.callTool({ name: 'list_folders', arguments: { grant_id: 'no-such-grant' } });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.content)).toContain('not_found');
    const duplicate = await client.callTool({
      name: 'create_folder',
      arguments: { grant_id: grantId, name: 'Receipts' },
    });
    expect(duplicate.isError).toBe(true);
    expect(JSON.stringify(duplicate.content)).toContain('already exists');
  });

  it('gives the same result over HTTP (remote executor), MCP and the AI SDK', async () => {
    const remote = remoteExecutor({ url: service.url, apiKey: service.apiKey });
    const tools = unfencedTools(createAgentpostTools({ core: service.core, principal, grantId }));
    const client = await connect(createMcpServer({ executor: localExecutor(service.core, principal) }));

    const overHttp = await remote(
      (await import('../../src/index.js')).operations.find((operation) => operation.name === 'list_folders')!,
      { grant_id: grantId },
    );
    const overMcp = (await client.callTool({ name: 'list_folders', arguments: { grant_id: grantId } }))
      .structuredContent;
    const overAi = await tools.list_folders!.execute!({}, { toolCallId: 'call-1', messages: [] });
    expect(overMcp).toEqual(overHttp);
    expect(overAi).toEqual(overHttp);
  });

  it('serves MCP over Streamable HTTP at /mcp with Bearer authentication', async () => {
    const client = unfencedClient(new Client({ name: 'http-test', version: '1.0.0' }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp?grant_id=${grantId}`), {
        requestInit: { headers: { authorization: `Bearer ${service.apiKey}` } },
      }),
    );
    const result = await client.callTool({ name: 'list_folders', arguments: {} });
    expect((result.structuredContent as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(6);
    await client.close();

    const unauthorized = await fetch(`${service.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(unauthorized.status).toBe(401);
  });

  it('publishes an OpenAPI document built from the same operations', async () => {
    const response = await fetch(`${service.url}/v3/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    expect(document.paths['/v3/grants/{grant_id}/folders']?.get?.operationId).toBe('list_folders');
    expect(document.paths['/v3/connect/custom']?.post?.operationId).toBe('create_agent_account');
  });

  it('exposes threads and messages as MCP resources, a thread with all its messages oldest first', async () => {
    const first = [
      'From: Pat <pat@example.org>',
      'To: faces@faces.agentpost.localhost',
      'Subject: Lunch?',
      'Message-ID: <lunch-1@example.org>',
      'Date: Mon, 02 Mar 2026 10:00:00 +0000',
      '',
      'Lunch on Friday?',
      '',
    ].join('\r\n');
    const second = [
      'From: Pat <pat@example.org>',
      'To: faces@faces.agentpost.localhost',
      'Subject: Re: Lunch?',
      'Message-ID: <lunch-2@example.org>',
      'In-Reply-To: <lunch-1@example.org>',
      'References: <lunch-1@example.org>',
      'Date: Mon, 02 Mar 2026 11:00:00 +0000',
      '',
      'Or Saturday.',
      '',
    ].join('\r\n');
    for (const raw of [first, second]) {
      await service.core.mail.inbound.deliverInbound({
        rawMime: Buffer.from(raw),
        envelope: { mailFrom: 'pat@example.org', rcptTo: ['faces@faces.agentpost.localhost'] },
      });
    }
    const client = await connect(createMcpServer({ executor: localExecutor(service.core, principal), grantId }));
    const { resources } = await client.listResources();
    const lunch = resources.find((resource) => resource.name === 'Lunch?');
    expect(lunch?.uri).toMatch(/^agentpost:\/\/grants\/.+\/threads\//);
    const read = await client.readResource({ uri: lunch!.uri });
    const body = JSON.parse((read.contents[0] as { text: string }).text) as {
      thread: { id: string };
      messages: { subject: string; id: string }[];
    };
    expect(body.messages.map((message) => message.subject)).toEqual(['Lunch?', 'Re: Lunch?']);

    const message = await client.readResource({
      uri: `agentpost://grants/${grantId}/messages/${body.messages[1]!.id}`,
    });
    expect(JSON.parse((message.contents[0] as { text: string }).text).thread_id).toBe(body.thread.id);
  });

  it('pages resources/list with nextCursor, every thread once', async () => {
    const email = 'pages@faces.agentpost.localhost';
    const created = await service.core.accounts.grants.create(principal, { provider: 'nylas', settings: { email } });
    for (let index = 0; index < RESOURCES_PAGE_SIZE + 5; index++) {
      const raw = [
        `From: Sam <sam@example.org>`,
        `To: ${email}`,
        `Subject: Topic ${index}`,
        `Message-ID: <topic-${index}@example.org>`,
        '',
        'Hello',
        '',
      ].join('\r\n');
      await service.core.mail.inbound.deliverInbound({
        rawMime: Buffer.from(raw),
        envelope: { mailFrom: 'sam@example.org', rcptTo: [email] },
      });
    }
    const client = await connect(
      createMcpServer({ executor: localExecutor(service.core, principal), grantId: created.grant.id }),
    );
    const first = await client.listResources();
    expect(first.resources).toHaveLength(RESOURCES_PAGE_SIZE);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listResources({ cursor: first.nextCursor! });
    expect(second.resources).toHaveLength(5);
    expect(second.nextCursor).toBeUndefined();
    const names = [...first.resources, ...second.resources].map((resource) => resource.name).sort();
    expect(names).toEqual(Array.from({ length: RESOURCES_PAGE_SIZE + 5 }, (_, index) => `Topic ${index}`).sort());
  });

  it('reads attachments: text inline, binary as an embedded resource with the exact bytes', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10, 0x80]);
    const raw = [
      'From: Pat <pat@example.org>',
      'To: faces@faces.agentpost.localhost',
      'Subject: Files',
      'Message-ID: <files-1@example.org>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Two files.',
      '--b1',
      'Content-Type: text/csv; name="totals.csv"',
      'Content-Disposition: attachment; filename="totals.csv"',
      '',
      'item,total',
      'coffee,3',
      '--b1',
      'Content-Type: image/png; name="dot.png"',
      'Content-Disposition: attachment; filename="dot.png"',
      'Content-Transfer-Encoding: base64',
      '',
      png.toString('base64'),
      '--b1--',
      '',
    ].join('\r\n');
    const delivered = await service.core.mail.inbound.deliverInbound({
      rawMime: Buffer.from(raw),
      envelope: { mailFrom: 'pat@example.org', rcptTo: ['faces@faces.agentpost.localhost'] },
    });
    const messageId = delivered.deliveries[0]!.messageId;
    const client = await connect(createMcpServer({ executor: localExecutor(service.core, principal), grantId }));
    const message = (await client.callTool({ name: 'get_message', arguments: { message_id: messageId } }))
      .structuredContent as { attachments: { id: string; filename: string }[] };
    const csv = message.attachments.find((attachment) => attachment.filename === 'totals.csv')!;
    const image = message.attachments.find((attachment) => attachment.filename === 'dot.png')!;

    const text = await client.callTool({
      name: 'get_attachment',
      arguments: { attachment_id: csv.id, message_id: messageId },
    });
    expect((text.content as { type: string; text?: string }[])[1]).toEqual({
      type: 'text',
      text: 'item,total\r\ncoffee,3',
    });

    const binary = await client.callTool({
      name: 'get_attachment',
      arguments: { attachment_id: image.id, message_id: messageId },
    });
    const resource = (binary.content as { type: string; resource?: { blob: string; mimeType: string } }[])[1]!;
    expect(resource.type).toBe('resource');
    expect(resource.resource?.mimeType).toBe('image/png');
    expect(Buffer.from(resource.resource!.blob, 'base64')).toEqual(png);

    const capped = await client.callTool({
      name: 'get_attachment',
      arguments: { attachment_id: image.id, message_id: messageId, max_bytes: 4 },
    });
    expect((capped.structuredContent as { content: { truncated: boolean; data: string } }).content).toEqual({
      encoding: 'base64',
      data: png.subarray(0, 4).toString('base64'),
      truncated: true,
    });
  });
});
