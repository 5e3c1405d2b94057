/**
 * Reads that lose nothing in silence (issue 35): long threads, a page of 50 and a send, through the real core
 * (a temporary libSQL file), read over MCP (an in-memory client) and with the AI SDK tools. A thread read carries
 * its newest message whole, then as many earlier ones as fit, newest first, and names the rest with the call that
 * reads each; a page that does not fit its budget ends early with a next_cursor continuing right after its last
 * item; a write names the ids it made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { unfencedClient, unfencedTools } from '../helpers/fence.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Core, Principal } from '../../src/index.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { RESULT_BUDGET, THREAD_MESSAGES, shapeForAgent } from '../../tools/compact.js';
import { threadUri } from '../../tools/resources.js';
import { localExecutor } from '../../tools/executor.js';
import { createMcpServer } from '../../tools/mcp.js';
import { deliverReports, deliverThread as deliverTo, threadBody as bodyOf } from '../helpers/agent-corpus.js';
import { createTestCore } from '../helpers/service.js';

const DOMAIN = 'reads.agentpost.localhost';
const MAILBOX = `agent@${DOMAIN}`;
const LISTS = `lists@${DOMAIN}`;

/** Delivers a thread to the mailbox of these tests and answers its id. */
const deliverThread = (core: Core, topic: string, count: number, paragraphs: number) =>
  deliverTo(core, MAILBOX, topic, count, paragraphs);

type Json = Record<string, unknown>;
type Note = { id: string; from?: string; date?: number; snippet?: string };
type Call = { tool: string; arguments: Json };
type ThreadRead = {
  id: string;
  message_ids: string[];
  messages: { id: string; body_text: string; body_truncated?: { omitted: number; hint: string; call?: Call } }[];
  messages_truncated?: { omitted: number; hint: string; messages: (Note & { uri?: string })[]; call: Call };
};
type Page = {
  data: { id: string }[];
  next_cursor?: string;
  truncated?: { omitted: number; hint: string; call?: Call };
};

const textOf = (result: Json) =>
  (result.content as { type: string; text?: string }[]).map((item) => item.text ?? '').join('\n');

/**
 * What every thread read must be: within the budget; the newest message whole; earlier ones contiguous, newest
 * first (the last one in may have a cut body, saying so); every other message named once, newest first.
 */
function expectThreadRead(read: ThreadRead, topic: string, count: number, paragraphs: number) {
  expect(JSON.stringify(read).length).toBeLessThanOrEqual(RESULT_BUDGET);
  expect(read.message_ids).toHaveLength(count);
  const newest = read.messages.at(-1)!;
  expect(newest.id).toBe(read.message_ids.at(-1));
  expect(newest.body_truncated).toBeUndefined();
  for (const line of bodyOf(topic, count, paragraphs).split('\n\n')) expect(newest.body_text).toContain(line);
  // Shown: the newest messages, oldest first; left out: all the others, newest first.
  const shown = read.messages.map((message) => message.id);
  const left = read.messages_truncated?.messages.map((note) => note.id) ?? [];
  expect(shown).toEqual(read.message_ids.slice(count - shown.length));
  expect(left).toEqual(read.message_ids.slice(0, count - shown.length).reverse());
  expect(shown.length).toBeGreaterThan(1);
  expect(left.length).toBeGreaterThan(0);
  expect(read.messages_truncated!.omitted).toBe(left.length);
  expect(read.messages_truncated!.hint).toContain(`${left.length} earlier message(s)`);
  expect(read.messages_truncated!.call).toEqual({
    tool: 'get_message',
    arguments: expect.objectContaining({ message_id: left[0] }),
  });
  // Every message shown but the oldest of them is whole; that one is whole or says where the rest is.
  for (const message of read.messages.slice(1)) expect(message.body_truncated).toBeUndefined();
  const oldestShown = read.messages[0]!;
  const index = count - shown.length + 1;
  if (oldestShown.body_truncated) {
    expect(oldestShown.body_text).toContain(`Start of message ${index} (${topic})`);
    expect(oldestShown.body_truncated.call).toEqual({
      tool: 'get_message',
      arguments: expect.objectContaining({ message_id: oldestShown.id }),
    });
    expect(oldestShown.body_truncated.hint).toContain('characters of this body were cut');
  } else {
    expect(oldestShown.body_text).toContain(`End of message ${index} (${topic})`);
  }
  // The notes say who and when, in one line.
  for (const note of read.messages_truncated!.messages) {
    expect(note.from).toMatch(/^(pat|sam)@example\.org$/);
    expect(note.snippet).toMatch(/^Start of message \d+/);
    expect(typeof note.date).toBe('number');
  }
}

describe('reads that lose nothing in silence', () => {
  let core: Core;
  let close: () => void;
  let principal: Principal;
  let client: Client;
  let unbound: Client;
  let tools: ReturnType<typeof createAgentpostTools>;
  let grantId: string;
  let listsGrantId: string;
  let longThread: string;
  let shortThread: string;

  beforeAll(async () => {
    ({ core, close } = await createTestCore());
    principal = { applicationId: await core.accounts.applications.defaultApplicationId(), via: 'local' };
    await core.accounts.domains.create(principal, { name: 'Reads', domain_address: DOMAIN });
    grantId = (await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: MAILBOX } })).grant
      .id;
    listsGrantId = (await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email: LISTS } }))
      .grant.id;
    longThread = await deliverThread(core, 'budget review', 15, 25);
    shortThread = await deliverThread(core, 'office move', 8, 25);
    // 50 messages with long subjects (and six named recipients, which compact items leave out): a page of them all
    // does not fit a budget of 2,000 tokens.
    await deliverReports(core, LISTS, 50);
    const connect = async (bound: string | undefined) => {
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      const mcp = unfencedClient(new Client({ name: 'reads', version: '1.0.0' }));
      await Promise.all([
        createMcpServer({ executor: localExecutor(core, principal), grantId: bound }).connect(serverTransport),
        mcp.connect(clientTransport),
      ]);
      return mcp;
    };
    client = await connect(grantId);
    unbound = await connect(undefined);
    tools = unfencedTools(createAgentpostTools({ core, principal, grantId }));
  });
  afterAll(async () => {
    await client?.close();
    await unbound?.close();
    close?.();
  });

  it('reads a 15-message thread over MCP: the newest whole, earlier ones as fit, the rest named with the call that reads them', async () => {
    const result = await client.callTool({ name: 'get_thread', arguments: { thread_id: longThread } });
    expect(result.isError).toBeFalsy();
    const read = result.structuredContent as ThreadRead;
    console.log(
      `get_thread of 15: ${read.messages.length} shown, ${read.messages_truncated?.messages.length} named; ${JSON.stringify(read).length} characters of structured content, ${textOf(result).length} of text`,
    );
    expectThreadRead(read, 'budget review', 15, 25);
    // The continuation works: the call it gives, and get_message with every id it names.
    const next = read.messages_truncated!.call;
    const again = (await client.callTool({ name: next.tool, arguments: next.arguments })).structuredContent as {
      id: string;
      body_text: string;
    };
    expect(again.id).toBe(read.messages_truncated!.messages[0]!.id);
    for (const note of read.messages_truncated!.messages) {
      const message = (await client.callTool({ name: 'get_message', arguments: { message_id: note.id } }))
        .structuredContent as { id: string; body_text: string };
      expect(message.body_text).toMatch(/^Start of message \d+ \(budget review\)/);
    }
    // The text names them too, with the newest message whole and the call for the rest.
    const text = textOf(result);
    expect(text).toContain('End of message 15 (budget review).');
    for (const note of read.messages_truncated!.messages) expect(text).toContain(note.id);
    expect(text).toContain(`get_message {"message_id":"${read.messages_truncated!.messages[0]!.id}"}`);
  });

  it('reads an 8-message thread over MCP and with the AI SDK alike', async () => {
    const overMcp = (await client.callTool({ name: 'get_thread', arguments: { thread_id: shortThread } }))
      .structuredContent as ThreadRead;
    console.log(
      `get_thread of 8: ${overMcp.messages.length} shown, ${overMcp.messages_truncated?.messages.length} named`,
    );
    expectThreadRead(overMcp, 'office move', 8, 25);
    const overAi = (await tools.get_thread!.execute!(
      { thread_id: shortThread },
      { toolCallId: 'thread-8', messages: [] },
    )) as ThreadRead;
    expect(overAi).toEqual(overMcp);
    const viaAi = (await tools.get_thread!.execute!(
      { thread_id: longThread },
      { toolCallId: 'thread-15', messages: [] },
    )) as ThreadRead;
    expectThreadRead(viaAi, 'budget review', 15, 25);
    const next = viaAi.messages_truncated!.call;
    const message = (await tools[next.tool]!.execute!(next.arguments, { toolCallId: 'next', messages: [] })) as {
      id: string;
    };
    expect(message.id).toBe(viaAi.messages_truncated!.messages[0]!.id);
  });

  it('keeps the newest message whole with its HTML too (include_html), within the budget', async () => {
    const read = (
      await client.callTool({ name: 'get_thread', arguments: { thread_id: longThread, include_html: true } })
    ).structuredContent as ThreadRead;
    expect(JSON.stringify(read).length).toBeLessThanOrEqual(RESULT_BUDGET);
    const newest = read.messages.at(-1)! as ThreadRead['messages'][number] & {
      body?: string;
      html_truncated?: unknown;
    };
    expect(newest.id).toBe(read.message_ids.at(-1));
    expect(newest.body_truncated).toBeUndefined();
    expect(newest.html_truncated).toBeUndefined();
    expect(newest.body).toContain('End of message 15 (budget review).');
    expect(read.messages_truncated!.messages.length + read.messages.length).toBe(15);
  });

  it('names the grant in the continuation when the tools are not bound to one', async () => {
    const read = (
      await unbound.callTool({ name: 'get_thread', arguments: { grant_id: grantId, thread_id: longThread } })
    ).structuredContent as ThreadRead;
    expectThreadRead(read, 'budget review', 15, 25);
    expect(read.messages_truncated!.call.arguments).toEqual({
      grant_id: grantId,
      message_id: read.messages_truncated!.messages[0]!.id,
    });
    const again = await unbound.callTool({ name: 'get_message', arguments: read.messages_truncated!.call.arguments });
    expect(again.isError).toBeFalsy();
  });

  it('names the messages older than those it read with the call that lists them', async () => {
    const count = THREAD_MESSAGES + 5;
    const thread = await deliverThread(core, 'long chat', count, 0);
    const read = (await client.callTool({ name: 'get_thread', arguments: { thread_id: thread } }))
      .structuredContent as ThreadRead & {
      messages_truncated: { older?: unknown };
    };
    // Short messages: all those read fit; the five oldest were not read and the call that lists them is given.
    expect(read.messages.map((message) => message.id)).toEqual(read.message_ids.slice(5));
    expect(read.messages.at(-1)!.body_text).toContain(`End of message ${count} (long chat)`);
    expect(read.messages_truncated.omitted).toBe(5);
    expect(read.messages_truncated.messages).toBeUndefined();
    expect(read.messages_truncated.hint).toContain('5 older message(s) were not read: list_messages {"thread_id":');
    const call = read.messages_truncated.call;
    expect(call).toEqual({ tool: 'list_messages', arguments: { thread_id: thread, page_token: expect.any(String) } });
    const older = (await client.callTool({ name: call.tool, arguments: call.arguments })).structuredContent as Page;
    expect(older.data.map((item) => item.id)).toEqual(read.message_ids.slice(0, 5).reverse());
    expect(older.next_cursor).toBeUndefined();
  });

  it('reads a thread resource the same way: newest whole, the rest named with their resources', async () => {
    const read = await client.readResource({ uri: threadUri(grantId, longThread) });
    const text = (read.contents[0] as { text: string }).text;
    expect(text.length).toBeLessThanOrEqual(RESULT_BUDGET + 100);
    const { thread, ...rest } = JSON.parse(text) as { thread: { id: string; message_ids: string[] } } & Omit<
      ThreadRead,
      'id' | 'message_ids'
    >;
    expect(thread.id).toBe(longThread);
    expectThreadRead({ ...rest, id: thread.id, message_ids: thread.message_ids }, 'budget review', 15, 25);
    const note = rest.messages_truncated!.messages[0]!;
    expect(note.uri).toBe(`agentpost://grants/${grantId}/messages/${note.id}`);
    const message = await client.readResource({ uri: note.uri! });
    expect(JSON.parse((message.contents[0] as { text: string }).text).id).toBe(note.id);
  });

  it('ends a page of 50 that does not fit early, with a next_cursor right after its last item (MCP and AI SDK)', async () => {
    const all = (
      (await core.mail.messages.list(principal, { grant_id: listsGrantId, limit: 200 })) as { data: { id: string }[] }
    ).data.map((message) => message.id);
    expect(all).toHaveLength(50);
    const listTools = unfencedTools(createAgentpostTools({ core, principal }));
    for (const face of ['mcp', 'ai'] as const) {
      const read = async (args: Json): Promise<{ page: Page; text: string }> => {
        if (face === 'ai')
          return {
            page: (await listTools.list_messages!.execute!(args, { toolCallId: 'list', messages: [] })) as Page,
            text: '',
          };
        const result = await unbound.callTool({ name: 'list_messages', arguments: args });
        expect(result.isError).toBeFalsy();
        return { page: result.structuredContent as Page, text: textOf(result) };
      };
      const { page: first, text } = await read({ grant_id: listsGrantId, limit: 50, max_tokens: 2_000 });
      if (face === 'mcp')
        console.log(
          `list_messages(limit=50, max_tokens=2000) of 50 long items: ${first.data.length} returned; text ${text.length} characters, structuredContent ${JSON.stringify(first).length}`,
        );
      expect(JSON.stringify(first).length).toBeLessThanOrEqual(RESULT_BUDGET);
      expect(first.data.length).toBeLessThan(50);
      expect(first.data.length).toBeGreaterThan(10);
      expect(first.next_cursor).toEqual(expect.any(String));
      expect(first.truncated).toEqual({
        omitted: 50 - first.data.length,
        hint: expect.stringContaining(`${50 - first.data.length} of the 50 items of this page did not fit`),
        call: {
          tool: 'list_messages',
          arguments: { grant_id: listsGrantId, limit: 50, max_tokens: 2_000, page_token: first.next_cursor },
        },
      });
      if (face === 'mcp') {
        expect(text).toContain(`; more with page_token: "${first.next_cursor}"`);
        expect(text).not.toContain('no more pages');
        expect(text).toContain(`[cut: ${50 - first.data.length} of the 50 items`);
      }
      // Paging on with the call it gives: every item once, in order.
      const seen = first.data.map((item) => item.id);
      let call = first.truncated!.call;
      while (call) {
        const { page } = await read(call.arguments);
        seen.push(...page.data.map((item) => item.id));
        call =
          page.truncated?.call ??
          (page.next_cursor
            ? { tool: 'list_messages', arguments: { ...call.arguments, page_token: page.next_cursor } }
            : undefined);
      }
      expect(seen).toEqual(all);
    }
  });

  it('says no more pages only when there are none', async () => {
    const result = await unbound.callTool({ name: 'list_messages', arguments: { grant_id: listsGrantId, limit: 10 } });
    const page = result.structuredContent as Page;
    expect(page.data).toHaveLength(10);
    expect(page.truncated).toBeUndefined();
    expect(textOf(result)).toContain(`more with page_token: "${page.next_cursor}"`);
    const last = await unbound.callTool({
      name: 'list_messages',
      arguments: {
        grant_id: listsGrantId,
        limit: 10,
        page_token: ((await core.mail.messages.list(principal, { grant_id: listsGrantId, limit: 40 })) as Page)
          .next_cursor,
      },
    });
    expect((last.structuredContent as Page).next_cursor).toBeUndefined();
    expect(textOf(last)).toMatch(/^10 item\(s\); no more pages/);
  });

  it('names the ids a write made in its text', async () => {
    const sent = await client.callTool({
      name: 'send_message',
      arguments: { to: [{ email: 'pat@example.org' }], subject: 'Numbers', body: 'Here they are.' },
    });
    expect(sent.isError, textOf(sent)).toBeFalsy();
    const message = (sent.structuredContent as { data: { id: string; thread_id: string } }).data;
    expect(textOf(sent)).toContain(`Sent message ${message.id} in thread ${message.thread_id}`);
    const draft = await client.callTool({
      name: 'create_draft',
      arguments: { to: [{ email: 'pat@example.org' }], subject: 'Later', body: 'Draft.' },
    });
    const draftId = (draft.structuredContent as { id: string }).id;
    expect(textOf(draft)).toContain(`Created draft ${draftId}`);
    const folder = await client.callTool({ name: 'create_folder', arguments: { name: 'Reports' } });
    expect(textOf(folder)).toContain(`Created folder ${(folder.structuredContent as { id: string }).id} ("Reports")`);
    expect(textOf(await client.callTool({ name: 'delete_draft', arguments: { draft_id: draftId } }))).toContain(
      `Deleted draft ${draftId}`,
    );
    expect(
      textOf(await client.callTool({ name: 'update_message', arguments: { message_id: message.id, starred: true } })),
    ).toMatch(new RegExp(`^Updated message ${message.id} in thread ${message.thread_id}\n.* · starred`));
    expect(textOf(await client.callTool({ name: 'delete_message', arguments: { message_id: message.id } }))).toBe(
      `Deleted message ${message.id} (moved to trash; deleted for good if it was in trash already)`,
    );
    const dryRun = await client.callTool({
      name: 'send_message',
      arguments: { to: [{ email: 'pat@example.org' }], subject: 'Check', body: 'Only a check.', dry_run: true },
    });
    expect(textOf(dryRun)).toMatch(/^Dry run: the send would (go|be refused)/);
  });

  it('reads selected fields without inventing the others', async () => {
    const result = await client.callTool({ name: 'list_messages', arguments: { select: 'subject', limit: 2 } });
    const text = textOf(result);
    expect(text).not.toContain('?');
    expect(text.split('\n').slice(1)).toEqual([
      expect.stringMatching(/^- id: \w+ · subject: [^·]+$/),
      expect.stringMatching(/^- id: \w+ · subject: [^·]+$/),
    ]);
    const one = await client.callTool({
      name: 'get_message',
      arguments: { message_id: (result.structuredContent as Page).data[0]!.id, select: 'subject,unread' },
    });
    expect(textOf(one)).toMatch(/^id: \w+ · subject: [^·]+ · unread: (true|false)$/);
  });
});

describe('cuts that say so', () => {
  it('cuts the long fields of one object, naming each and the route that returns it whole', () => {
    const event = {
      id: 'event_1',
      grant_id: 'grant_1',
      object: 'event',
      title: 'Offsite',
      description: 'Agenda item. '.repeat(3_000),
      participants: Array.from({ length: 400 }, (_, index) => ({
        email: `person${index}@example.com`,
        status: 'noreply',
      })),
    };
    const shaped = shapeForAgent('get_event', event, { event_id: 'event_1', calendar_id: 'primary' }) as {
      description: string;
      participants: unknown[];
      truncated: { omitted: number; hint: string };
    };
    expect(JSON.stringify(shaped).length).toBeLessThanOrEqual(RESULT_BUDGET + 1_000);
    expect(shaped.truncated.hint).toMatch(/description \(\d+ of 39000 characters kept\)/);
    expect(shaped.truncated.hint).toMatch(/participants \(the first \d+ of 400 items kept\)/);
    expect(shaped.truncated.hint).toContain('GET /v3/grants/{grant_id}/events/event_1');
    expect(shaped.truncated.omitted).toBeGreaterThan(30_000);
  });

  it('keeps the cursor of a page whose one item was only shortened', () => {
    const page = { data: [{ id: 'contact_1', notes: 'n'.repeat(30_000) }], next_cursor: 'after_1' };
    const shaped = shapeForAgent('list_contacts', page, {}) as {
      data: { notes: string }[];
      next_cursor?: string;
      truncated: { omitted: number; hint: string };
    };
    expect(shaped.next_cursor).toBe('after_1');
    expect(shaped.truncated.omitted).toBe(0);
    expect(shaped.truncated.hint).toContain('contact_1: notes (');
    expect(shaped.data[0]!.notes.length).toBeLessThan(30_000);
  });
});
