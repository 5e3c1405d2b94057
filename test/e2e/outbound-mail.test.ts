/**
 * Hosted mail out, end to end through the official nylas SDK: two Agent Accounts converse (local delivery
 * through the inbound path), mail to other domains goes through a relay (a real SMTP server on loopback) with
 * the right headers and MIME, a relay that is down is retried until it is back, a 550 is a bounce at once,
 * drafts are written and sent, and scheduled sends run from the queue. Time is a controlled clock; the
 * background worker is woken instead of waiting.
 */
import { simpleParser } from 'mailparser';
import { and, eq } from 'drizzle-orm';
import { NylasApiError } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { fixedClock } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const DOMAIN = 'talk.agentpost.localhost';
const ALICE = `alice@${DOMAIN}`;
const BOB = `bob@${DOMAIN}`;

async function statusOf(call: Promise<unknown>): Promise<number> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(NylasApiError);
  return (error as NylasApiError).statusCode ?? 0;
}

describe('hosted mail out', () => {
  const clock = fixedClock('2026-05-04T09:00:00Z');
  let service: TestService;
  let sink: SmtpSink;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}` },
      deps: { clock },
    });
    alice = await createMailbox(service, ALICE);
    bob = await createMailbox(service, BOB);
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  /** The outbound recipients rows of a sent message. */
  async function deliveryOf(messageId: string) {
    const message = await service.nylas.messages.find({ identifier: alice, messageId });
    return (
      (
        message.data as unknown as {
          deliveryStatus?: { email: string; status: string; code?: number; response?: string }[];
        }
      ).deliveryStatus ?? []
    );
  }

  it('two Agent Accounts converse: A sends with an attachment, B reads and replies, A sees one thread', async () => {
    const { nylas } = service;
    const notes = Buffer.from('line one\nline two\n');
    const sent = await nylas.messages.send({
      identifier: alice,
      requestBody: {
        to: [{ name: 'Bob', email: BOB }],
        subject: 'Plans for Monday',
        body: '<p>Hello <b>Bob</b>, the notes are attached.</p>',
        attachments: [{ filename: 'notes.txt', contentType: 'text/plain', content: notes.toString('base64') }],
      },
    });
    expect(sent.data.folders).toEqual(['sent']);
    expect(sent.data.from).toEqual([{ email: ALICE }]);
    expect(sent.data.attachments?.map((attachment) => attachment.filename)).toEqual(['notes.txt']);

    // Local delivery happened before the send returned.
    const inbox = await nylas.messages.list({ identifier: bob, queryParams: { in: ['inbox'] } });
    expect(inbox.data).toHaveLength(1);
    const received = inbox.data[0]!;
    expect(received.subject).toBe('Plans for Monday');
    expect(received.from).toEqual([{ email: ALICE }]);
    expect(received.to).toEqual([{ name: 'Bob', email: BOB }]);
    expect(received.body).toContain('<b>Bob</b>');
    const attachment = received.attachments!.find((item) => item.filename === 'notes.txt')!;
    const download = await request(
      service.url,
      'GET',
      `/v3/grants/${bob}/attachments/${attachment.id}/download?message_id=${received.id}`,
      { key: service.apiKey },
    );
    expect(download.text).toBe(notes.toString());
    expect((await deliveryOf(sent.data.id)).map(({ email, status }) => ({ email, status }))).toEqual([
      { email: BOB, status: 'delivered' },
    ]);

    const bobThread = await nylas.threads.find({ identifier: bob, threadId: received.threadId! });
    expect(bobThread.data.messageIds).toEqual([received.id]);

    const reply = await nylas.messages.send({
      identifier: bob,
      requestBody: { to: [{ email: ALICE }], body: 'Monday works.', replyToMessageId: received.id },
    });
    expect(reply.data.subject).toBe('Re: Plans for Monday');
    expect(reply.data.threadId).toBe(received.threadId);

    const threads = await nylas.threads.list({ identifier: alice });
    expect(threads.data).toHaveLength(1);
    const [thread] = threads.data;
    expect(thread!.id).toBe(sent.data.threadId);
    expect(thread!.messageIds).toHaveLength(2);
    expect(thread!.messageIds[0]).toBe(sent.data.id);
    const answer = await nylas.messages.find({ identifier: alice, messageId: thread!.messageIds[1]! });
    expect(answer.data.from).toEqual([{ email: BOB }]);
    expect(answer.data.folders).toEqual(['inbox']);
    expect(answer.data.body).toContain('Monday works.');

    // Bob's view: his reply is in the same thread as Alice's message.
    const bobThreadAfter = await nylas.threads.find({ identifier: bob, threadId: received.threadId! });
    expect(bobThreadAfter.data.messageIds).toEqual([received.id, reply.data.id]);

    // People one writes to and hears from become contacts.
    const contacts = await eventually(async () => {
      const list = await nylas.contacts.list({ identifier: bob, queryParams: {} });
      return list.data.some((contact) => contact.emails?.some((entry) => entry.email === ALICE))
        ? list.data
        : undefined;
    });
    expect(contacts.length).toBeGreaterThan(0);
  });

  it('mail to another domain reaches the relay with the right envelope, headers, threading and MIME structure', async () => {
    const { nylas } = service;
    sink.messages.length = 0;
    const first = await nylas.messages.send({
      identifier: alice,
      requestBody: {
        to: [{ name: 'Carol Remote', email: 'carol@example.com' }],
        subject: 'Quote request',
        body: '<p>Could you send a quote?</p>',
      },
    });
    await sink.waitFor(1);
    const firstHeaderId = (await simpleParser(sink.messages[0]!.raw)).messageId!;
    expect(firstHeaderId).toMatch(new RegExp(`^<[a-z0-9]+@${DOMAIN.replace(/\./g, '\\.')}>$`));

    // Carol answers over SMTP, threading on Alice's message.
    const carolId = '<carol-answer-1@example.com>';
    const answer = await sendRaw(
      service.smtpPort,
      'carol@example.com',
      [ALICE],
      `From: Carol Remote <carol@example.com>\r\nTo: ${ALICE}\r\nSubject: Re: Quote request\r\nMessage-ID: ${carolId}\r\nIn-Reply-To: ${firstHeaderId}\r\nReferences: ${firstHeaderId}\r\nDate: Mon, 04 May 2026 09:01:00 +0000\r\n\r\nHere is the quote.\r\n`,
    );
    expect(answer.code).toBe(250);
    const carolMessage = await eventually(
      async () =>
        (await nylas.messages.list({ identifier: alice, queryParams: { from: ['carol@example.com'] } })).data[0],
    );
    expect(carolMessage.threadId).toBe(first.data.threadId);

    const logo = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
    const pdf = Buffer.from(Array.from({ length: 5000 }, (_, index) => (index * 13) % 256));
    const reply = await nylas.messages.send({
      identifier: alice,
      requestBody: {
        to: [{ name: 'Carol Remote', email: 'carol@example.com' }],
        cc: [{ email: 'dave@example.com' }],
        bcc: [{ email: 'erin@example.org' }],
        replyTo: [{ name: 'Sales', email: `sales@${DOMAIN}` }],
        body: '<p>Thanks! <img src="cid:logo-1"></p>',
        replyToMessageId: carolMessage.id,
        customHeaders: [{ name: 'X-Campaign', value: 'spring-2026' }],
        attachments: [
          { filename: 'logo.png', contentType: 'image/png', content: logo.toString('base64'), contentId: 'logo-1' },
          { filename: 'terms.pdf', contentType: 'application/pdf', content: pdf.toString('base64') },
        ],
      },
    });
    expect(reply.data.threadId).toBe(first.data.threadId);
    expect(reply.data.subject).toBe('Re: Quote request');
    await sink.waitFor(4);
    const transactions = sink.messages.slice(1);
    const toCom = transactions.find((message) => message.rcptTo.includes('carol@example.com'))!;
    const toOrg = transactions.find((message) => message.rcptTo.includes('erin@example.org'))!;
    // One SMTP transaction per recipient, each with its own VERP return path on the sender's domain (a later
    // bounce names the message and the recipient); the same bytes to everyone.
    expect(transactions.map((message) => message.rcptTo).sort()).toEqual([
      ['carol@example.com'],
      ['dave@example.com'],
      ['erin@example.org'],
    ]);
    for (const message of transactions)
      expect(message.mailFrom).toMatch(
        new RegExp(`^bounce\\+[0-9a-z_]+-[0-9a-v]+-[a-z2-7]{16}@${DOMAIN.replace(/\./g, '\\.')}$`),
      );
    expect(new Set(transactions.map((message) => message.mailFrom)).size).toBe(3);
    expect(toCom.raw.equals(toOrg.raw)).toBe(true);

    const raw = toCom.raw.toString('latin1');
    const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
    expect(head).not.toMatch(/^bcc:/im);
    expect(raw).not.toContain('erin@example.org');
    expect(head).toMatch(/^X-Campaign: spring-2026$/m);
    const parsed = await simpleParser(toCom.raw, { keepCidLinks: true });
    expect(parsed.from?.value).toEqual([{ name: '', address: ALICE }]);
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value : []).toEqual([
      { name: 'Carol Remote', address: 'carol@example.com' },
    ]);
    expect(parsed.cc && !Array.isArray(parsed.cc) ? parsed.cc.value : []).toEqual([
      { name: '', address: 'dave@example.com' },
    ]);
    expect(parsed.replyTo?.value).toEqual([{ name: 'Sales', address: `sales@${DOMAIN}` }]);
    expect(parsed.subject).toBe('Re: Quote request');
    expect(parsed.messageId).toMatch(new RegExp(`@${DOMAIN.replace(/\./g, '\\.')}>$`));
    expect(parsed.messageId).not.toBe(firstHeaderId);
    expect(parsed.inReplyTo).toBe(carolId);
    expect(parsed.references).toEqual([firstHeaderId, carolId]);
    expect(parsed.date?.toISOString()).toBe(clock.now().toISOString());
    // multipart/mixed [ multipart/related [ multipart/alternative [text, html], logo ], pdf ]
    expect(parsed.headers.get('content-type')).toMatchObject({ value: 'multipart/mixed' });
    expect(raw).toMatch(/Content-Type: multipart\/related/);
    expect(raw).toMatch(/Content-Type: multipart\/alternative/);
    expect(parsed.text).toContain('Thanks!');
    expect(parsed.html).toContain('cid:logo-1');
    const logoPart = parsed.attachments.find((part) => part.filename === 'logo.png')!;
    expect(logoPart.contentId).toBe('<logo-1>');
    expect(logoPart.contentDisposition).toBe('inline');
    expect(logoPart.content.equals(logo)).toBe(true);
    const pdfPart = parsed.attachments.find((part) => part.filename === 'terms.pdf')!;
    expect(pdfPart.contentDisposition).toBe('attachment');
    expect(pdfPart.content.equals(pdf)).toBe(true);

    // The sender's copy is the message as sent, with its Bcc, and each recipient delivered.
    const copy = await nylas.messages.find({
      identifier: alice,
      messageId: reply.data.id,
      queryParams: { fields: 'raw_mime' as never },
    });
    expect(Buffer.from(copy.data.rawMime!, 'base64url').equals(toCom.raw)).toBe(true);
    const sentCopy = await nylas.messages.find({ identifier: alice, messageId: reply.data.id });
    expect(sentCopy.data.bcc).toEqual([{ email: 'erin@example.org' }]);
    const statuses = await eventually(async () => {
      const list = await deliveryOf(reply.data.id);
      return list.every((entry) => entry.status === 'delivered') ? list : undefined;
    });
    expect(statuses.map((entry) => entry.email).sort()).toEqual([
      'carol@example.com',
      'dave@example.com',
      'erin@example.org',
    ]);
  });

  it('with the relay down the message is queued and retried, and arrives once the relay is back', async () => {
    const { nylas } = service;
    sink.messages.length = 0;
    await sink.stop();
    const sent = await nylas.messages.send({
      identifier: alice,
      requestBody: { to: [{ email: 'frank@example.net' }], subject: 'Are you there?', body: 'Ping' },
    });
    const deferred = await eventually(async () => {
      const [entry] = await deliveryOf(sent.data.id);
      return entry?.status === 'deferred' ? entry : undefined;
    });
    expect(deferred.code).toBe(0);
    expect(deferred.response).toMatch(/ECONNREFUSED|connect/i);
    // A retry while still down stays deferred.
    clock.advance(60_000);
    service.background.wake();
    await eventually(
      async () => ((await deliveryOf(sent.data.id))[0] as unknown as { attempts: number }).attempts >= 2 || undefined,
    );
    expect(sink.messages).toHaveLength(0);

    await sink.start();
    clock.advance(5 * 60_000);
    service.background.wake();
    const [arrived] = await sink.waitFor(1);
    expect(arrived!.rcptTo).toEqual(['frank@example.net']);
    expect((await simpleParser(arrived!.raw)).subject).toBe('Are you there?');
    const delivered = await eventually(async () => {
      const [entry] = await deliveryOf(sent.data.id);
      return entry?.status === 'delivered' ? entry : undefined;
    });
    expect(delivered.code).toBe(250);
    // Delivered once: nothing more arrives on later wakes.
    clock.advance(3_600_000);
    service.background.wake();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sink.messages).toHaveLength(1);
  });

  it('a 550 from the relay is a permanent failure, recorded at once with a message.send_failed event', async () => {
    const { nylas } = service;
    sink.messages.length = 0;
    sink.onRecipient = (address) =>
      address === 'nobody@example.com' ? { code: 550, message: '5.1.1 <nobody@example.com>: no such user' } : undefined;
    try {
      const sent = await nylas.messages.send({
        identifier: alice,
        requestBody: {
          to: [{ email: 'nobody@example.com' }, { email: 'somebody@example.com' }],
          subject: 'Hello',
          body: 'Hi',
        },
      });
      const statuses = await eventually(async () => {
        const list = await deliveryOf(sent.data.id);
        return list.length === 2 && list.every((entry) => entry.status !== 'queued') ? list : undefined;
      });
      expect(statuses.find((entry) => entry.email === 'nobody@example.com')).toMatchObject({
        status: 'failed',
        code: 550,
      });
      expect(statuses.find((entry) => entry.email === 'nobody@example.com')!.response).toContain('no such user');
      expect(statuses.find((entry) => entry.email === 'somebody@example.com')).toMatchObject({ status: 'delivered' });
      expect(sink.messages.map((message) => message.rcptTo)).toEqual([['somebody@example.com']]);
      const events = await service.core.deps.db.orm
        .select()
        .from(tables.outboxEvents)
        .where(
          and(eq(tables.outboxEvents.type, 'message.send_failed'), eq(tables.outboxEvents.objectId, sent.data.id)),
        );
      expect(events).toHaveLength(1);
      expect(JSON.stringify(events[0]!.payload)).toContain('nobody@example.com');
      // Permanent: later wakes try nothing more.
      const sessions = sink.sessions;
      clock.advance(3_600_000);
      service.background.wake();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(sink.sessions).toBe(sessions);

      // A 550 to DATA fails every recipient of the transaction.
      sink.onRecipient = undefined;
      sink.onData = () => ({ code: 554, message: '5.7.1 rejected as spam' });
      const spam = await nylas.messages.send({
        identifier: alice,
        requestBody: {
          to: [{ email: 'x@example.com' }, { email: 'y@example.com' }],
          subject: 'Buy now',
          body: 'Offer',
        },
      });
      const failed = await eventually(async () => {
        const list = await deliveryOf(spam.data.id);
        return list.length === 2 && list.every((entry) => entry.status === 'failed') ? list : undefined;
      });
      expect(failed.every((entry) => entry.code === 554)).toBe(true);
    } finally {
      sink.onRecipient = undefined;
      sink.onData = undefined;
    }
  });

  it('an unknown mailbox on a hosted domain fails at once; the others still get the message', async () => {
    const sent = await service.nylas.messages.send({
      identifier: alice,
      requestBody: { to: [{ email: `ghost@${DOMAIN}` }, { email: BOB }], subject: 'Hi both', body: 'Hi' },
    });
    const statuses = await deliveryOf(sent.data.id);
    expect(statuses.find((entry) => entry.email === `ghost@${DOMAIN}`)).toMatchObject({ status: 'failed', code: 550 });
    expect(statuses.find((entry) => entry.email === BOB)).toMatchObject({ status: 'delivered' });
  });

  it('drafts: create, update, list, find and send through the SDK; the draft is gone and the message is sent and received', async () => {
    const { nylas } = service;
    const created = await nylas.drafts.create({
      identifier: alice,
      requestBody: {
        to: [{ email: BOB }],
        subject: 'Draft subject',
        body: '<p>First version</p>',
        attachments: [
          { filename: 'a.txt', contentType: 'text/plain', content: Buffer.from('attached').toString('base64') },
        ],
      },
    });
    expect(created.data.object).toBe('draft');
    expect(created.data.folders).toEqual(['drafts']);
    const draftId = created.data.id;

    const updated = await nylas.drafts.update({
      identifier: alice,
      draftId,
      requestBody: { subject: 'Final subject', cc: [{ email: 'gina@example.com' }] },
    });
    expect(updated.data.id).toBe(draftId);
    expect(updated.data.subject).toBe('Final subject');
    expect(updated.data.body).toContain('First version');
    expect(updated.data.cc).toEqual([{ email: 'gina@example.com' }]);
    expect(updated.data.attachments?.map((attachment) => attachment.filename)).toEqual(['a.txt']);
    const draftFile = await request(
      service.url,
      'GET',
      `/v3/grants/${alice}/attachments/${updated.data.attachments![0]!.id}/download?message_id=${draftId}`,
      { key: service.apiKey },
    );
    expect(draftFile.text).toBe('attached');
    expect(updated.data.threadId).toBe(created.data.threadId);

    const listed = await nylas.drafts.list({ identifier: alice });
    expect(listed.data.map((draft) => draft.id)).toContain(draftId);
    const found = await nylas.drafts.find({ identifier: alice, draftId });
    expect(found.data.subject).toBe('Final subject');
    const thread = await nylas.threads.find({ identifier: alice, threadId: created.data.threadId! });
    expect(thread.data.draftIds).toEqual([draftId]);
    expect(thread.data.hasDrafts).toBe(true);
    expect(thread.data.messageIds).toEqual([]);

    sink.messages.length = 0;
    const sent = await nylas.drafts.send({ identifier: alice, draftId });
    expect(sent.data.subject).toBe('Final subject');
    expect(sent.data.folders).toEqual(['sent']);
    expect(await statusOf(nylas.drafts.find({ identifier: alice, draftId }))).toBe(404);
    expect((await nylas.drafts.list({ identifier: alice })).data.map((draft) => draft.id)).not.toContain(draftId);
    const inSent = await nylas.messages.list({
      identifier: alice,
      queryParams: { in: ['sent'], subject: 'Final subject' },
    });
    expect(inSent.data.map((message) => message.id)).toEqual([sent.data.id]);
    const threadAfter = await nylas.threads.find({ identifier: alice, threadId: sent.data.threadId! });
    expect(threadAfter.data.draftIds).toEqual([]);
    expect(threadAfter.data.messageIds).toEqual([sent.data.id]);
    const atBob = await nylas.messages.list({ identifier: bob, queryParams: { subject: 'Final subject' } });
    expect(atBob.data).toHaveLength(1);
    expect(atBob.data[0]!.attachments?.some((attachment) => attachment.filename === 'a.txt')).toBe(true);
    const [remote] = await sink.waitFor(1);
    expect(remote!.rcptTo).toEqual(['gina@example.com']);

    // A draft that is deleted is gone.
    const other = await nylas.drafts.create({
      identifier: alice,
      requestBody: { to: [{ email: BOB }], subject: 'Never sent' },
    });
    await nylas.drafts.destroy({ identifier: alice, draftId: other.data.id });
    expect(await statusOf(nylas.drafts.find({ identifier: alice, draftId: other.data.id }))).toBe(404);

    // A reply draft sits in the thread of the message it answers.
    const [received] = (await nylas.messages.list({ identifier: bob, queryParams: { subject: 'Final subject' } })).data;
    const replyDraft = await nylas.drafts.create({
      identifier: bob,
      requestBody: { to: [{ email: ALICE }], body: 'Got it', replyToMessageId: received!.id },
    });
    expect(replyDraft.data.threadId).toBe(received!.threadId);
    expect(replyDraft.data.subject).toBe('Re: Final subject');
    const replySent = await nylas.drafts.send({ identifier: bob, draftId: replyDraft.data.id });
    expect(replySent.data.threadId).toBe(received!.threadId);
    const aliceThread = await nylas.threads.find({ identifier: alice, threadId: sent.data.threadId! });
    expect(aliceThread.data.messageIds).toHaveLength(2);
  });

  it('scheduled sends are listed, found, run from the queue at send_at, and can be stopped', async () => {
    const { nylas } = service;
    const now = Math.floor(clock.now().getTime() / 1000);
    const scheduled = await nylas.messages.send({
      identifier: alice,
      requestBody: { to: [{ email: BOB }], subject: 'Later', body: 'In an hour', sendAt: now + 3600 },
    });
    const scheduleId = (scheduled.data as unknown as { scheduleId: string }).scheduleId;
    expect(scheduleId).toBeTruthy();
    const raw = await request(service.url, 'GET', `/v3/grants/${alice}/messages/schedules`, { key: service.apiKey });
    expect(raw.body.data.map((item: { schedule_id: string }) => item.schedule_id)).toContain(scheduleId);
    const found = await nylas.messages.findScheduledMessage({ identifier: alice, scheduleId });
    expect(found.data.status.code).toBe('pending');

    const stopMe = await nylas.messages.send({
      identifier: alice,
      requestBody: { to: [{ email: BOB }], subject: 'Never', body: 'Stopped', sendAt: now + 3600 },
    });
    const stopId = (stopMe.data as unknown as { scheduleId: string }).scheduleId;
    const stopped = await nylas.messages.stopScheduledMessage({ identifier: alice, scheduleId: stopId });
    expect(stopped.data.message).toBe('requested cancelation for workflow');
    expect(
      (await nylas.messages.findScheduledMessage({ identifier: alice, scheduleId: stopId })).data.status.code,
    ).toBe('cancelled');

    expect((await nylas.messages.list({ identifier: bob, queryParams: { subject: 'Later' } })).data).toHaveLength(0);
    clock.advance(3601_000);
    service.background.wake();
    const arrived = await eventually(
      async () => (await nylas.messages.list({ identifier: bob, queryParams: { subject: 'Later' } })).data[0],
    );
    expect(arrived.body).toContain('In an hour');
    const done = await nylas.messages.findScheduledMessage({ identifier: alice, scheduleId });
    expect(done.data.status.code).toBe('success');
    expect(await statusOf(nylas.messages.stopScheduledMessage({ identifier: alice, scheduleId }))).toBe(400);
    expect((await nylas.messages.list({ identifier: bob, queryParams: { subject: 'Never' } })).data).toHaveLength(0);
  });
});
