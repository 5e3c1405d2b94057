/**
 * Tool results sized for a model (issue 16): the tool manifest, a page of 50 realistic 10 KB messages, and one
 * long message, measured as an MCP client reads them. The sizes are printed so a change shows in the log.
 */
import { describe, expect, it } from 'vitest';
import { asSchema } from 'ai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { unfencedClient, unfencedTools } from '../helpers/fence.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer, type Executor } from '../../tools/mcp.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { RESULT_BUDGET, bodyAsText, renderForAgent, shapeForAgent } from '../../tools/compact.js';

/** A 10 KB HTML message as mail clients send it: a reply on top of quoted history, a signature, an attachment. */
function realisticMessage(index: number) {
  const paragraph = `<p>Thanks for the update on the Q${(index % 4) + 1} forecast. I went through the numbers with the team and we agree on most of it, with two questions about the hiring plan and the travel budget.</p>`;
  const quoted = `<div class="gmail_quote"><div>On Mon, 3 Mar 2025 at 10:00, Dana Lee &lt;dana@example.com&gt; wrote:</div><blockquote>${'<p>Here is the forecast for the next quarter, with the revenue by region and the costs by department.</p>'.repeat(80)}</blockquote></div>`;
  const body = `<html><head><style>p { margin: 0 }</style></head><body>${paragraph.repeat(6)}<p>Best,<br>Sam</p>${quoted}</body></html>`;
  return {
    id: `msg_${index}`,
    grant_id: 'grant_1',
    object: 'message',
    thread_id: `thread_${index % 20}`,
    subject: `Re: Q${(index % 4) + 1} forecast (${index})`,
    from: [{ name: 'Sam Ortiz', email: 'sam@example.com' }],
    to: [{ name: 'Dana Lee', email: 'dana@example.com' }],
    cc: [{ email: 'finance@example.com' }],
    reply_to: [],
    date: 1743292800 + index * 60,
    unread: index % 3 === 0,
    starred: index % 7 === 0,
    snippet:
      'Thanks for the update on the forecast. I went through the numbers with the team and we agree on most of it',
    body,
    folders: ['inbox'],
    attachments:
      index % 5 === 0
        ? [
            {
              id: `att_${index}`,
              grant_id: 'grant_1',
              filename: 'forecast.xlsx',
              content_type: 'application/vnd.ms-excel',
              size: 48213,
              is_inline: false,
            },
          ]
        : [],
    headers: [],
    metadata: {},
  };
}

const messages = Array.from({ length: 50 }, (_, index) => realisticMessage(index));
const executor: Executor = async (operation, input) => {
  if (operation.name === 'list_messages' && input.thread_id === 'thread_long')
    return { data: [...messages].reverse(), next_cursor: null };
  if (operation.name === 'list_messages' && input.thread_id)
    return { data: messages.filter((message) => message.thread_id === input.thread_id).reverse(), next_cursor: null };
  if (operation.name === 'list_messages')
    return { data: messages.slice(0, Number(input.limit ?? 50)), next_cursor: 'cursor_2' };
  if (operation.name === 'get_thread')
    return {
      id: input.thread_id,
      grant_id: 'grant_1',
      object: 'thread',
      subject: 'Q1 forecast',
      message_ids: [],
      draft_ids: [],
      participants: [],
      folders: ['inbox'],
    };
  if (operation.name === 'get_message') return { ...messages[0]!, body: messages[0]!.body.repeat(6) };
  return {};
};

async function connect() {
  const server = createMcpServer({ executor, grantId: 'grant_1' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = unfencedClient(new Client({ name: 'budgets', version: '1.0.0' }));
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return client;
}
const textOf = (result: Record<string, unknown>) =>
  (result.content as { type: string; text?: string }[]).map((item) => item.text ?? '').join('');

describe('tool results sized for a model', () => {
  it('keeps tools/list within 24,000 characters, and the AI SDK tool definitions no larger', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const size = JSON.stringify({ tools }).length;
    const unbound = createMcpServer({ executor, grantId: undefined });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const unboundClient = new Client({ name: 'budgets-unbound', version: '1.0.0' });
    await Promise.all([unbound.connect(serverTransport), unboundClient.connect(clientTransport)]);
    const unboundSize = JSON.stringify({ tools: (await unboundClient.listTools()).tools }).length;
    // What a model is given by the AI SDK: each tool's description and input JSON Schema.
    const aiTools = createAgentpostTools({ url: 'http://127.0.0.1:1', apiKey: 'unused', grantId: 'grant_1' });
    const definitions = await Promise.all(
      Object.entries(aiTools).map(async ([name, tool]) => ({
        name,
        description: tool.description,
        inputSchema: await asSchema(tool.inputSchema).jsonSchema,
      })),
    );
    const aiSize = JSON.stringify(definitions).length;
    console.log(
      `tools/list: ${tools.length} tools, ${size} characters bound to a grant, ${unboundSize} unbound; AI SDK definitions ${aiSize}`,
    );
    expect(size).toBeLessThanOrEqual(24_000);
    expect(aiSize).toBeLessThanOrEqual(size);
  });

  it('describes every parameter of every tool, over MCP and the AI SDK alike', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const undescribed = tools.flatMap((tool) =>
      Object.entries((tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>)
        .filter(([, schema]) => !schema.description?.trim())
        .map(([name]) => `${tool.name}.${name}`),
    );
    expect(undescribed).toEqual([]);
    const aiTools = createAgentpostTools({ url: 'http://127.0.0.1:1', apiKey: 'unused' });
    for (const [name, tool] of Object.entries(aiTools)) {
      const schema = (await asSchema(tool.inputSchema).jsonSchema) as {
        properties?: Record<string, { description?: string }>;
      };
      for (const [parameter, property] of Object.entries(schema.properties ?? {}))
        expect(property.description, `${name}.${parameter}`).toMatch(/\S/);
    }
  });

  it('lists 50 realistic 10 KB messages in at most 25,000 characters of text', async () => {
    const client = await connect();
    expect(JSON.stringify(messages[0]).length).toBeGreaterThan(10_000);
    const result = await client.callTool({ name: 'list_messages', arguments: { limit: 50 } });
    const text = textOf(result);
    const structured = JSON.stringify(result.structuredContent);
    console.log(
      `list_messages(limit=50): text ${text.length} characters, structuredContent ${structured.length}; the full page is ${JSON.stringify({ data: messages }).length}`,
    );
    expect(result.isError).toBeFalsy();
    expect(text.length).toBeLessThanOrEqual(25_000);
    expect(structured.length).toBeLessThanOrEqual(RESULT_BUDGET);
    // Compact items: who, what, when, flags and attachment names, never a body.
    const page = result.structuredContent as {
      data: Record<string, unknown>[];
      next_cursor?: string;
      truncated?: { hint: string };
    };
    expect(page.data[0]).toMatchObject({
      id: 'msg_0',
      thread_id: 'thread_0',
      subject: 'Re: Q1 forecast (0)',
      unread: true,
      starred: true,
      folders: ['inbox'],
    });
    expect(page.data[0]!.attachments).toEqual([
      { id: 'att_0', filename: 'forecast.xlsx', size: 48213, content_type: 'application/vnd.ms-excel' },
    ]);
    expect(page.data[0]).not.toHaveProperty('body');
    if (page.data.length < 50) expect(page.truncated?.hint).toContain('list_messages');
    // The text is a reading, not the JSON again (only a cut's continuation call is written as JSON).
    expect(text.replace(/\[cut: .*\]/g, '')).not.toContain('{"');
    expect(text).toContain('forecast.xlsx (47 KB)');
  });

  it('reads a message as text with the quoted history collapsed, HTML on request, within the budget', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'get_message', arguments: { message_id: 'msg_0' } });
    const message = result.structuredContent as { body_text: string; body?: string; quoted_lines_collapsed: number };
    expect(message.body).toBeUndefined();
    // Read by src/reading since issue 35: Markdown, the quoted history one line naming its author.
    expect(message.body_text).toMatch(/Best,\s+Sam/);
    expect(message.body_text).toContain('[quoted history');
    expect(message.quoted_lines_collapsed).toBeGreaterThan(10);
    expect(textOf(result).length).toBeLessThanOrEqual(RESULT_BUDGET);
    const withHtml = await client.callTool({
      name: 'get_message',
      arguments: { message_id: 'msg_0', include_html: true },
    });
    const html = withHtml.structuredContent as { body: string; html_truncated?: { hint: string } };
    expect(html.body).toContain('<p>');
    expect(html.html_truncated?.hint).toContain('/v3');
    expect(JSON.stringify(withHtml.structuredContent).length).toBeLessThanOrEqual(RESULT_BUDGET + 2_000);
  });

  it('cuts a page over the budget and says which call returns the rest', async () => {
    const big = {
      data: Array.from({ length: 200 }, (_, index) => ({ id: `event_${index}`, description: 'x'.repeat(400) })),
      next_cursor: 'next',
    };
    const page = shapeForAgent('list_contacts', big, {}) as {
      data: unknown[];
      truncated: { omitted: number; hint: string };
    };
    expect(JSON.stringify(page).length).toBeLessThanOrEqual(RESULT_BUDGET);
    expect(page.truncated.omitted).toBe(200 - page.data.length);
    expect(page.truncated.hint).toMatch(/call list_contacts again with limit: \d+/);
    expect(renderForAgent('list_contacts', page)).toContain('[cut: ');
  });

  it('gives the AI SDK tools the same compact items and budget', async () => {
    const tools = unfencedTools(
      createAgentpostTools({
        url: 'http://127.0.0.1:1',
        apiKey: 'unused',
        grantId: 'grant_1',
        fetch: async () => Response.json({ request_id: 'r', data: messages, next_cursor: 'cursor_2' }),
      }),
    );
    const page = (await tools.list_messages!.execute!({ limit: 50 }, { toolCallId: '1', messages: [] })) as {
      data: Record<string, unknown>[];
    };
    expect(JSON.stringify(page).length).toBeLessThanOrEqual(RESULT_BUDGET);
    expect(page.data[0]).not.toHaveProperty('body');
  });

  it('reads a thread with its messages, oldest first, as text with quoted history collapsed, within the budget', async () => {
    const client = await connect();
    const short = await client.callTool({ name: 'get_thread', arguments: { thread_id: 'thread_3' } });
    const thread = short.structuredContent as {
      id: string;
      messages: { id: string; body_text: string; quoted_lines_collapsed?: number; body?: string }[];
      messages_truncated?: unknown;
    };
    // thread_3 holds messages 3, 23 and 43 of the corpus.
    expect(thread.messages.map((message) => message.id)).toEqual(['msg_3', 'msg_23', 'msg_43']);
    for (const message of thread.messages) {
      expect(message.body_text).toContain('Thanks for the update');
      expect(message.body_text).not.toContain('Here is the forecast for the next quarter');
      expect(message.quoted_lines_collapsed).toBeGreaterThan(10);
      expect(message.body).toBeUndefined();
    }
    expect(thread.messages_truncated).toBeUndefined();
    expect(textOf(short)).toContain('Thanks for the update');

    // 50 messages do not all fit: the newest are kept, the older ones named, and the whole stays within the budget.
    const long = await client.callTool({ name: 'get_thread', arguments: { thread_id: 'thread_long' } });
    const size = JSON.stringify(long.structuredContent).length;
    console.log(
      `get_thread over 50 messages: ${size} characters of structured content, ${textOf(long).length} of text`,
    );
    expect(size).toBeLessThanOrEqual(RESULT_BUDGET);
    const cut = long.structuredContent as {
      messages: { id: string }[];
      messages_truncated: { omitted: number; hint: string };
    };
    expect(cut.messages.at(-1)?.id).toBe('msg_49');
    expect(cut.messages_truncated.omitted).toBe(50 - cut.messages.length);
    expect(cut.messages_truncated.hint).toContain('get_message');
    expect(textOf(long)).toContain('[cut:');

    // The AI SDK tool reads the same (against a service answering the two /v3 calls it makes).
    const inThread = messages.filter((message) => message.thread_id === 'thread_3').reverse();
    const fakeFetch = (async (url: string | URL | Request) => {
      const path = new URL(url instanceof Request ? url.url : url).pathname;
      if (path.endsWith('/threads/thread_3'))
        return Response.json({
          request_id: 'r',
          data: {
            id: 'thread_3',
            grant_id: 'grant_1',
            object: 'thread',
            subject: 'Q4 forecast',
            message_ids: [],
            draft_ids: [],
            participants: [],
            folders: [],
          },
        });
      if (path.endsWith('/messages')) return Response.json({ request_id: 'r', data: inThread, next_cursor: null });
      return Response.json({ request_id: 'r', error: { type: 'not_found_error', message: path } }, { status: 404 });
    }) as typeof fetch;
    const tools = unfencedTools(
      createAgentpostTools({
        url: 'http://127.0.0.1:1',
        apiKey: 'unused',
        grantId: 'grant_1',
        fetch: fakeFetch,
      }),
    );
    const viaAi = (await tools.get_thread!.execute!({ thread_id: 'thread_3' }, { toolCallId: '2', messages: [] })) as {
      messages: { id: string; body_text: string }[];
    };
    expect(viaAi.messages.map((message) => message.id)).toEqual(['msg_3', 'msg_23', 'msg_43']);
    expect(viaAi.messages[0]!.body_text).not.toContain('Here is the forecast for the next quarter');
  });

  it('collapses plain-text quoting too', () => {
    // Through src/reading since issue 35: the quoted lines become one line naming who wrote them.
    const { text, quoted_lines } = bodyAsText(
      '<div>Sounds good.<br>\nOn Tue, 4 Mar 2025, Dana wrote:<br>\n&gt; Shall we meet?<br>\n&gt; At ten?</div>',
    );
    expect(quoted_lines).toBeGreaterThan(0);
    expect(text).toContain('Sounds good.');
    expect(text).toMatch(/\[quoted history from Dana/);
    expect(text).not.toContain('Shall we meet');
  });
});
