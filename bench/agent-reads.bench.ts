/**
 * `npm run bench -- agent-reads` (issue 35): what an agent reads, in characters and tokens (src/tokens, o200k_base),
 * before and after, for the corpus of the read tests, then attachment text throughput per format beside the library
 * alone (bench/attachment-throughput.ts; `npm run bench -- attachment-text`, its old name, runs this bench).
 *
 * Each item is delivered into a real core (a temporary libSQL file) and read as an agent host reads it, through the
 * MCP client SDK (in memory) against `createMcpServer` with the default budget:
 * - **before**: what the read gave before issue 35, the message JSON with `body` as stored (the `/v3` shape, the HTML
 *   as received): `core.mail.messages.find` for a message, its thread's messages as `list` returns them for a
 *   thread, a page of 50 for the list, and for an attachment its entry in the message (no text could be read);
 * - **after**: the text content of the tool result (`get_message`, `get_thread`, `list_messages`, `read_attachment`),
 *   fenced as data, as the model reads it; beside it the characters of its structured content.
 * The corpus: the bodies of test/fixtures/agent/bodies (the 114 KB marketing mail, the inline replies, hidden
 * instructions, a data table), threads of 15 and 40 messages and a page of 50 reports built as
 * test/tools/reads.test.ts builds them (test/helpers/agent-corpus.ts), and every file of
 * test/fixtures/agent/attachments read with read_attachment (its first page; a file that cannot be read answers its
 * error, measured the same way).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Core, Principal } from '../src/index.js';
import { CANONICAL_TYPES, type AttachmentKind } from '../src/attachment-text/index.js';
import { countTokens } from '../src/tokens/index.js';
import { localExecutor } from '../tools/executor.js';
import { createMcpServer } from '../tools/mcp.js';
import { deliverReports, deliverThread, mailWithFiles } from '../test/helpers/agent-corpus.js';
import { createTestCore } from '../test/helpers/service.js';
import { attachmentThroughput } from './attachment-throughput.js';

const DOMAIN = 'reads.agentpost.localhost';
const MAILBOX = `agent@${DOMAIN}`;
const LISTS = `lists@${DOMAIN}`;
const corpus = new URL('../test/fixtures/agent/', import.meta.url);

/** The kind of an attachment of the corpus by its extension, where the two differ (its type: CANONICAL_TYPES). */
const KIND_OF_EXTENSION: Record<string, AttachmentKind> = { txt: 'text', ics: 'calendar', eml: 'message' };

/** The declared type of a corpus file: its kind's canonical type (the bytes' signature wins anyway). */
function typeOf(name: string): string {
  const extension = name.slice(name.lastIndexOf('.') + 1);
  const kind = KIND_OF_EXTENSION[extension] ?? extension;
  return (CANONICAL_TYPES as Record<string, string>)[kind] ?? 'application/octet-stream';
}

type Json = Record<string, unknown>;

const n = (value: number) => value.toLocaleString('en-US');

/** A message of one body part, HTML or plain text. */
function bodyMail(name: string, body: string): Buffer {
  const type = name.endsWith('.html') ? 'text/html' : 'text/plain';
  return Buffer.from(
    `From: Lena Fischer <lena@northwind.example>\r\nTo: ${MAILBOX}\r\nSubject: ${name}\r\nMessage-ID: <${name}@northwind.example>\r\nMIME-Version: 1.0\r\nContent-Type: ${type}; charset=utf-8\r\n\r\n${body.replace(/\r?\n/g, '\r\n')}\r\n`,
  );
}

async function connect(core: Core, principal: Principal, grantId: string): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'agent-reads', version: '1.0.0' });
  await Promise.all([
    createMcpServer({ executor: localExecutor(core, principal), grantId }).connect(serverTransport),
    client.connect(clientTransport),
  ]);
  return client;
}

/** Before and after of one item, in characters and tokens. */
async function measure(
  figures: Record<string, number | string>,
  name: string,
  before: unknown,
  result: Json,
  shown?: { label: string; value: (read: Json) => string },
): Promise<{ before: [number, number]; after: [number, number] }> {
  const beforeText = JSON.stringify(before);
  const afterText = (result.content as { text?: string }[]).map((item) => item.text ?? '').join('\n');
  const sizes = {
    before: [beforeText.length, await countTokens(beforeText)] as [number, number],
    after: [afterText.length, await countTokens(afterText)] as [number, number],
  };
  figures[`${name}: chars before → after`] = `${n(sizes.before[0])} → ${n(sizes.after[0])}`;
  figures[`${name}: tokens before → after`] = `${n(sizes.before[1])} → ${n(sizes.after[1])}`;
  figures[`${name}: structured content chars (after)`] = result.isError
    ? 'error: ' + afterText.slice(0, 60).replace(/\s+/g, ' ')
    : JSON.stringify(result.structuredContent ?? {}).length;
  if (shown) figures[`${name}: ${shown.label} (after)`] = shown.value(result.structuredContent as Json);
  return sizes;
}

async function corpusSizes(): Promise<Record<string, number | string>> {
  const { core, close } = await createTestCore();
  const figures: Record<string, number | string> = {};
  const clients: Client[] = [];
  try {
    const principal: Principal = {
      applicationId: await core.accounts.applications.defaultApplicationId(),
      via: 'local',
    };
    await core.accounts.domains.create(principal, { name: 'Reads', domain_address: DOMAIN });
    const grant = async (email: string) =>
      (await core.accounts.grants.create(principal, { provider: 'nylas', settings: { email } })).grant.id;
    const grantId = await grant(MAILBOX);
    const listsGrantId = await grant(LISTS);
    const agent = await connect(core, principal, grantId);
    const lists = await connect(core, principal, listsGrantId);
    clients.push(agent, lists);
    const totals = { mail: { before: [0, 0], after: [0, 0] }, attachments: { before: [0, 0], after: [0, 0] } };
    let group: keyof typeof totals = 'mail';
    const add = (sizes: { before: [number, number]; after: [number, number] }) => {
      for (const side of ['before', 'after'] as const)
        for (const at of [0, 1]) totals[group][side][at]! += sizes[side][at]!;
    };
    const deliver = async (raw: Buffer, to = MAILBOX) =>
      (await core.mail.inbound.deliverInbound({ rawMime: raw, envelope: { mailFrom: 'x@example.org', rcptTo: [to] } }))
        .deliveries[0]!;

    // Bodies: get_message.
    const bodies = new URL('bodies/', corpus);
    for (const name of readdirSync(bodies).sort()) {
      const { messageId } = await deliver(bodyMail(name, readFileSync(new URL(name, bodies), 'utf8')));
      const before = await core.mail.messages.find(principal, { grant_id: grantId, message_id: messageId });
      const after = await agent.callTool({ name: 'get_message', arguments: { message_id: messageId } });
      add(
        await measure(figures, `get_message ${name}`, before, after, {
          label: 'body cut to the budget',
          value: (read) => (read.body_truncated ? 'yes, with the call for the rest' : 'no'),
        }),
      );
    }
    // Threads of 15 and 40 messages: get_thread.
    for (const count of [15, 40]) {
      const threadId = await deliverThread(core, MAILBOX, `budget review ${count}`, count, 25);
      const before = await core.mail.messages.list(principal, { grant_id: grantId, thread_id: threadId, limit: 200 });
      const after = await agent.callTool({ name: 'get_thread', arguments: { thread_id: threadId } });
      add(
        await measure(figures, `get_thread of ${count} messages`, before, after, {
          label: 'messages read, left out (named one by one)',
          value: (read) => {
            const left = read.messages_truncated as { omitted: number; messages?: unknown[] } | undefined;
            return `${(read.messages as unknown[]).length}, ${left?.omitted ?? 0} (${left?.messages?.length ?? 0})`;
          },
        }),
      );
    }
    // A page of 50: list_messages.
    await deliverReports(core, LISTS, 50);
    add(
      await measure(
        figures,
        'list_messages of 50',
        await core.mail.messages.list(principal, { grant_id: listsGrantId, limit: 50 }),
        await lists.callTool({ name: 'list_messages', arguments: { limit: 50 } }),
        {
          label: 'items returned',
          value: (read) => `${(read.data as unknown[]).length}${read.next_cursor ? ', with next_cursor' : ''}`,
        },
      ),
    );
    // Every attachment of the corpus: read_attachment (first page).
    group = 'attachments';
    const attachments = new URL('attachments/', corpus);
    const files = readdirSync(attachments)
      .sort()
      .map((name) => ({
        name,
        type: typeOf(name),
        bytes: readFileSync(new URL(name, attachments)),
      }));
    const { messageId } = await deliver(
      mailWithFiles([`From: Accounts <accounts@northwind.example>`, `To: ${MAILBOX}`, 'Subject: Files'], files),
    );
    const message = (await core.mail.messages.find(principal, { grant_id: grantId, message_id: messageId })) as {
      attachments?: { id: string; filename: string }[];
    };
    for (const attachment of message.attachments ?? []) {
      const after = await agent.callTool({
        name: 'read_attachment',
        arguments: { message_id: messageId, attachment_id: attachment.id },
      });
      add(await measure(figures, `read_attachment ${attachment.filename}`, attachment, after));
    }
    for (const [name, sizes] of Object.entries(totals)) {
      figures[`total of the ${name} reads: chars before → after`] = `${n(sizes.before[0]!)} → ${n(sizes.after[0]!)}`;
      figures[`total of the ${name} reads: tokens before → after`] = `${n(sizes.before[1]!)} → ${n(sizes.after[1]!)}`;
    }
  } finally {
    for (const client of clients) await client.close();
    await core.mail.inbound.close();
    await core.calendar.parser.close();
    await core.mail.attachmentText.close();
    close();
  }
  return figures;
}

export async function run(): Promise<Record<string, number | string>> {
  return { ...(await corpusSizes()), ...(await attachmentThroughput()) };
}
