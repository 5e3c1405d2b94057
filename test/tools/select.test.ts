/**
 * `select` over MCP: the selected objects still pass the tools' output schemas (id, grant_id and object are always
 * kept), and the same call over /v3 through the nylas SDK (which camel-cases keys) answers the same fields.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { unfencedClient, unfencedTools } from '../helpers/fence.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/index.js';
import { localExecutor } from '../../tools/executor.js';
import { createMcpServer } from '../../tools/mcp.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const MAILBOX = 'select@selectcheck.agentpost.localhost';

describe('select over MCP', () => {
  let service: TestService;
  let client: Client;
  let grantId: string;
  let messageId: string;
  let threadId: string;
  let principal: Principal;

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, MAILBOX);
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
    const reply = await sendRaw(
      service.smtpPort,
      'alice@example.com',
      [MAILBOX],
      `Subject: Selected\r\nFrom: alice@example.com\r\nTo: ${MAILBOX}\r\n\r\nHello there\r\n`,
    );
    expect(reply.code).toBe(250);
    const message = await eventually(async () => (await service.nylas.messages.list({ identifier: grantId })).data[0]);
    messageId = message.id;
    threadId = message.threadId!;
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    client = unfencedClient(new Client({ name: 'select-test', version: '1.0.0' }));
    await Promise.all([
      createMcpServer({ executor: localExecutor(service.core, principal) }).connect(serverTransport),
      client.connect(clientTransport),
    ]);
  });
  afterAll(async () => {
    await client?.close();
    await service?.close();
  });

  it('list_messages, get_message, list_threads and get_thread validate with select and keep the identity', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['list_messages', { grant_id: grantId, select: 'subject' }],
      ['get_message', { grant_id: grantId, message_id: messageId, select: 'subject,from' }],
      ['list_threads', { grant_id: grantId, select: 'subject' }],
      ['get_thread', { grant_id: grantId, thread_id: threadId, select: 'subject' }],
    ];
    for (const [name, args] of calls) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
      const content = result.structuredContent as { data?: Record<string, unknown>[] } & Record<string, unknown>;
      const object = content.data ? content.data[0]! : content;
      expect(Object.keys(object).sort(), name).toEqual(
        ['grant_id', 'id', 'object', ...(name === 'get_message' ? ['from'] : []), 'subject'].sort(),
      );
      expect(object.grant_id).toBe(grantId);
      expect(object.subject).toBe('Selected');
    }
  });

  it('refuses unknown fields on every face, naming them and listing the fields there are', async () => {
    const calls: [string, Record<string, unknown>, string][] = [
      [
        'list_messages',
        { grant_id: grantId, select: 'subject,sender' },
        'unknown message field sender; the fields are id, grant_id, object, thread_id, subject, from,',
      ],
      [
        'get_message',
        { grant_id: grantId, message_id: messageId, select: 'subjekt,from,sender' },
        'unknown message fields subjekt, sender; the fields are id,',
      ],
      [
        'list_threads',
        { grant_id: grantId, select: 'subject,body' },
        'unknown thread field body; the fields are id, grant_id, object, subject, snippet, participants, message_ids,',
      ],
      [
        'get_thread',
        { grant_id: grantId, thread_id: threadId, select: 'messages' },
        'unknown thread field messages; the fields are',
      ],
      ['list_drafts', { grant_id: grantId, select: 'headers' }, 'unknown draft field headers; the fields are'],
    ];
    const tools = unfencedTools(createAgentpostTools({ core: service.core, principal }));
    for (const [name, args, expected] of calls) {
      const overMcp = await client.callTool({ name, arguments: args });
      expect(overMcp.isError, name).toBe(true);
      expect(JSON.stringify(overMcp.content), name).toContain(expected);
      // The AI SDK validates with the same schema before execute; execute itself refuses too (the operation parses its input).
      await expect(tools[name]!.execute!(args, { toolCallId: name, messages: [] }), name).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining(`select: ${expected}`),
      });
    }
    const overHttp = await fetch(`${service.url}/v3/grants/${grantId}/messages?select=subject,sender`, {
      headers: { authorization: `Bearer ${service.apiKey}` },
    });
    expect(overHttp.status).toBe(400);
    const body = (await overHttp.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('select: unknown message field sender; the fields are id,');
    // Known fields still pass.
    expect(
      (await client.callTool({ name: 'list_messages', arguments: { grant_id: grantId, select: 'subject,from,spam' } }))
        .isError,
    ).toBeFalsy();
  });

  it('answers the same fields over /v3 through the nylas SDK', async () => {
    const listed = await service.nylas.messages.list({ identifier: grantId, queryParams: { select: 'subject' } });
    expect(listed.data[0]).toEqual({ id: messageId, grantId, object: 'message', subject: 'Selected' });
    const thread = await service.nylas.threads.find({
      identifier: grantId,
      threadId,
      queryParams: { select: 'subject' },
    });
    expect(thread.data).toEqual({ id: threadId, grantId, object: 'thread', subject: 'Selected' });
  });
});
