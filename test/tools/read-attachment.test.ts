/**
 * Attachments as text (issue 35, item 4): `read_attachment` over the `/v3` extension
 * (`GET /v3/grants/{grant_id}/attachments/{attachment_id}/text`, plain fetch: the nylas SDK has no call for it), the
 * MCP client SDK (Streamable HTTP at /mcp, and in memory) and the AI SDK tools, on the corpus of
 * test/fixtures/agent/attachments delivered as one message. Text is extracted; pages continue exactly where the last
 * one ended; another application's attachment is a 404; a file that cannot be read is a 422 naming why.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MockLanguageModelV3 } from 'ai/test';
import { generateText, stepCountIs } from 'ai';
import type { Principal } from '../../src/index.js';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { localExecutor } from '../../tools/executor.js';
import { createMcpServer } from '../../tools/mcp.js';
import { mailWithFiles } from '../helpers/agent-corpus.js';
import { unfencedClient, unfencedTools } from '../helpers/fence.js';
import { request } from '../helpers/http.js';
import { createMailbox } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const MAILBOX = 'files@attachments.agentpost.localhost';
const fixture = (name: string) => readFileSync(new URL(`../fixtures/agent/attachments/${name}`, import.meta.url));

const FILES = [
  ['invoice.pdf', 'application/pdf'],
  ['contract.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  ['budget.xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
  ['orders-export.csv', 'text/csv'],
  ['logo.png', 'image/png'],
  ['invoice-truncated.pdf', 'application/pdf'],
  ['contract-bomb.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  ['invoice-encrypted.pdf', 'application/pdf'],
] as const;

/** A message carrying every file of {@link FILES}. */
function messageWithFiles(): Buffer {
  return mailWithFiles(
    [
      'From: Accounts <accounts@northwind.example>',
      `To: ${MAILBOX}`,
      'Subject: Invoice, contract, budget and the export',
      'Message-ID: <files-1@northwind.example>',
    ],
    FILES.map(([name, type]) => ({ name, type, bytes: fixture(name) })),
  );
}

type Page = {
  id: string;
  text: string;
  format: string;
  truncated?: true;
  next_cursor?: string;
  page: { start: number; end: number; tokens: number };
  metadata: Record<string, unknown> & { kind: string; text_readable: boolean; characters: number; tokens: number };
};

describe('read_attachment', () => {
  let service: TestService;
  let grantId: string;
  let messageId: string;
  let principal: Principal;
  const ids = new Map<string, string>();

  const textPath = (name: string, query = '') =>
    `/v3/grants/${grantId}/attachments/${ids.get(name)}/text?message_id=${messageId}${query}`;
  const read = (name: string, query = '', key = service.apiKey) =>
    request(service.url, 'GET', textPath(name, query), { key });

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, MAILBOX);
    const delivered = await service.core.mail.inbound.deliverInbound({
      rawMime: messageWithFiles(),
      envelope: { mailFrom: 'accounts@northwind.example', rcptTo: [MAILBOX] },
    });
    messageId = delivered.deliveries[0]!.messageId;
    const message = await service.nylas.messages.find({ identifier: grantId, messageId });
    for (const attachment of message.data.attachments ?? []) ids.set(attachment.filename, attachment.id);
    expect([...ids.keys()].sort()).toEqual(FILES.map(([name]) => name).sort());
    principal = { applicationId: await service.core.accounts.applications.defaultApplicationId(), via: 'local' };
  });
  afterAll(async () => {
    await service?.close();
  });

  it('answers the text of a PDF, a DOCX, an XLSX and a CSV over /v3, in the data envelope', async () => {
    const expected: Record<string, [string, string[]]> = {
      'invoice.pdf': ['pdf', ['--- Page 1 of 2 ---', 'Invoice number: INV-2025-0417']],
      'contract.docx': ['docx', ['# 1. Services', '[the price list](https://agentpost.example/pricing?plan=business)']],
      'budget.xlsx': ['xlsx', ['## Sheet 1 of 3: Summary', '| Total | 885000 | 223425.75 |  |']],
      'orders-export.csv': [
        'csv',
        ['| SO-100001 | 2025-01-02 | Fabrikam, Inc. | orders+1@fabrikam.example | 79.19 | open |  |'],
      ],
    };
    for (const [name, [kind, snippets]] of Object.entries(expected)) {
      const response = await read(name);
      expect(response.status, `${name}: ${response.text.slice(0, 300)}`).toBe(200);
      expect(typeof response.body.request_id).toBe('string');
      const page = response.body.data as Page;
      expect(page).toMatchObject({ id: ids.get(name), format: kind === 'pdf' ? 'text' : 'markdown' });
      expect(page.metadata).toMatchObject({ kind, text_readable: true });
      for (const snippet of snippets) expect(page.text, name).toContain(snippet);
    }
    // The CSV of 5,000 rows does not fit a page of 5,000 tokens: it says so, with a cursor.
    const csv = (await read('orders-export.csv')).body.data as Page;
    expect(csv.truncated).toBe(true);
    expect(csv.page.tokens).toBeLessThanOrEqual(5_000);
    expect(csv.metadata.tokens).toBeGreaterThan(100_000);
  });

  it('pages with a cursor that continues exactly where the last page ended', async () => {
    const whole = (await read('contract.docx', '&max_tokens=50000')).body.data as Page;
    expect(whole.truncated).toBeUndefined();
    let text = '';
    let cursor: string | undefined;
    let pages = 0;
    do {
      const response = await read(
        'contract.docx',
        `&max_tokens=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(response.status, response.text.slice(0, 300)).toBe(200);
      const page = response.body.data as Page;
      expect(page.page.start).toBe(text.length);
      expect(page.page.tokens).toBeLessThanOrEqual(100);
      text += page.text;
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor && pages < 100);
    expect(pages).toBeGreaterThan(3);
    expect(text).toBe(whole.text);
    // A cursor of another file is refused: 400, saying to start again.
    const foreign = await read(
      'invoice.pdf',
      `&cursor=${encodeURIComponent((await read('contract.docx', '&max_tokens=50')).body.data.next_cursor)}`,
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatchObject({ type: 'attachment_invalid_cursor' });
  });

  it('answers an image with its metadata only, saying so', async () => {
    const response = await read('logo.png');
    expect(response.status).toBe(200);
    const page = response.body.data as Page;
    expect(page.text).toBe('');
    expect(page.metadata).toMatchObject({ kind: 'image', text_readable: false });
    expect(page.metadata.note).toMatch(/No text can be read from an image/);
  });

  it('answers a file that cannot be read with a 422 naming why, in the Nylas error shape', async () => {
    for (const [name, type, words] of [
      ['invoice-truncated.pdf', 'attachment_unreadable', /./],
      ['contract-bomb.docx', 'attachment_zip_bomb', /refused before inflating/],
      ['invoice-encrypted.pdf', 'attachment_encrypted', /password/],
    ] as const) {
      const response = await read(name);
      expect(response.status, `${name}: ${response.text.slice(0, 300)}`).toBe(422);
      expect(response.body).toEqual({
        request_id: expect.any(String),
        error: { type, message: expect.stringMatching(words) },
      });
    }
  });

  it("is a 404 for another application's attachment, and a 400 without message_id", async () => {
    const other = await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' });
    const response = await read('invoice.pdf', '', other.apiKey);
    expect(response.status).toBe(404);
    expect(response.body.error.type).toBe('not_found_error');
    // Another message of the same mailbox does not own it either.
    const wrong = await request(
      service.url,
      'GET',
      `/v3/grants/${grantId}/attachments/${ids.get('invoice.pdf')}/text?message_id=not-this-one`,
      { key: service.apiKey },
    );
    expect(wrong.status).toBe(404);
    const missing = await request(
      service.url,
      'GET',
      `/v3/grants/${grantId}/attachments/${ids.get('invoice.pdf')}/text`,
      {
        key: service.apiKey,
      },
    );
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('message_id');
  });

  it('is an MCP tool (Streamable HTTP and in memory): the text, a line about the file, and the call for the next page', async () => {
    const overHttp = new Client({ name: 'attachments', version: '1.0.0' });
    await overHttp.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp?grant_id=${grantId}`), {
        requestInit: { headers: { authorization: `Bearer ${service.apiKey}` } },
      }),
    );
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const inMemory = new Client({ name: 'attachments', version: '1.0.0' });
    await Promise.all([
      createMcpServer({ executor: localExecutor(service.core, principal), grantId }).connect(serverTransport),
      inMemory.connect(clientTransport),
    ]);
    try {
      const listed = await overHttp.listTools();
      const tool = listed.tools.find((entry) => entry.name === 'read_attachment');
      expect(tool?.annotations?.readOnlyHint).toBe(true);
      expect(listed.tools.find((entry) => entry.name === 'get_message')?.description).toContain('read_attachment');
      for (const client of [unfencedClient(overHttp), unfencedClient(inMemory)]) {
        const first = await client.callTool({
          name: 'read_attachment',
          arguments: { attachment_id: ids.get('invoice.pdf'), message_id: messageId, max_tokens: 60 },
        });
        expect(first.isError).toBeFalsy();
        const page = first.structuredContent as Page;
        expect(page.truncated).toBe(true);
        const text = (first.content as { text: string }[])[0]!.text;
        expect(text).toContain('"invoice.pdf" (pdf, application/pdf');
        expect(text).toContain(page.text);
        const more = /\[more: read_attachment (\{.*\}) reads the next page\]/.exec(text);
        expect(more).not.toBeNull();
        const call = JSON.parse(more![1]!) as Record<string, unknown>;
        expect(call).toEqual({
          attachment_id: ids.get('invoice.pdf'),
          message_id: messageId,
          max_tokens: 60,
          cursor: page.next_cursor,
        });
        const second = (await client.callTool({ name: 'read_attachment', arguments: call })).structuredContent as Page;
        expect(second.page.start).toBe(page.page.end);
        const failed = await client.callTool({
          name: 'read_attachment',
          arguments: { attachment_id: ids.get('contract-bomb.docx'), message_id: messageId },
        });
        expect(failed.isError).toBe(true);
        expect((failed.content as { text: string }[])[0]!.text).toMatch(
          /^unprocessable \(attachment_zip_bomb\): The zip container was refused/,
        );
      }
    } finally {
      await overHttp.close();
      await inMemory.close();
    }
  });

  it('is an AI SDK tool, in-process and remote, read by a model in a loop', async () => {
    const local = unfencedTools(createAgentpostTools({ core: service.core, principal, grantId }));
    const remote = unfencedTools(createAgentpostTools({ url: service.url, apiKey: service.apiKey, grantId }));
    const input = { attachment_id: ids.get('budget.xlsx'), message_id: messageId };
    const options = { toolCallId: 'call-1', messages: [] };
    const inProcess = (await local.read_attachment!.execute!(input, options)) as Page;
    const overHttp = (await remote.read_attachment!.execute!(input, options)) as Page;
    expect(inProcess.text).toContain('## Sheet 2 of 3: Q1 Expenses');
    expect(overHttp).toEqual(inProcess);
    await expect(
      remote.read_attachment!.execute!(
        { attachment_id: ids.get('invoice-truncated.pdf'), message_id: messageId },
        options,
      ),
    ).rejects.toThrow(/attachment_unreadable|cannot be read|cut short|damaged/);

    let calls = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        calls += 1;
        return calls === 1
          ? {
              content: [
                { type: 'tool-call', toolCallId: 'c1', toolName: 'read_attachment', input: JSON.stringify(input) },
              ],
              finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
              usage: {
                inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
                outputTokens: { total: 5, text: 5, reasoning: undefined },
              },
              warnings: [],
            }
          : {
              content: [{ type: 'text', text: 'The total is 885000.' }],
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: {
                inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
                outputTokens: { total: 5, text: 5, reasoning: undefined },
              },
              warnings: [],
            };
      },
    });
    const result = await generateText({
      model,
      tools: local,
      prompt: 'What is the budget total?',
      stopWhen: stepCountIs(3),
    });
    const output = result.steps[0]!.toolResults[0]!.output as Page;
    expect(output.text).toContain('| Total | 885000 | 223425.75 |  |');
    // The model's second call saw the tool result.
    expect(JSON.stringify(model.doGenerateCalls[1]!.prompt)).toContain('885000');
    expect(result.text).toBe('The total is 885000.');
  });
});
