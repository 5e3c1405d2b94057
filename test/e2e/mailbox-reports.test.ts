/**
 * Bounces and complaints of connected accounts (issue 23, point 5): a report that comes back to the account's own
 * inbox is matched to the sent message by the Message-ID of the message it returns, and recorded as a hosted
 * bounce is (delivery report, suppression, `message.bounce_detected`), only for messages that mailbox sent.
 *
 * Real parts: the service on a temporary database, sends through the `nylas` SDK leaving by each account's own SMTP
 * server (a loopback SMTP server with AUTH), reports stored as synced messages and read by the real job handler.
 * The sync from Dovecot that stores such a message is tested with the sync (test/e2e/imap-sync*.test.ts).
 */
import { createHmac } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobHash, tables } from '../../storage/index.js';
import { createMimeParser } from '../../src/mime/parse-inbound.js';
import { MAILBOX_REPORT_JOB } from '../../src/deliverability/mailbox-reports.js';
import { mayBeReport, returnedMessageIds } from '../../src/deliverability/returned-message.js';
import { readReport } from '../../src/mime/report-mime.js';
import type { Job } from '../../src/jobs/index.js';
import { fixedClock } from '../helpers/clock.js';
import { addSyncedMessageRow, createImapGrant } from '../helpers/imap-grant.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { eventually, startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

/** A reader's browser (hits from it are people, not scanners). */
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
/** A port where nothing listens (the accounts' IMAP side is not used here). */
const CLOSED_PORT = 36251;

/**
 * An RFC 3464 report as Postfix writes it, returning the headers of the message `messageId` sent to `recipient`
 * (one failed group per address of `failed`, default the recipient; `action` default `failed`).
 */
function dsn(options: {
  recipient: string;
  messageId: string;
  status?: string;
  from?: string;
  failed?: string[];
  action?: string;
}): Buffer {
  const status = options.status ?? '5.1.1';
  const groups = (options.failed ?? [options.recipient]).flatMap((address) => [
    `Final-Recipient: rfc822; ${address}`,
    `Action: ${options.action ?? 'failed'}`,
    `Status: ${status}`,
    `Diagnostic-Code: smtp; 550 ${status} <${address}>: Recipient address rejected: User unknown`,
    '',
  ]);
  return Buffer.from(
    [
      'From: MAILER-DAEMON@mx.example.org (Mail Delivery System)',
      `To: ${options.from ?? 'someone@example.test'}`,
      'Subject: Undelivered Mail Returned to Sender',
      'Message-ID: <dsn-1@mx.example.org>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="B"',
      '',
      '--B',
      'Content-Type: text/plain',
      '',
      `I'm sorry to have to inform you that your message could not be delivered to ${options.recipient}.`,
      '',
      '--B',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.org',
      '',
      ...groups,
      '--B',
      'Content-Type: text/rfc822-headers',
      '',
      `From: ${options.from ?? 'someone@example.test'}`,
      `To: ${options.recipient}`,
      'Subject: Hello',
      `Message-ID: <${options.messageId}>`,
      '',
      '--B--',
      '',
    ].join('\r\n'),
  );
}

describe("deliverability of connected accounts: tracking and reports in the account's own inbox", () => {
  const clock = fixedClock('2026-09-01T08:00:00Z');
  let service: TestService;
  let receiver: WebhookReceiver;
  let secret: string;
  let aliceSink: SmtpSink;
  let bobSink: SmtpSink;
  let appId: string;
  let alice: string;
  let bob: string;
  const parser = createMimeParser({ workers: 1 });
  const grantRow = async (id: string) =>
    (await service.core.deps.db.orm.select().from(tables.grants).where(eq(tables.grants.id, id)))[0]!;

  /** Stores `raw` in the grant's INBOX as the sync would (with the jobs the sync stores with it), runs those jobs. */
  async function syncIn(grantId: string, raw: Buffer, uid: number): Promise<{ messageId: string; jobs: number }> {
    const parsed = await parser.parse(raw);
    if (!parsed.ok) throw new Error('the report did not parse');
    const plan = service.core.deliverability.mailboxReports.jobsFor(raw, [await grantRow(grantId)]);
    const messageId = await addSyncedMessageRow(service.core, {
      applicationId: appId,
      grantId,
      uid,
      raw,
      parsed: parsed.value,
    });
    const jobs = plan ? plan([{ grantId, messageId }]) : [];
    for (const input of jobs)
      await service.core.jobs.handlers[input.kind]!(
        { id: `job-${uid}`, kind: input.kind, payload: input.payload, attempts: 1 } as unknown as Job,
        {} as never,
      );
    return { messageId, jobs: jobs.length };
  }

  async function sendFrom(grantId: string, to: string): Promise<string> {
    const { data } = await service.nylas.messages.send({
      identifier: grantId,
      requestBody: { subject: 'Hello', body: 'hi there', to: [{ email: to }] },
    });
    const [row] = await service.core.deps.db.orm
      .select({ header: tables.outboundMessages.headerMessageId })
      .from(tables.outboundMessages)
      .where(eq(tables.outboundMessages.messageId, data.id));
    return row!.header;
  }

  const reportsOf = (grantId: string) =>
    service.core.deps.db.orm.select().from(tables.deliveryReports).where(eq(tables.deliveryReports.grantId, grantId));

  beforeAll(async () => {
    aliceSink = await startSmtpSink({ auth: { user: 'alice@example.test', pass: 'alice-smtp' } });
    bobSink = await startSmtpSink({ auth: { user: 'bob@example.test', pass: 'bob-smtp' } });
    receiver = await startReceiver();
    service = await startTestService({ env: { AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' }, deps: { clock } });
    const [application] = await service.core.deps.db.orm
      .select({ id: tables.applications.id })
      .from(tables.applications)
      .where(eq(tables.applications.isDefault, true));
    appId = application!.id;
    const secrets = service.core.deps.secrets;
    alice = await createImapGrant(service.core, {
      applicationId: appId,
      email: 'alice@example.test',
      password: 'x',
      smtpPassword: 'alice-smtp',
      imapPort: CLOSED_PORT,
      smtpPort: aliceSink.port,
      secrets,
      serverFilesSent: true,
    });
    bob = await createImapGrant(service.core, {
      applicationId: appId,
      email: 'bob@example.test',
      password: 'x',
      smtpPassword: 'bob-smtp',
      imapPort: CLOSED_PORT,
      smtpPort: bobSink.port,
      secrets,
      serverFilesSent: true,
    });
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: {
        triggerTypes: [
          WebhookTriggers.MessageOpened,
          WebhookTriggers.MessageLinkClicked,
          WebhookTriggers.MessageBounceDetected,
        ],
        webhookUrl: receiver.url,
      },
    });
    secret = webhook.webhookSecret;
  });
  const notified = (type: string, grantId: string, recipient?: string) =>
    eventually(
      async () =>
        receiver.deliveries.find(
          (delivery) =>
            delivery.json?.type === type &&
            delivery.json.data.object.grant_id === grantId &&
            (!recipient || delivery.json.data.object.bounce?.recipient === recipient),
        ),
      10_000,
      type,
    );
  const signed = (body: string | Buffer) => createHmac('sha256', secret).update(body).digest('hex');
  afterAll(async () => {
    await receiver?.close();
    await parser.close();
    await service?.close();
    await aliceSink?.close();
    await bobSink?.close();
  });

  it('a DSN returning a message the account sent is a bounce of that message and recipient: report, suppression, message.bounce_detected', async () => {
    const headerId = await sendFrom(alice, 'nobody@far.example');
    await aliceSink.waitFor(1);
    const raw = dsn({ recipient: 'nobody@far.example', messageId: headerId, from: 'alice@example.test' });
    const { messageId, jobs } = await syncIn(alice, raw, 101);
    expect(jobs).toBe(1);
    const reports = await reportsOf(alice);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({
      recipient: 'nobody@far.example',
      kind: 'bounce',
      bounceType: 'hard',
      statusCode: '5.1.1',
      smtpCode: 550,
      source: 'dsn',
      rawHash: blobHash(raw),
    });
    const events = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(eq(tables.outboxEvents.type, 'message.bounce_detected'));
    const event = events
      .map(
        (row) =>
          row.payload as { grant_id: string; message_id_header: string; bounce: { recipient: string; type: string } },
      )
      .find((payload) => payload.grant_id === alice);
    expect(event).toMatchObject({
      message_id_header: `<${headerId}>`,
      bounce: { recipient: 'nobody@far.example', type: 'hard' },
    });
    const delivery = await notified('message.bounce_detected', alice, 'nobody@far.example');
    expect(delivery.headers['x-nylas-signature']).toBe(signed(delivery.body));
    // The address is suppressed for the application: the next send to it is refused, naming it.
    await expect(
      service.nylas.messages.send({
        identifier: alice,
        requestBody: { subject: 'Again', body: 'x', to: [{ email: 'nobody@far.example' }] },
      }),
    ).rejects.toThrow(/nobody@far\.example/);
    // The notice itself stays in the inbox as the provider delivered it.
    const { data: kept } = await service.nylas.messages.find({ identifier: alice, messageId });
    expect(kept.subject).toBe('Undelivered Mail Returned to Sender');
    expect(kept.folders).toEqual(['inbox']);

    // The same report synced again (another copy, or the job run twice) records nothing twice.
    await syncIn(alice, raw, 102);
    expect(await reportsOf(alice)).toHaveLength(1);
  });

  it('a forged DSN in one account that names a message of another account is not attributed', async () => {
    const bobsHeader = await sendFrom(bob, 'carol@far.example');
    await bobSink.waitFor(1);
    const before = (await reportsOf(bob)).length;
    await syncIn(alice, dsn({ recipient: 'carol@far.example', messageId: bobsHeader }), 103);
    expect(await reportsOf(bob)).toHaveLength(before);
    expect((await reportsOf(alice)).filter((report) => report.recipient === 'carol@far.example')).toHaveLength(0);
    const suppressed = await service.core.deps.db.orm
      .select()
      .from(tables.suppressions)
      .where(and(eq(tables.suppressions.applicationId, appId), eq(tables.suppressions.email, 'carol@far.example')));
    expect(suppressed).toHaveLength(0);
  });

  it('a report about a recipient the message did not have, and a delay warning, record nothing', async () => {
    const headerId = await sendFrom(alice, 'dave@far.example');
    const { jobs } = await syncIn(
      alice,
      dsn({
        recipient: 'dave@far.example',
        messageId: headerId,
        failed: ['someone-else@far.example', 'other@far.example'],
      }),
      104,
    );
    expect(jobs).toBe(1);
    await syncIn(
      alice,
      dsn({ recipient: 'dave@far.example', messageId: headerId, action: 'delayed', status: '4.4.1' }),
      105,
    );
    expect((await reportsOf(alice)).filter((report) => report.recipient === 'dave@far.example')).toHaveLength(0);
  });

  it('a text bounce quoting the returned message (qmail style) is attributed by the quoted Message-ID', async () => {
    const headerId = await sendFrom(alice, 'erin@far.example');
    const raw = Buffer.from(
      [
        'From: MAILER-DAEMON@mx.example.org',
        'To: alice@example.test',
        'Subject: failure notice',
        '',
        'Hi. This is the qmail-send program at mx.example.org.',
        "I'm afraid I wasn't able to deliver your message to the following addresses.",
        "This is a permanent error; I've given up. Sorry it didn't work out.",
        '',
        '<erin@far.example>:',
        'Sorry, no mailbox here by that name. (#5.1.1)',
        '',
        '--- Below this line is a copy of the message.',
        '',
        'From: alice@example.test',
        'To: erin@far.example',
        `Message-ID: <${headerId}>`,
        'Subject: Hello',
        '',
        'hi there',
        '',
      ].join('\r\n'),
    );
    expect(returnedMessageIds(readReport(raw))).toEqual([headerId.toLowerCase()]);
    await syncIn(alice, raw, 106);
    const reports = (await reportsOf(alice)).filter((report) => report.recipient === 'erin@far.example');
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ kind: 'bounce', source: 'dsn' });
  });

  it("a tracked send leaves by the account's own SMTP server with the pixel and rewritten links; opens and clicks give their signed webhooks with the label", async () => {
    const before = aliceSink.messages.length;
    const { data: sent } = await service.nylas.messages.send({
      identifier: alice,
      requestBody: {
        to: [{ email: 'reader@far.example' }],
        subject: 'Tracked from IMAP',
        body: '<html><body><p>See <a href="https://plans.example.com/imap?a=1">the plan</a>.</p></body></html>',
        trackingOptions: { opens: true, links: true, label: 'imap-campaign' },
      },
    });
    const [submitted] = (await aliceSink.waitFor(before + 1)).slice(before);
    expect(submitted!.user).toBe('alice@example.test');
    const html = String((await simpleParser(submitted!.raw)).html);
    const pixel = /\/t\/o\/([A-Za-z0-9_.-]+)"/.exec(html)?.[1];
    const link = /\/t\/l\/([A-Za-z0-9_.-]+)"/.exec(html)?.[1];
    expect(pixel).toBeDefined();
    expect(link).toBeDefined();
    expect(html).not.toContain('https://plans.example.com/imap');
    clock.advance(60_000);
    expect((await fetch(`${service.url}/t/o/${pixel}`, { headers: { 'user-agent': BROWSER } })).status).toBe(200);
    const clicked = await fetch(`${service.url}/t/l/${link}`, {
      redirect: 'manual',
      headers: { 'user-agent': BROWSER },
    });
    expect(clicked.headers.get('location')).toBe('https://plans.example.com/imap?a=1');
    for (const type of ['message.opened', 'message.link_clicked']) {
      const delivery = await notified(type, alice);
      expect(delivery.headers['x-nylas-signature']).toBe(signed(delivery.body));
      expect(delivery.json.data.object).toMatchObject({ message_id: sent.id, label: 'imap-campaign', grant_id: alice });
    }
  });

  it('ordinary mail and hosted mailboxes get no job: one header scan decides', async () => {
    const ordinary = Buffer.from(
      'From: friend@example.org\r\nTo: alice@example.test\r\nSubject: lunch?\r\nContent-Type: text/plain\r\n\r\nmultipart/report is only mentioned here\r\n',
    );
    expect(mayBeReport(ordinary)).toBe(false);
    expect(mayBeReport(dsn({ recipient: 'x@y.example', messageId: 'a@b' }))).toBe(true);
    expect(mayBeReport(Buffer.from('From: someone@example.org\r\nReturn-Path: <>\r\n\r\nx'))).toBe(true);
    expect(
      mayBeReport(
        Buffer.from('Subject: x\r\nContent-Type:\r\n multipart/report; report-type=delivery-status\r\n\r\nx'),
      ),
    ).toBe(true);
    expect(
      mayBeReport(
        Buffer.from('Subject: Undelivered\r\nFrom: Mail Delivery System <MAILER-DAEMON@mx.example.org>\r\n\r\nx'),
      ),
    ).toBe(true);
    expect(mayBeReport(Buffer.from('Subject: x\r\nFrom: postmaster@example.org\r\n\r\nx'))).toBe(true);
    // Only in the header section: a body line that looks like one does not count.
    expect(mayBeReport(Buffer.from('Subject: x\r\nFrom: friend@example.org\r\n\r\nReturn-Path: <>\r\n'))).toBe(false);
    const row = await grantRow(alice);
    expect(service.core.deliverability.mailboxReports.jobsFor(ordinary, [row])).toBeUndefined();
    expect(
      service.core.deliverability.mailboxReports.jobsFor(dsn({ recipient: 'x@y.example', messageId: 'a@b' }), [
        { ...row, provider: 'nylas' },
      ]),
    ).toBeUndefined();
    const plan = service.core.deliverability.mailboxReports.jobsFor(
      dsn({ recipient: 'x@y.example', messageId: 'a@b' }),
      [row],
    );
    expect(plan?.([{ grantId: alice, messageId: 'm1' }]).map((job) => job.kind)).toEqual([MAILBOX_REPORT_JOB]);
  });
});
