/**
 * Tool results sized for a model (issue 16): the tool manifest, a page of 50 realistic 10 KB messages, and one
 * long message, measured as an MCP client reads them. The sizes are printed so a change shows in the log.
 */
import { describe, expect, it } from 'vitest';
import { asSchema } from 'ai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { unfencedClient, unfencedTools } from '../helpers/fence.js';
import { unfence } from '../../examples/support/fence.js';
import { countTokens } from '../../src/tokens/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer, type Executor } from '../../tools/mcp.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import {
  RESULT_BUDGET,
  bodyAsText,
  DEFAULT_MAX_TOKENS,
  operationNamed,
  readForAgent,
  renderForAgent,
  shapeForAgent,
} from '../../tools/compact.js';
import { fenceFields, newFence, type RandomBytes } from '../../tools/fence.js';
import { shapedMcpResult } from '../../tools/results.js';
import { SNIPPET_MINIMUM } from '../../tools/compact-items.js';

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

/** A thread as /v3 answers it: three participants, its message ids, and its latest message whole. */
function realisticThread(index: number) {
  const latest = realisticMessage(index);
  return {
    id: `thread_${index}`,
    grant_id: 'grant_1',
    object: 'thread',
    subject: latest.subject,
    participants: [
      { name: 'Sam Ortiz', email: 'sam@example.com' },
      { name: 'Dana Lee', email: 'dana@example.com' },
      { email: 'finance@example.com' },
    ],
    snippet: latest.snippet,
    message_ids: Array.from({ length: 1 + (index % 6) }, (_, message) => `msg_${index}_${message}`),
    draft_ids: [],
    earliest_message_date: latest.date - 86_400,
    latest_message_received_date: latest.date,
    unread: latest.unread,
    starred: latest.starred,
    has_attachments: latest.attachments.length > 0,
    folders: ['inbox'],
    latest_draft_or_message: latest,
  };
}
const threads = Array.from({ length: 50 }, (_, index) => realisticThread(index));
/** A long message of its own words (nothing quoted to collapse): 300 paragraphs, about 14,000 tokens. */
const longMessage = {
  ...realisticMessage(1),
  id: 'msg_long',
  body: `<html><body>${Array.from({ length: 300 }, (_, index) => `<p>Item ${index}: the vendor review found that the shipment of order ${1000 + index} arrived two days late, and asks for a new delivery date.</p>`).join('')}</body></html>`,
};
/** The limits the list operations were asked with (a page that does not fit is asked again with the limit that does). */
const askedLimits: number[] = [];
const executor: Executor = async (operation, input) => {
  if (operation.name === 'list_messages' && input.thread_id === 'thread_long')
    return { data: [...messages].reverse(), next_cursor: null };
  if (operation.name === 'list_messages' && input.thread_id)
    return { data: messages.filter((message) => message.thread_id === input.thread_id).reverse(), next_cursor: null };
  if (operation.name === 'list_messages') {
    askedLimits.push(Number(input.limit ?? 50));
    return { data: messages.slice(0, Number(input.limit ?? 50)), next_cursor: 'cursor_2' };
  }
  if (operation.name === 'list_threads')
    return { data: threads.slice(0, Number(input.limit ?? 50)), next_cursor: 'cursor_2' };
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
  if (operation.name === 'get_message' && input.message_id === 'msg_long') return longMessage;
  if (operation.name === 'get_message') return { ...messages[0]!, body: messages[0]!.body.repeat(6) };
  return {};
};

/** A client as a host has it: results read with their fence, which counts in their sizes. */
async function connectFenced(random?: RandomBytes) {
  const server = createMcpServer({ executor, grantId: 'grant_1', ...(random ? { random } : {}) });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'budgets', version: '1.0.0' });
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return client;
}
const connect = async () => unfencedClient(await connectFenced());

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

  it('lists all 50 of 50 realistic 10 KB messages at the default budget: at most 10,000 characters of text and 15,000 of structured content, fence included', async () => {
    const client = await connectFenced();
    expect(JSON.stringify(messages[0]).length).toBeGreaterThan(10_000);
    const result = await client.callTool({ name: 'list_messages', arguments: { limit: 50 } });
    const text = textOf(result);
    const structured = JSON.stringify(result.structuredContent);
    const snippetOf = (item: unknown) => ((item as { snippet?: string }).snippet ?? '').length;
    console.log(
      `list_messages(limit=50): ${(result.structuredContent as { data: unknown[] }).data.length} items, snippets of ${snippetOf(unfence((result.structuredContent as { data: unknown[] }).data[1]))} characters; text ${text.length} characters, structuredContent ${structured.length} (${await countTokens(structured)} tokens with its fence); the full page is ${JSON.stringify({ data: messages }).length}`,
    );
    expect(result.isError).toBeFalsy();
    expect(text.length).toBeLessThanOrEqual(10_000);
    expect(structured.length).toBeLessThanOrEqual(15_000);
    // The fence is in what was measured: every subject and snippet is fenced, the text's items in one block.
    expect(structured).toMatch(/"subject":"‹([0-9]{20})›Re: Q1 forecast \(0\)‹\/\1›"/);
    expect(text).toMatch(/^Mail text is between ‹[0-9]{20}›/);
    const page = unfence(result.structuredContent) as {
      data: Record<string, unknown>[];
      next_cursor?: string;
      truncated?: unknown;
    };
    // All 50, the page's own cursor, nothing cut.
    expect(page.data.map((item) => item.id)).toEqual(messages.map((message) => message.id));
    expect(page.next_cursor).toBe('cursor_2');
    expect(page.truncated).toBeUndefined();
    // Compact items: who, what, when, the flags that are set and the attachments, never a body; the snippet
    // shortened to fit the page (to 20 characters at least; how far depends on the random fence it is measured with).
    expect(page.data[0]).toEqual({
      id: 'msg_0',
      thread_id: 'thread_0',
      date: 1743292800,
      from: 'sam@example.com',
      subject: 'Re: Q1 forecast (0)',
      snippet: expect.stringMatching(/^Thanks for the upda.*…$/),
      unread: true,
      starred: true,
      attachments: [{ id: 'att_0', filename: 'forecast.xlsx', size: 48213 }],
    });
    expect(page.data[1]).not.toHaveProperty('unread');
    expect((page.data[0]!.snippet as string).length).toBeGreaterThanOrEqual(SNIPPET_MINIMUM);
    // The text is a reading, not the JSON again.
    expect(text).not.toContain('{"');
    expect(text).toContain('forecast.xlsx (47 KB)');
    expect(text).toContain('50 item(s); more with page_token: "cursor_2"');

    // The AI SDK tools answer the same 50 items within the same size, fence included.
    const tools = createAgentpostTools({
      url: 'http://127.0.0.1:1',
      apiKey: 'unused',
      grantId: 'grant_1',
      fetch: async () => Response.json({ request_id: 'r', data: messages, next_cursor: 'cursor_2' }),
    });
    const viaAi = (await tools.list_messages!.execute!({ limit: 50 }, { toolCallId: '1', messages: [] })) as {
      data: { id: string; subject: string }[];
    };
    console.log(`list_messages(limit=50) via the AI SDK: ${JSON.stringify(viaAi).length} characters`);
    expect(viaAi.data).toHaveLength(50);
    expect(viaAi.data[0]!.subject).toMatch(/^‹([0-9]{20})›Re: Q1 forecast \(0\)‹\/\1›$/);
    expect(JSON.stringify(viaAi).length).toBeLessThanOrEqual(15_000);
    expect(unfence(viaAi)).toEqual(page);
  });

  it('lists all 50 of 50 threads at the default budget within the same sizes, over MCP and the AI SDK', async () => {
    const client = await connectFenced();
    const result = await client.callTool({ name: 'list_threads', arguments: { limit: 50 } });
    const text = textOf(result);
    const structured = JSON.stringify(result.structuredContent);
    const snippetOf = (item: unknown) => ((item as { snippet?: string }).snippet ?? '').length;
    console.log(
      `list_threads(limit=50): ${(result.structuredContent as { data: unknown[] }).data.length} items, snippets of ${snippetOf(unfence((result.structuredContent as { data: unknown[] }).data[1]))} characters; text ${text.length} characters, structuredContent ${structured.length} (${await countTokens(structured)} tokens with its fence); the full page is ${JSON.stringify({ data: threads }).length}`,
    );
    expect(result.isError).toBeFalsy();
    expect(text.length).toBeLessThanOrEqual(10_000);
    expect(structured.length).toBeLessThanOrEqual(15_000);
    const page = unfence(result.structuredContent) as { data: Record<string, unknown>[]; next_cursor?: string };
    expect(page.data.map((item) => item.id)).toEqual(threads.map((thread) => thread.id));
    expect(page.next_cursor).toBe('cursor_2');
    expect(page.data[0]).toEqual({
      id: 'thread_0',
      date: 1743292800,
      participants: 'sam@example.com, dana@example.com, finance@example.com',
      subject: 'Re: Q1 forecast (0)',
      snippet: expect.stringMatching(/^Thanks for the upda/),
      message_count: 1,
      unread: true,
      starred: true,
      has_attachments: true,
    });
    expect(text).toContain('- thread_5 · 2025-03-30 00:05Z · 6 messages · sam@example.com, dana@example.com');

    const tools = createAgentpostTools({
      url: 'http://127.0.0.1:1',
      apiKey: 'unused',
      grantId: 'grant_1',
      fetch: async () => Response.json({ request_id: 'r', data: threads, next_cursor: 'cursor_2' }),
    });
    const viaAi = await tools.list_threads!.execute!({ limit: 50 }, { toolCallId: '1', messages: [] });
    expect(JSON.stringify(viaAi).length).toBeLessThanOrEqual(15_000);
    expect(unfence(viaAi)).toEqual(page);
  });

  it('still ends a page early, with the cursor after its last item, when the items asked for do not fit', async () => {
    const client = await connect();
    for (const args of [
      { limit: 50, max_tokens: 1_000 },
      { limit: 50, select: 'subject,body' },
    ]) {
      askedLimits.length = 0;
      const result = await client.callTool({ name: 'list_messages', arguments: args });
      const page = result.structuredContent as {
        data: { id: string }[];
        next_cursor?: string;
        truncated: { omitted: number; hint: string; call: { tool: string; arguments: Record<string, unknown> } };
      };
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(page.data.length).toBeGreaterThan(0);
      expect(page.data.length).toBeLessThan(50);
      // Asked again with the limit that fits (the page kept is that answer, whatever larger limit was tried after),
      // so the page's cursor is the one after its last item.
      expect(askedLimits).toContain(page.data.length);
      expect(page.next_cursor).toBe('cursor_2');
      expect(page.truncated.omitted).toBe(50 - page.data.length);
      expect(page.truncated.call).toEqual({ tool: 'list_messages', arguments: { ...args, page_token: 'cursor_2' } });
      expect(textOf(result)).toContain(`[cut: ${50 - page.data.length} of the 50 items of this page did not fit`);
    }
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

/** A seeded source of random bytes (xorshift32): many boundaries, the same on every run. */
function seededRandom(seed: number): RandomBytes {
  let state = seed >>> 0 || 1;
  return (size) =>
    Uint8Array.from({ length: size }, () => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) & 0xff;
    });
}

describe('a result within its max_tokens whatever its random boundary', () => {
  /** The reads of the corpus that fill their budget: a list of 50 of each kind, a thread of 50, a long message. */
  const reads: { tool: string; arguments: Record<string, unknown>; budgets: (number | undefined)[] }[] = [
    { tool: 'list_messages', arguments: { limit: 50 }, budgets: [undefined, 1_500, 500] },
    { tool: 'list_threads', arguments: { limit: 50 }, budgets: [undefined, 1_500, 500] },
    // Below about 2,600 tokens a thread of 50 does not fit the notes naming the 49 messages left out.
    { tool: 'get_thread', arguments: { thread_id: 'thread_long' }, budgets: [undefined, 3_000] },
    { tool: 'get_message', arguments: { message_id: 'msg_long' }, budgets: [undefined, 1_500] },
    { tool: 'get_message', arguments: { message_id: 'msg_long', include_html: true }, budgets: [undefined, 1_500] },
  ];
  /** The highest, the lowest, then seeded random bytes. */
  const sources: RandomBytes[] = [
    (size) => new Uint8Array(size).fill(0xff),
    (size) => new Uint8Array(size),
    ...Array.from({ length: 150 }, (_, seed) => seededRandom(seed + 1)),
  ];

  it('counts the same tokens over MCP (structured content) and the AI SDK for 152 boundaries of every read (lists, a thread, a long message)', async () => {
    for (const read of reads)
      for (const maxTokens of read.budgets) {
        const asked = { ...read.arguments, ...(maxTokens ? { max_tokens: maxTokens } : {}) };
        const budget = maxTokens ?? DEFAULT_MAX_TOKENS;
        // Shaped once (shaping does not depend on the boundary), then fenced as each face does with each boundary.
        const shaped = await readForAgent(
          executor,
          operationNamed(read.tool),
          { grant_id: 'grant_1', ...asked },
          asked,
        );
        const counts = new Set<number>();
        for (const random of sources) {
          const structured = shapedMcpResult(shaped, read.tool, asked, newFence(random)).structuredContent;
          const tokens = await countTokens(JSON.stringify(structured));
          expect(tokens, `${read.tool} ${JSON.stringify(asked)}`).toBeLessThanOrEqual(budget);
          expect(await countTokens(JSON.stringify(fenceFields(shaped, newFence(random))))).toBe(tokens);
          counts.add(tokens);
        }
        // Not just within the budget: the very same count, whatever the boundary.
        expect([...counts], `${read.tool} ${JSON.stringify(asked)}`).toHaveLength(1);
        console.log(`${read.tool} ${JSON.stringify(asked)}: ${[...counts][0]} tokens of ${budget}, every boundary`);
      }
  });

  it('stays within max_tokens read over MCP with an injected random source', async () => {
    for (const seed of [1, 2, 3]) {
      const client = await connectFenced(seededRandom(seed * 7919));
      for (const read of reads)
        for (const maxTokens of read.budgets) {
          const result = await client.callTool({
            name: read.tool,
            arguments: { ...read.arguments, ...(maxTokens ? { max_tokens: maxTokens } : {}) },
          });
          expect(result.isError, textOf(result)).toBeFalsy();
          expect(JSON.stringify(result.structuredContent)).toMatch(/‹([0-9]{20})›[^‹›]*‹\/\1›/);
          expect(await countTokens(JSON.stringify(result.structuredContent))).toBeLessThanOrEqual(
            maxTokens ?? DEFAULT_MAX_TOKENS,
          );
        }
      await client.close();
    }
  });
});
