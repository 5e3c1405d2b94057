/**
 * No path around a policy (issue 36, item 6): an attachment a policy removed at ingest (a type outside
 * `limit_attachment_allowed_types`) is absent from every path a client reads: `fields=raw_mime` (nylas SDK and the
 * MCP tool), `/download` by its id, the MCP (Streamable HTTP) and AI SDK tools, search and the `message.created`
 * webhook; the allowed attachment stays byte for byte. One message over our SMTP listener goes to a mailbox under the
 * policy and to one under none, whose copy shows what each path would otherwise have served.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { simpleParser } from 'mailparser';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentpostTools } from '../../tools/ai-sdk.js';
import { createMailbox, eventually, smtpClient } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../helpers/webhooks.js';

const STRICT_DOMAIN = 'strict-policy.agentpost.localhost';
const STRICT = `files@${STRICT_DOMAIN}`;
const OPEN = 'files@open-policy.agentpost.localhost';
/** A word only the removed attachment holds. */
const MARKER = 'zebracornledger';
const LEDGER = Buffer.from(`account,amount\r\n${MARKER},1200\r\nsecond,300\r\n`);
const PDF = Buffer.concat([
  Buffer.from('%PDF-1.4\n% report\n'),
  Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251)),
]);

type Json = Record<string, any>;

describe('an attachment a policy removed, on every path a client reads', () => {
  let service: TestService;
  let receiver: WebhookReceiver;
  let policyId: string;
  let strictGrant: string;
  let openGrant: string;
  let strictMessage: Json;
  let openMessage: Json;
  /** The id the removed attachment has in the copy that kept it. */
  let ledgerId: string;

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    receiver = await startReceiver();
    const policy = await service.nylas.policies.create({
      requestBody: { name: 'PDF only', limits: { limitAttachmentAllowedTypes: ['application/pdf'] } },
    });
    policyId = policy.data.id;
    await service.nylas.workspaces.create({ requestBody: { name: 'Strict', domain: STRICT_DOMAIN, policyId } });
    strictGrant = await createMailbox(service, STRICT);
    openGrant = await createMailbox(service, OPEN);
    await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl: receiver.url },
    });

    const transport = smtpClient(service.smtpPort);
    try {
      await transport.sendMail({
        from: 'Alice <alice@example.com>',
        to: [STRICT, OPEN],
        subject: 'Quarterly files',
        text: 'The quarterly report and the ledger are attached.',
        attachments: [
          { filename: 'report.pdf', content: PDF, contentType: 'application/pdf' },
          { filename: 'ledger.csv', content: LEDGER, contentType: 'text/csv' },
        ],
      });
    } finally {
      transport.close();
    }
    const only = async (grant: string) =>
      eventually(async () => (await service.nylas.messages.list({ identifier: grant })).data[0]);
    strictMessage = (
      await service.nylas.messages.find({ identifier: strictGrant, messageId: (await only(strictGrant)).id })
    ).data;
    openMessage = (await service.nylas.messages.find({ identifier: openGrant, messageId: (await only(openGrant)).id }))
      .data;
    ledgerId = openMessage.attachments.find((attachment: Json) => attachment.filename === 'ledger.csv').id;
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
  });

  const pdfOf = (message: Json) => message.attachments.find((attachment: Json) => attachment.filename === 'report.pdf');

  it('lists only the allowed attachment and names the removed one', () => {
    expect(openMessage.attachments.map((attachment: Json) => attachment.filename).sort()).toEqual([
      'ledger.csv',
      'report.pdf',
    ]);
    expect(strictMessage.attachments.map((attachment: Json) => attachment.filename)).toEqual(['report.pdf']);
    expect(strictMessage.removedAttachments).toEqual([
      {
        filename: 'ledger.csv',
        contentType: 'text/csv',
        size: LEDGER.length,
        reason: expect.stringContaining('limit_attachment_allowed_types'),
      },
    ]);
  });

  async function rawMime(grant: string, messageId: string): Promise<Buffer> {
    const { data } = await service.nylas.messages.find({
      identifier: grant,
      messageId,
      queryParams: { fields: 'raw_mime' as never },
    });
    return Buffer.from(data.rawMime!, 'base64url');
  }

  it('serves a raw_mime without it (a note in its place) through the nylas SDK; the allowed one byte for byte', async () => {
    const open = await rawMime(openGrant, openMessage.id);
    expect(open.toString('latin1')).toContain(LEDGER.toString('base64'));

    const raw = await rawMime(strictGrant, strictMessage.id);
    const text = raw.toString('latin1');
    expect(text).not.toContain(LEDGER.toString('base64'));
    expect(text).not.toContain(MARKER);
    const parsed = await simpleParser(raw);
    expect(parsed.attachments.map((attachment) => attachment.filename)).toEqual(['report.pdf']);
    expect(parsed.attachments[0]!.content.equals(PDF)).toBe(true);
    expect(parsed.text).toContain('The quarterly report and the ledger are attached.');
    expect(parsed.text).toContain(`removed here by the mailbox's policy ${policyId}`);
    expect(parsed.text).toContain(`"ledger.csv" (text/csv, ${LEDGER.length} bytes): type not allowed`);
    // The header section is the one received, with our Authentication-Results first.
    expect(text.startsWith('Authentication-Results:')).toBe(true);
    expect(text).toContain('Subject: Quarterly files');
  });

  it('answers 404 for the removed attachment by its id on /download, and the allowed bytes exactly', async () => {
    const pdf = await service.nylas.attachments.downloadBytes({
      identifier: strictGrant,
      attachmentId: pdfOf(strictMessage).id,
      queryParams: { messageId: strictMessage.id },
    });
    expect(Buffer.compare(pdf, PDF)).toBe(0);
    const control = await service.nylas.attachments.downloadBytes({
      identifier: openGrant,
      attachmentId: ledgerId,
      queryParams: { messageId: openMessage.id },
    });
    expect(Buffer.compare(control, LEDGER)).toBe(0);
    const refused = await service.nylas.attachments
      .downloadBytes({ identifier: strictGrant, attachmentId: ledgerId, queryParams: { messageId: strictMessage.id } })
      .then(
        () => undefined,
        (error: unknown) => error as { statusCode?: number },
      );
    expect(refused?.statusCode).toBe(404);
  });

  it('finds nothing of it by search', async () => {
    const search = async (grant: string, query: string) =>
      (await service.nylas.messages.list({ identifier: grant, queryParams: { searchQueryNative: query } })).data;
    expect((await search(strictGrant, 'quarterly')).map((message) => message.id)).toEqual([strictMessage.id]);
    expect(await search(strictGrant, MARKER)).toEqual([]);
    expect(await search(strictGrant, 'csv')).toEqual([]);
  });

  it('leaves it out of the MCP tools over Streamable HTTP and of the AI SDK tools', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp?grant_id=${strictGrant}`), {
      requestInit: { headers: { authorization: `Bearer ${service.apiKey}` } },
    });
    const client = new Client({ name: 'policy-paths', version: '1.0.0' });
    await client.connect(transport);
    try {
      const text = (result: Json) =>
        (result.content as { type: string; text?: string }[]).map((item) => item.text ?? '').join('\n');
      const message = await client.callTool({ name: 'get_message', arguments: { message_id: strictMessage.id } });
      expect(message.isError).toBeFalsy();
      const attachments = (message.structuredContent as { attachments: Json[] }).attachments;
      // File names are text from outside, fenced as data for the agent.
      expect(attachments).toHaveLength(1);
      expect(attachments[0]!.filename).toContain('report.pdf');
      expect(JSON.stringify(message)).not.toContain(ledgerId);
      expect(JSON.stringify(message)).not.toContain(MARKER);

      // The agent tools offer no raw MIME (get_message omits `fields`): a crafted fields=raw_mime reads as a plain get.
      const raw = await client.callTool({
        name: 'get_message',
        arguments: { message_id: strictMessage.id, fields: 'raw_mime' },
      });
      expect((raw.structuredContent as { raw_mime?: string }).raw_mime).toBeUndefined();
      expect(JSON.stringify(raw)).not.toContain(MARKER);
      const resource = await client.readResource({
        uri: `agentpost://grants/${strictGrant}/messages/${strictMessage.id}`,
      });
      expect(JSON.stringify(resource)).toContain('report.pdf');
      expect(JSON.stringify(resource)).not.toContain(ledgerId);
      expect(JSON.stringify(resource)).not.toContain(MARKER);

      for (const name of ['get_attachment', 'read_attachment']) {
        const removed = await client.callTool({
          name,
          arguments: { message_id: strictMessage.id, attachment_id: ledgerId },
        });
        expect(removed.isError, name).toBe(true);
        expect(text(removed), name).toContain('not_found');
        expect(text(removed), name).not.toContain(MARKER);
      }
      const allowed = await client.callTool({
        name: 'get_attachment',
        arguments: { message_id: strictMessage.id, attachment_id: pdfOf(strictMessage).id },
      });
      const content = (allowed.structuredContent as { content: { encoding: string; data: string } }).content;
      expect(Buffer.compare(Buffer.from(content.data, content.encoding as BufferEncoding), PDF)).toBe(0);
    } finally {
      await client.close();
    }

    const principal = {
      applicationId: await service.core.accounts.applications.defaultApplicationId(),
      via: 'local' as const,
    };
    const run = async (grantId: string, name: string, input: Json) => {
      const tools = createAgentpostTools({ core: service.core, principal, grantId });
      const execute = tools[name]!.execute as unknown as (input: Json, options: Json) => Promise<unknown>;
      return execute(input, { toolCallId: 'call-1', messages: [] }).then(
        (result) => ({ ok: true, text: JSON.stringify(result) }),
        (error: unknown) => ({ ok: false, text: String(error) }),
      );
    };
    // The copy that kept it: read_attachment gives its text.
    const control = await run(openGrant, 'read_attachment', { message_id: openMessage.id, attachment_id: ledgerId });
    expect(control).toMatchObject({ ok: true });
    expect(control.text).toContain(MARKER);
    for (const name of ['get_attachment', 'read_attachment']) {
      const removed = await run(strictGrant, name, { message_id: strictMessage.id, attachment_id: ledgerId });
      expect(removed.ok, name).toBe(false);
      expect(removed.text, name).toMatch(/not.found/i);
    }
    const message = await run(strictGrant, 'get_message', { message_id: strictMessage.id });
    expect(message.ok).toBe(true);
    expect(message.text).toContain('report.pdf');
    expect(message.text).not.toContain(ledgerId);
    expect(message.text).not.toContain(MARKER);
  });

  it('sends a message.created without it', async () => {
    const deliveries: ReceivedDelivery[] = await receiver.waitForDeliveries(2, 15_000);
    const of = (grant: string) => deliveries.find((delivery) => delivery.json?.data?.object?.grant_id === grant)!;
    const strict = of(strictGrant).json.data.object as Json;
    expect(strict.id).toBe(strictMessage.id);
    expect(strict.attachments.map((attachment: Json) => attachment.filename)).toEqual(['report.pdf']);
    expect(strict.removed_attachments).toEqual([expect.objectContaining({ filename: 'ledger.csv' })]);
    expect(of(strictGrant).body.toString()).not.toContain(MARKER);
    expect(of(strictGrant).body.toString()).not.toContain(ledgerId);
    const open = of(openGrant).json.data.object as Json;
    expect(open.attachments.map((attachment: Json) => attachment.filename).sort()).toEqual([
      'ledger.csv',
      'report.pdf',
    ]);
  });
});
