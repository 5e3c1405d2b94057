/**
 * Hosted mail in, end to end: a real SMTP client (nodemailer, pooled) delivers to the real listener on loopback,
 * and the official nylas SDK reads, filters, pages, updates and deletes what arrived.
 */
import { NylasApiError, type Message } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { request } from '../helpers/http.js';
import { asReceived, createMailbox, sendRaw, smtpClient } from '../helpers/mail.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';

const DOMAIN = 'inbound.agentpost.localhost';

async function statusOf(call: Promise<unknown>): Promise<number> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(NylasApiError);
  return (error as NylasApiError).statusCode ?? 0;
}

/** Every page of a message list, `limit` at a time; `between` runs after each page. */
async function allPages(
  nylas: Nylas,
  grantId: string,
  limit: number,
  between: (page: number) => Promise<void> = async () => undefined,
) {
  const seen: Message[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < 50; page++) {
    const result = await nylas.messages.list({
      identifier: grantId,
      queryParams: { limit, ...(pageToken ? { pageToken } : {}) },
    });
    expect(result.data.length).toBeLessThanOrEqual(limit);
    seen.push(...result.data);
    await between(page);
    pageToken = result.nextCursor ?? undefined;
    if (!pageToken) break;
  }
  return seen;
}

describe('hosted mail in', () => {
  let service: TestService;
  let transport: ReturnType<typeof smtpClient>;

  beforeAll(async () => {
    service = await startTestService();
    transport = smtpClient(service.smtpPort);
  });
  afterAll(async () => {
    transport?.close();
    await service?.close();
  });

  it('stores a message with attachments and serves it, its thread, its folder counts and its attachment bytes', async () => {
    const email = `reader@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    const pdf = Buffer.from(Array.from({ length: 3000 }, (_, index) => (index * 7) % 256));
    const logo = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const info = await transport.sendMail({
      from: '"Alice Example" <alice@example.com>',
      to: `Reader <${email}>`,
      cc: 'bob@example.org',
      subject: 'Quarterly report ✓',
      text: 'Please find the report attached.',
      html: '<p>Please find the <b>report</b> attached.</p><img src="cid:logo@example.com">',
      attachments: [
        { filename: 'report.pdf', content: pdf, contentType: 'application/pdf' },
        { filename: 'logo.png', content: logo, contentType: 'image/png', cid: 'logo@example.com' },
      ],
    });
    expect(info.response).toMatch(/^250 /);

    const listed = await service.nylas.messages.list({ identifier: grantId });
    expect(listed.data).toHaveLength(1);
    const message = (await service.nylas.messages.find({ identifier: grantId, messageId: listed.data[0]!.id })).data;
    expect(message).toMatchObject({
      grantId,
      object: 'message',
      subject: 'Quarterly report ✓',
      from: [{ name: 'Alice Example', email: 'alice@example.com' }],
      to: [{ name: 'Reader', email }],
      cc: [{ email: 'bob@example.org' }],
      folders: ['inbox'],
      unread: true,
      starred: false,
      snippet: 'Please find the report attached.',
    });
    expect(message.body).toContain('<b>report</b>');
    expect(message.body).toContain('cid:logo@example.com');
    expect(message.threadId).toBeTruthy();
    expect(message.attachments).toHaveLength(2);
    const report = message.attachments!.find((attachment) => attachment.filename === 'report.pdf')!;
    expect(report).toMatchObject({
      contentType: 'application/pdf',
      size: pdf.length,
      isInline: false,
      contentDisposition: 'attachment',
      grantId,
    });
    const image = message.attachments!.find((attachment) => attachment.filename === 'logo.png')!;
    expect(image).toMatchObject({ contentType: 'image/png', isInline: true, contentId: '<logo@example.com>' });

    const metadata = await service.nylas.attachments.find({
      identifier: grantId,
      attachmentId: report.id,
      queryParams: { messageId: message.id },
    });
    expect(metadata.data).toMatchObject({
      id: report.id,
      filename: 'report.pdf',
      contentType: 'application/pdf',
      size: pdf.length,
    });
    const bytes = await service.nylas.attachments.downloadBytes({
      identifier: grantId,
      attachmentId: report.id,
      queryParams: { messageId: message.id },
    });
    expect(Buffer.compare(bytes, pdf)).toBe(0);
    const download = await fetch(
      `${service.url}/v3/grants/${grantId}/attachments/${report.id}/download?message_id=${message.id}`,
      { headers: { authorization: `Bearer ${service.apiKey}` } },
    );
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('content-disposition')).toBe(
      `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
    );
    expect(download.headers.get('content-length')).toBe(String(pdf.length));
    const inline = await fetch(
      `${service.url}/v3/grants/${grantId}/attachments/${image.id}/download?message_id=${message.id}`,
      { headers: { authorization: `Bearer ${service.apiKey}` } },
    );
    expect(inline.headers.get('content-disposition')).toMatch(/^inline; filename="logo.png"/);
    expect(Buffer.compare(Buffer.from(await inline.arrayBuffer()), logo)).toBe(0);

    const thread = (await service.nylas.threads.find({ identifier: grantId, threadId: message.threadId! })).data;
    expect(thread).toMatchObject({
      id: message.threadId,
      object: 'thread',
      subject: 'Quarterly report ✓',
      messageIds: [message.id],
      draftIds: [],
      folders: ['inbox'],
      hasAttachments: true,
      hasDrafts: false,
      unread: true,
      starred: false,
      earliestMessageDate: message.date,
      latestMessageReceivedDate: message.date,
    });
    expect(thread.participants.map((participant) => participant.email).sort()).toEqual([
      'alice@example.com',
      'bob@example.org',
      email,
    ]);
    expect(thread.latestDraftOrMessage.id).toBe(message.id);

    const inbox = (await service.nylas.folders.find({ identifier: grantId, folderId: 'inbox' })).data;
    expect(inbox).toMatchObject({ totalCount: 1, unreadCount: 1 });

    // The same transaction recorded the webhook event.
    const events = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(eq(tables.outboxEvents.objectId, message.id));
    expect(events.map((event) => event.type)).toEqual(['message.created']);
    expect((events[0]!.payload as { subject: string }).subject).toBe('Quarterly report ✓');
  });

  it('threads replies written by a mail client by In-Reply-To and References, in any arrival order', async () => {
    const email = `threads@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    const rootId = '<root-1@client.example>';
    await transport.sendMail({
      from: 'carol@example.com',
      to: email,
      subject: 'Lunch?',
      text: 'Shall we?',
      messageId: rootId,
    });
    // A reply as a mail client writes it: Re: subject, In-Reply-To and References.
    await transport.sendMail({
      from: email,
      to: 'carol@example.com, ' + email,
      subject: 'Re: Lunch?',
      text: 'Yes!',
      messageId: '<reply-1@client.example>',
      inReplyTo: rootId,
      references: [rootId],
    });
    // Third message names only the whole chain in References.
    await transport.sendMail({
      from: 'dave@example.com',
      to: email,
      subject: 'Re: Lunch?',
      text: 'Me too',
      messageId: '<reply-2@client.example>',
      references: [rootId, '<reply-1@client.example>'],
    });
    // Unrelated message: its own thread.
    await transport.sendMail({
      from: 'erin@example.com',
      to: email,
      subject: 'Lunch?',
      text: 'Different conversation',
    });
    // Out of order: the reply arrives before the message it answers; the late original joins its thread.
    await transport.sendMail({
      from: 'frank@example.com',
      to: email,
      subject: 'Re: Plans',
      text: 'Agreed',
      messageId: '<late-reply@client.example>',
      inReplyTo: '<late-root@client.example>',
      references: ['<late-root@client.example>'],
    });
    await transport.sendMail({
      from: email,
      to: 'frank@example.com, ' + email,
      subject: 'Plans',
      text: 'Here are the plans',
      messageId: '<late-root@client.example>',
    });

    const messages = (await service.nylas.messages.list({ identifier: grantId, queryParams: { limit: 50 } })).data;
    const bySnippet = new Map(messages.map((message) => [message.snippet, message]));
    const lunch = bySnippet.get('Shall we?')!.threadId;
    expect(bySnippet.get('Yes!')!.threadId).toBe(lunch);
    expect(bySnippet.get('Me too')!.threadId).toBe(lunch);
    expect(bySnippet.get('Different conversation')!.threadId).not.toBe(lunch);
    expect(bySnippet.get('Here are the plans')!.threadId).toBe(bySnippet.get('Agreed')!.threadId);

    const thread = (await service.nylas.threads.find({ identifier: grantId, threadId: lunch! })).data;
    expect(thread.messageIds).toEqual([
      bySnippet.get('Shall we?')!.id,
      bySnippet.get('Yes!')!.id,
      bySnippet.get('Me too')!.id,
    ]);
    expect(thread.subject).toBe('Lunch?');
    expect(thread.snippet).toBe('Me too');
    expect(thread.latestDraftOrMessage.id).toBe(bySnippet.get('Me too')!.id);
    expect(thread.participants.map((participant) => participant.email).sort()).toEqual([
      'carol@example.com',
      'dave@example.com',
      email,
    ]);

    const threads = (await service.nylas.threads.list({ identifier: grantId })).data;
    expect(threads).toHaveLength(3);
    // Newest activity first: the late pair's thread got the last message.
    expect(threads[0]!.messageIds).toHaveLength(2);
    expect(threads.find((entry) => entry.id === lunch)!.messageIds).toHaveLength(3);
    const filtered = (
      await service.nylas.threads.list({ identifier: grantId, queryParams: { from: ['dave@example.com'] } })
    ).data;
    expect(filtered.map((entry) => entry.id)).toEqual([lunch]);
  });

  it('pages with limit 3 over 7 messages, every message seen once while new mail arrives between pages', async () => {
    const email = `pages@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    for (let index = 1; index <= 7; index++)
      await transport.sendMail({
        from: 'sender@example.com',
        to: email,
        subject: `Page message ${index}`,
        text: `number ${index}`,
      });
    const seen = await allPages(service.nylas, grantId, 3, async (page) => {
      // Mail keeps arriving while the client pages.
      await transport.sendMail({
        from: 'late@example.com',
        to: email,
        subject: `Arrived during page ${page}`,
        text: 'late',
      });
    });
    const original = seen.filter((message) => message.subject?.startsWith('Page message'));
    expect(original.map((message) => message.subject).sort()).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((index) => `Page message ${index}`),
    );
    expect(new Set(seen.map((message) => message.id)).size).toBe(seen.length);
    // Newest first.
    expect(original.map((message) => message.subject)).toEqual(
      [7, 6, 5, 4, 3, 2, 1].map((index) => `Page message ${index}`),
    );

    // Threads page the same way.
    const threadIds: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await service.nylas.threads.list({
        identifier: grantId,
        queryParams: { limit: 4, ...(pageToken ? { pageToken } : {}) },
      });
      threadIds.push(...page.data.map((thread) => thread.id));
      pageToken = page.nextCursor ?? undefined;
    } while (pageToken);
    expect(new Set(threadIds).size).toBe(threadIds.length);
    expect(threadIds.length).toBe(
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { limit: 200 } })).data.length,
    );

    const bad = await request(service.url, 'GET', `/v3/grants/${grantId}/messages?page_token=not-a-cursor`, {
      key: service.apiKey,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('page_token');
    const tooMany = await request(service.url, 'GET', `/v3/grants/${grantId}/messages?limit=201`, {
      key: service.apiKey,
    });
    expect(tooMany.status).toBe(400);
  });

  it('filters with the Nylas query parameters and searches subject, body and addresses', async () => {
    const email = `filters@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    await transport.sendMail({
      from: 'Grace Hopper <grace@navy.example>',
      to: email,
      cc: 'cc-person@example.net',
      subject: 'Compiler design notes',
      text: 'The first bug was a moth found in a relay.',
    });
    await transport.sendMail({
      from: 'alan@bletchley.example',
      to: email,
      subject: 'Enigma schedule',
      text: 'Bombe machines run tonight.',
      attachments: [{ filename: 'plan.txt', content: 'x' }],
    });
    await transport.sendMail({
      from: 'ada@engine.example',
      to: [email, 'charles@engine.example'],
      subject: 'Analytical engine',
      text: 'Notes on the\n\t  engine by Ada.',
    });
    const all = (await service.nylas.messages.list({ identifier: grantId })).data;
    const ids = (query: Record<string, unknown>) =>
      service.nylas.messages
        .list({ identifier: grantId, queryParams: query })
        .then((result) => result.data.map((message) => message.subject).sort());

    expect(await ids({ subject: 'enigma' })).toEqual(['Enigma schedule']);
    expect(await ids({ from: ['GRACE@navy.example'] })).toEqual(['Compiler design notes']);
    expect(await ids({ to: ['charles@engine.example'] })).toEqual(['Analytical engine']);
    expect(await ids({ cc: ['cc-person@example.net'] })).toEqual(['Compiler design notes']);
    expect(await ids({ anyEmail: ['cc-person@example.net', 'alan@bletchley.example'] })).toEqual([
      'Compiler design notes',
      'Enigma schedule',
    ]);
    expect(await ids({ hasAttachment: true })).toEqual(['Enigma schedule']);
    expect(await ids({ hasAttachment: false })).toHaveLength(2);
    expect(await ids({ in: ['inbox'] })).toHaveLength(3);
    expect(await ids({ in: ['trash'] })).toEqual([]);
    expect(await ids({ threadId: all[0]!.threadId })).toEqual([all[0]!.subject]);
    expect(await ids({ receivedAfter: all[0]!.date - 3600, receivedBefore: all[0]!.date + 3600 })).toHaveLength(3);
    expect(await ids({ receivedBefore: all[0]!.date - 3600 })).toEqual([]);

    // Full-text search: a body word, a subject word, an address, a phrase, a prefix, a field, OR, nothing.
    expect(await ids({ searchQueryNative: 'moth' })).toEqual(['Compiler design notes']);
    expect(await ids({ searchQueryNative: 'enigma' })).toEqual(['Enigma schedule']);
    expect(await ids({ searchQueryNative: 'alan@bletchley.example' })).toEqual(['Enigma schedule']);
    // A phrase across a line break and a tab: the search text keeps the body's whitespace, the snippet collapses it.
    expect(await ids({ searchQueryNative: '"notes on the engine"' })).toEqual(['Analytical engine']);
    expect(all.find((message) => message.subject === 'Analytical engine')!.snippet).toBe('Notes on the engine by Ada.');
    expect(await ids({ searchQueryNative: 'comp*' })).toEqual(['Compiler design notes']);
    expect(await ids({ searchQueryNative: 'subject:notes' })).toEqual(['Compiler design notes']);
    expect(await ids({ searchQueryNative: 'moth OR bombe' })).toEqual(['Compiler design notes', 'Enigma schedule']);
    expect(await ids({ searchQueryNative: 'engine ada' })).toEqual(['Analytical engine']);
    expect(await ids({ searchQueryNative: 'nonexistentword' })).toEqual([]);
    // Operators and punctuation in a query are literal, never an FTS syntax error.
    expect(await ids({ searchQueryNative: 'NEAR( "unbalanced * ^ -' })).toEqual([]);
    // Search combines with other filters.
    expect(await ids({ searchQueryNative: 'notes', from: ['ada@engine.example'] })).toEqual(['Analytical engine']);

    // fields=include_headers, select.
    const withHeaders = await service.nylas.messages.find({
      identifier: grantId,
      messageId: all[0]!.id,
      queryParams: { fields: 'include_headers' as never },
    });
    expect(withHeaders.data.headers!.find((header) => header.name.toLowerCase() === 'subject')?.value).toBe(
      all[0]!.subject,
    );
    const selected = await request(service.url, 'GET', `/v3/grants/${grantId}/messages?select=id,subject&limit=1`, {
      key: service.apiKey,
    });
    expect(Object.keys(selected.body.data[0]).sort()).toEqual(['grant_id', 'id', 'object', 'subject']);

    const threads = await service.nylas.threads.list({
      identifier: grantId,
      queryParams: { searchQueryNative: 'bombe' },
    });
    expect(threads.data.map((thread) => thread.subject)).toEqual(['Enigma schedule']);
    const inbox = await service.nylas.threads.list({
      identifier: grantId,
      queryParams: { in: ['inbox'], hasAttachment: true },
    });
    expect(inbox.data.map((thread) => thread.subject)).toEqual(['Enigma schedule']);
  });

  it('returns the raw MIME exactly as received with fields=raw_mime, and stores malformed MIME without failing', async () => {
    const email = `raw@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    const raw = [
      'From: Odd Sender <odd@example.com>',
      `To: ${email}`,
      'Subject: broken multipart',
      'Message-ID: <broken-1@example.com>',
      'Content-Type: multipart/mixed; boundary="never-closed"',
      'Content-Transfer-Encoding: base64',
      '',
      '--never-closed',
      'Content-Type: text/plain; charset=no-such-charset',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'bad qp =ZZ =',
      '--never-closed',
      'Content-Type: application/octet-stream',
      'Content-Transfer-Encoding: base64',
      '',
      '!!!! not base64 at all ~~~~',
      '',
    ].join('\r\n');
    const reply = await sendRaw(service.smtpPort, 'odd@example.com', [email], raw);
    expect(reply.code).toBe(250);
    const garbage = Buffer.from([0xff, 0xfe, 0x00, 0x0d, 0x0a, 0x80, 0x81, 0x0d, 0x0a, 0x3a, 0x3a, 0x0d, 0x0a]);
    expect((await sendRaw(service.smtpPort, '', [email], garbage)).code).toBe(250);

    const listed = (
      await service.nylas.messages.list({ identifier: grantId, queryParams: { fields: 'raw_mime' as never } })
    ).data;
    expect(listed).toHaveLength(2);
    for (const message of listed) expect(Object.keys(message).sort()).toEqual(['grantId', 'id', 'object', 'rawMime']);
    const broken = (await service.nylas.messages.list({ identifier: grantId, queryParams: { subject: 'broken' } }))
      .data[0]!;
    expect(broken.from).toEqual([{ name: 'Odd Sender', email: 'odd@example.com' }]);
    const rawMime = (
      await service.nylas.messages.find({
        identifier: grantId,
        messageId: broken.id,
        queryParams: { fields: 'raw_mime' as never },
      })
    ).data.rawMime!;
    // Exactly as received, after the Authentication-Results field the service adds in front.
    expect(asReceived(Buffer.from(rawMime, 'base64url')).toString('latin1')).toBe(raw);
    const other = (await service.nylas.messages.list({ identifier: grantId })).data.find(
      (message) => message.id !== broken.id,
    )!;
    const otherRaw = (
      await service.nylas.messages.find({
        identifier: grantId,
        messageId: other.id,
        queryParams: { fields: 'raw_mime' as never },
      })
    ).data.rawMime!;
    expect(Buffer.compare(asReceived(Buffer.from(otherRaw, 'base64url')), garbage)).toBe(0);
  });

  it('updates read, starred and folders (folder counts follow), moves to trash on delete and deletes from trash for good', async () => {
    const email = `updates@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    await transport.sendMail({
      from: 'x@example.com',
      to: email,
      subject: 'First',
      text: 'one',
      messageId: '<u1@example.com>',
      attachments: [{ filename: 'a.txt', content: 'attached' }],
    });
    await transport.sendMail({
      from: 'y@example.com',
      to: email,
      subject: 'Re: First',
      text: 'two',
      inReplyTo: '<u1@example.com>',
    });
    const [second, first] = (await service.nylas.messages.list({ identifier: grantId })).data;
    const counts = async (folderId: string) => {
      const folder = (await service.nylas.folders.find({ identifier: grantId, folderId })).data;
      return [folder.totalCount, folder.unreadCount];
    };
    expect(await counts('inbox')).toEqual([2, 2]);

    const read = await service.nylas.messages.update({
      identifier: grantId,
      messageId: first!.id,
      requestBody: { unread: false, starred: true },
    });
    expect(read.data).toMatchObject({ unread: false, starred: true });
    expect(await counts('inbox')).toEqual([2, 1]);
    expect(
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { unread: true } })).data.map(
        (message) => message.id,
      ),
    ).toEqual([second!.id]);
    expect(
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { starred: true } })).data.map(
        (message) => message.id,
      ),
    ).toEqual([first!.id]);
    const thread = (await service.nylas.threads.find({ identifier: grantId, threadId: first!.threadId! })).data;
    expect(thread).toMatchObject({ unread: true, starred: true, messageIds: [first!.id, second!.id] });

    const custom = (await service.nylas.folders.create({ identifier: grantId, requestBody: { name: 'Receipts' } }))
      .data;
    const moved = await service.nylas.messages.update({
      identifier: grantId,
      messageId: first!.id,
      requestBody: { folders: [custom.id, 'archive'] },
    });
    expect(moved.data.folders).toEqual([custom.id, 'archive']);
    expect(await counts('inbox')).toEqual([1, 1]);
    expect(await counts(custom.id)).toEqual([1, 0]);
    expect(
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { in: ['Receipts'] } })).data.map(
        (message) => message.id,
      ),
    ).toEqual([first!.id]);
    expect(
      await statusOf(
        service.nylas.messages.update({
          identifier: grantId,
          messageId: first!.id,
          requestBody: { folders: ['no-such-folder'] },
        }),
      ),
    ).toBe(400);
    expect(
      await statusOf(
        service.nylas.messages.update({
          identifier: grantId,
          messageId: 'no-such-message',
          requestBody: { unread: false },
        }),
      ),
    ).toBe(404);

    // Thread updates reach every message.
    const updatedThread = await service.nylas.threads.update({
      identifier: grantId,
      threadId: first!.threadId!,
      requestBody: { unread: false, starred: false },
    });
    expect(updatedThread.data).toMatchObject({ unread: false, starred: false });
    expect(await counts('inbox')).toEqual([1, 0]);

    // Delete: to trash first, then for good (attachment bytes go with it).
    const attachmentId = (await service.nylas.messages.find({ identifier: grantId, messageId: first!.id })).data
      .attachments![0]!.id;
    await service.nylas.messages.destroy({ identifier: grantId, messageId: first!.id });
    const trashed = (await service.nylas.messages.find({ identifier: grantId, messageId: first!.id })).data;
    expect(trashed.folders).toEqual(['trash']);
    expect(await counts('trash')).toEqual([1, 0]);
    await service.nylas.messages.destroy({ identifier: grantId, messageId: first!.id });
    expect(await statusOf(service.nylas.messages.find({ identifier: grantId, messageId: first!.id }))).toBe(404);
    // Every change recorded its webhook event: created, read+starred, moved, thread update, trashed, deleted.
    const events = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(eq(tables.outboxEvents.objectId, first!.id))
      .orderBy(tables.outboxEvents.seq);
    expect(events.map((event) => event.type)).toEqual([
      'message.created',
      'message.updated',
      'message.updated',
      'message.updated',
      'message.updated',
      'message.deleted',
    ]);
    expect(
      await statusOf(
        service.nylas.attachments.find({ identifier: grantId, attachmentId, queryParams: { messageId: first!.id } }),
      ),
    ).toBe(404);
    expect(await counts('trash')).toEqual([0, 0]);
    expect(
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { searchQueryNative: 'one' } })).data,
    ).toEqual([]);
    expect(
      (await service.nylas.threads.find({ identifier: grantId, threadId: first!.threadId! })).data.messageIds,
    ).toEqual([second!.id]);

    // Thread delete: to trash, then for good; the thread disappears with its last message.
    await service.nylas.threads.destroy({ identifier: grantId, threadId: second!.threadId! });
    expect((await service.nylas.messages.find({ identifier: grantId, messageId: second!.id })).data.folders).toEqual([
      'trash',
    ]);
    await service.nylas.threads.destroy({ identifier: grantId, threadId: second!.threadId! });
    expect(await statusOf(service.nylas.threads.find({ identifier: grantId, threadId: second!.threadId! }))).toBe(404);
    expect((await service.nylas.messages.list({ identifier: grantId })).data).toEqual([]);
  });

  it('requires message_id for attachments (400) and hides every object from another application (404)', async () => {
    const email = `private@${DOMAIN}`;
    const grantId = await createMailbox(service, email);
    await transport.sendMail({
      from: 'x@example.com',
      to: email,
      subject: 'Secret',
      text: 'hidden',
      attachments: [{ filename: 's.txt', content: 'secret bytes' }],
    });
    const message = (await service.nylas.messages.list({ identifier: grantId })).data[0]!;
    const attachmentId = message.attachments![0]!.id;

    const noMessageId = await request(service.url, 'GET', `/v3/grants/${grantId}/attachments/${attachmentId}`, {
      key: service.apiKey,
    });
    expect(noMessageId.status).toBe(400);
    expect(noMessageId.body.error.message).toContain('message_id');
    const noMessageIdDownload = await request(
      service.url,
      'GET',
      `/v3/grants/${grantId}/attachments/${attachmentId}/download`,
      { key: service.apiKey },
    );
    expect(noMessageIdDownload.status).toBe(400);
    expect(noMessageIdDownload.body.error.type).toBe('invalid_request_error');
    const wrongMessage = await request(
      service.url,
      'GET',
      `/v3/grants/${grantId}/attachments/${attachmentId}/download?message_id=other`,
      { key: service.apiKey },
    );
    expect(wrongMessage.status).toBe(404);

    const { apiKey } = await service.core.accounts.applications.createApplication({ name: 'Intruder', plan: 'trial' });
    const intruder = service.client(apiKey);
    expect(await statusOf(intruder.messages.list({ identifier: grantId }))).toBe(404);
    expect(await statusOf(intruder.messages.find({ identifier: grantId, messageId: message.id }))).toBe(404);
    expect(
      await statusOf(
        intruder.messages.update({ identifier: grantId, messageId: message.id, requestBody: { unread: false } }),
      ),
    ).toBe(404);
    expect(await statusOf(intruder.messages.destroy({ identifier: grantId, messageId: message.id }))).toBe(404);
    expect(await statusOf(intruder.threads.find({ identifier: grantId, threadId: message.threadId! }))).toBe(404);
    expect(
      await statusOf(
        intruder.attachments.find({ identifier: grantId, attachmentId, queryParams: { messageId: message.id } }),
      ),
    ).toBe(404);
    const stolen = await request(
      service.url,
      'GET',
      `/v3/grants/${grantId}/attachments/${attachmentId}/download?message_id=${message.id}`,
      { key: apiKey },
    );
    expect(stolen.status).toBe(404);
    expect(stolen.text).not.toContain('secret bytes');
    // Nothing changed for the owner.
    expect((await service.nylas.messages.find({ identifier: grantId, messageId: message.id })).data).toMatchObject({
      unread: true,
      folders: ['inbox'],
    });
  });

  it('delivers locally through deliverInbound: one copy per hosted mailbox in one call, unknown recipients reported', async () => {
    const first = `local-a@${DOMAIN}`;
    const second = `local-b@${DOMAIN}`;
    const firstId = await createMailbox(service, first);
    const secondId = await createMailbox(service, second);
    const raw = `From: sender@${DOMAIN}\r\nTo: ${first}, ${second}\r\nSubject: Local delivery\r\nMessage-ID: <local-1@${DOMAIN}>\r\n\r\nDelivered without SMTP.\r\n`;
    const result = await service.core.mail.inbound.deliverInbound({
      rawMime: raw,
      envelope: {
        mailFrom: `sender@${DOMAIN}`,
        rcptTo: [first, second.toUpperCase(), `nobody@${DOMAIN}`, `local-a+tag@${DOMAIN}`],
      },
    });
    expect(result.deliveries.map((delivery) => delivery.grantId).sort()).toEqual([firstId, secondId].sort());
    expect(result.rejected).toEqual([
      { recipient: `nobody@${DOMAIN}`, reason: expect.stringContaining('Unknown mailbox') },
    ]);
    for (const grantId of [firstId, secondId]) {
      const messages = (await service.nylas.messages.list({ identifier: grantId })).data;
      expect(messages.map((message) => message.subject)).toEqual(['Local delivery']);
    }
    await expect(
      service.core.mail.inbound.deliverInbound({
        rawMime: raw,
        envelope: { mailFrom: '', rcptTo: ['someone@elsewhere.example'] },
      }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });
});
