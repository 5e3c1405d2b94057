/**
 * Bounces and complaints end to end: sends leave through a relay (a real SMTP server on loopback) with a VERP return
 * path per recipient; reports come back to the real SMTP listener and are attributed by that return path only;
 * webhooks, the suppression list and its API, delivery_status, and the bad input of issue 18 (forged tokens,
 * another application's message, a deleted message, malformed status parts, forged ARF senders, repeats).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { createReportIntake } from '../../src/deliverability/reports.js';
import type { RecordedReport } from '../../src/deliverability/contracts.js';
import { fixedClock } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually, rawSmtp, sendRaw } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const DOMAIN = 'bounces.agentpost.localhost';
const SENDER = `sender@${DOMAIN}`;
const BOB = `bob@${DOMAIN}`;
const OTHER_DOMAIN = 'other-app.agentpost.localhost';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '../fixtures/dsn', name), 'latin1');
/** A fixture report addressed to `returnPath` about `recipient` (the fixtures say bounce+abc@agentpost.example and user@example.com). */
const reportTo = (name: string, returnPath: string, recipient = 'user@example.com') =>
  fixture(name)
    .replaceAll('bounce+abc@agentpost.example', returnPath)
    .replaceAll('user@example.com', recipient)
    .replaceAll('user@example-isp.com', recipient);

describe('bounces and complaints', () => {
  const clock = fixedClock('2026-06-01T09:00:00Z');
  let service: TestService;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let grant: string;
  let otherKey: string;
  let otherGrant: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    receiver = await startReceiver();
    service = await startTestService({
      env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`, AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' },
      deps: { clock },
    });
    grant = await createMailbox(service, SENDER);
    await createMailbox(service, BOB);
    await service.nylas.webhooks.create({
      requestBody: {
        triggerTypes: [WebhookTriggers.MessageBounceDetected, 'message.complaint' as WebhookTriggers],
        webhookUrl: receiver.url,
      },
    });
    otherKey = (await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'production' }))
      .apiKey;
    otherGrant = await createMailbox(
      { url: service.url, apiKey: otherKey, nylas: service.client(otherKey) },
      `agent@${OTHER_DOMAIN}`,
    );
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
    await receiver?.close();
  });

  /** Sends from `grantId` to `to` and returns the sent message's id and each recipient's return path as the relay saw it. */
  async function send(to: string[], options: { grantId?: string; key?: string } = {}) {
    const nylas = options.key ? service.client(options.key) : service.nylas;
    const before = sink.messages.length;
    const sent = await nylas.messages.send({
      identifier: options.grantId ?? grant,
      requestBody: { to: to.map((email) => ({ email })), subject: `To ${to.join(', ')}`, body: 'Hello' },
    });
    service.background.wake();
    const remote = to.filter((email) => !email.endsWith(`@${DOMAIN}`));
    const arrived = await sink.waitFor(before + remote.length);
    const paths = new Map(arrived.slice(before).map((message) => [message.rcptTo[0]!, message.mailFrom]));
    return { id: sent.data.id, paths };
  }

  const reportsOf = (messageId: string) =>
    service.core.deps.db.orm
      .select()
      .from(tables.deliveryReports)
      .where(eq(tables.deliveryReports.messageId, messageId));
  const deliveryOf = async (messageId: string, key?: string, grantId = grant) => {
    const nylas = key ? service.client(key) : service.nylas;
    const message = await nylas.messages.find({ identifier: grantId, messageId });
    return (
      message.data as unknown as {
        deliveryStatus: {
          email: string;
          status: string;
          bounce?: Record<string, unknown>;
          complaint?: Record<string, unknown>;
        }[];
      }
    ).deliveryStatus;
  };
  const hooksFor = (type: string, messageId: string) =>
    receiver.deliveries.filter(
      (delivery) => delivery.json?.type === type && delivery.json.data.object.id === messageId,
    );

  it('a DSN to a return path is attributed to its message and recipient: webhook, suppression, delivery_status, then a 400 until removed', async () => {
    const { id, paths } = await send(['gone@example.com', 'fine@example.com']);
    const path = paths.get('gone@example.com')!;
    expect(path).toMatch(new RegExp(`^bounce\\+[0-9a-z_]+-[0-9a-v]+-[a-z2-7]{16}@${DOMAIN.replace(/\./g, '\\.')}$`));
    expect(paths.get('fine@example.com')).not.toBe(path);

    const reply = await sendRaw(
      service.smtpPort,
      '',
      [path],
      reportTo('postfix-unknown-user.eml', path, 'gone@example.com'),
    );
    expect(reply.code).toBe(250);
    // Recorded before the 250: the row, with the raw report as a blob.
    const [report] = await reportsOf(id);
    expect(report).toMatchObject({
      recipient: 'gone@example.com',
      kind: 'bounce',
      bounceType: 'hard',
      statusCode: '5.1.1',
      source: 'dsn',
      grantId: grant,
    });
    expect(report!.rawHash).toMatch(/^[0-9a-f]{64}$/);
    const [blob] = await service.core.deps.db.orm
      .select()
      .from(tables.blobs)
      .where(eq(tables.blobs.hash, report!.rawHash!));
    expect(blob).toBeDefined();

    service.background.wake();
    const delivery = await receiver.waitForDeliveries(1);
    const hook = delivery.find((entry) => entry.json.type === 'message.bounce_detected')!;
    expect(hook.json).toMatchObject({
      type: 'message.bounce_detected',
      source: '/nylas/send',
      data: {
        grant_id: grant,
        object: {
          object: 'message',
          id,
          message_id: id,
          grant_id: grant,
          bounce: {
            type: 'hard',
            recipient: 'gone@example.com',
            code: '5.1.1',
            reason: expect.stringContaining('unknown user'),
            source: 'dsn',
            bounced_at: expect.any(Number),
          },
        },
      },
    });

    const status = await deliveryOf(id);
    expect(status.find((entry) => entry.email === 'gone@example.com')).toMatchObject({
      status: 'failed',
      bounce: { type: 'hard', code: '5.1.1', source: 'dsn' },
    });
    expect(status.find((entry) => entry.email === 'fine@example.com')).toMatchObject({ status: 'delivered' });
    expect(status.find((entry) => entry.email === 'fine@example.com')!.bounce).toBeUndefined();

    const refused = await sdkError(
      service.nylas.messages.send({
        identifier: grant,
        requestBody: {
          to: [{ email: 'fine@example.com' }, { email: 'GONE@example.com' }],
          subject: 'Again',
          body: 'x',
        },
      }),
    );
    expect(refused.statusCode).toBe(400);
    expect(refused.message).toContain('gone@example.com (hard bounce)');
    expect(refused.message).toContain('DELETE /v3/suppressions/{email}');
    expect(refused.message).not.toContain('fine@example.com');

    const removed = await request(service.url, 'DELETE', `/v3/suppressions/${encodeURIComponent('gone@example.com')}`, {
      key: service.apiKey,
    });
    expect(removed.status).toBe(200);
    await send(['gone@example.com']);
  });

  it('a message to a mailbox and a return path at once: the mailbox gets it and the report is recorded', async () => {
    const { id, paths } = await send(['full@example.com']);
    const path = paths.get('full@example.com')!;
    const reply = await sendRaw(
      service.smtpPort,
      '',
      [path, BOB],
      reportTo('gmail-mailbox-full.eml', path).replaceAll('full@gmail.com', 'full@example.com'),
    );
    expect(reply.code).toBe(250);
    expect(await reportsOf(id)).toMatchObject([
      { recipient: 'full@example.com', bounceType: 'soft', statusCode: '5.2.2', smtpCode: 552 },
    ]);
    const bobGrant = (await service.nylas.grants.list()).data.find((entry) => entry.email === BOB)!.id;
    const inbox = await service.nylas.messages.list({ identifier: bobGrant, queryParams: { in: ['inbox'] } });
    expect(inbox.data.some((message) => message.subject === 'Delivery Status Notification (Failure)')).toBe(true);
    // Soft: not suppressed.
    const listed = await request(service.url, 'GET', '/v3/suppressions?email=full%40example.com', {
      key: service.apiKey,
    });
    expect(listed.body.data).toEqual([]);
  });

  it('a forged or altered token is refused at RCPT with 550 5.1.1; a return path on a foreign domain with 5.7.1', async () => {
    const { paths } = await send(['forge@example.com']);
    const path = paths.get('forge@example.com')!;
    const altered = path.replace(
      /-([a-z2-7])([a-z2-7]{15})@/,
      (_, first: string, rest: string) => `-${first === 'a' ? 'b' : 'a'}${rest}@`,
    );
    const client = await rawSmtp(service.smtpPort);
    try {
      await client.command('EHLO mx.example.com');
      expect((await client.command('MAIL FROM:<>')).code).toBe(250);
      const forged = await client.command(`RCPT TO:<${altered}>`);
      expect(forged.code).toBe(550);
      expect(forged.text).toContain('5.1.1');
      const foreign = await client.command(`RCPT TO:<${path.replace(DOMAIN, 'elsewhere.example')}>`);
      expect(foreign.code).toBe(550);
      expect(foreign.text).toContain('5.7.1');
      // Case folding by a mail system does not matter.
      expect((await client.command(`RCPT TO:<${path.toUpperCase()}>`)).code).toBe(250);
    } finally {
      client.end();
    }
  });

  it("a report to app A's return path naming app B's message is attributed to A's message only", async () => {
    const mine = await send(['shared@example.com']);
    const theirs = await send(['shared@example.com'], { grantId: otherGrant, key: otherKey });
    const myPath = mine.paths.get('shared@example.com')!;
    const theirPath = theirs.paths.get('shared@example.com')!;
    const [theirRow] = await service.core.deps.db.orm
      .select()
      .from(tables.outboundMessages)
      .where(eq(tables.outboundMessages.messageId, theirs.id));
    // The report goes to A's return path, but its contents quote B's return path and B's Message-ID.
    const raw = reportTo('sendmail-user-unknown.eml', theirPath, 'shared@example.com')
      .replace(/^To: .*$/m, `To: <${myPath}>`)
      .replaceAll('user@example.org', 'shared@example.com')
      .replaceAll('m2@agentpost.example', theirRow!.headerMessageId);
    expect((await sendRaw(service.smtpPort, '', [myPath], raw)).code).toBe(250);
    expect(await reportsOf(theirs.id)).toEqual([]);
    expect(await reportsOf(mine.id)).toMatchObject([{ recipient: 'shared@example.com', bounceType: 'hard' }]);
    // B's list is B's; A's entry is not B's to see or remove.
    const other = await request(service.url, 'GET', '/v3/suppressions', { key: otherKey });
    expect(other.body.data).toEqual([]);
    const notTheirs = await request(service.url, 'DELETE', '/v3/suppressions/shared%40example.com', { key: otherKey });
    expect(notTheirs.status).toBe(404);
  });

  it('a valid token whose message is gone: accepted, nothing recorded', async () => {
    const { id, paths } = await send(['deleted@example.com']);
    const path = paths.get('deleted@example.com')!;
    await service.core.deps.db.write((tx) =>
      tx.delete(tables.outboundMessages).where(eq(tables.outboundMessages.messageId, id)),
    );
    const reply = await sendRaw(
      service.smtpPort,
      '',
      [path],
      reportTo('postfix-unknown-user.eml', path, 'deleted@example.com'),
    );
    expect(reply.code).toBe(250);
    expect(await reportsOf(id)).toEqual([]);
  });

  it('a malformed message/delivery-status part falls back to the text, or records nothing; a delay warning and an auto-reply record nothing; never a 5xx', async () => {
    const { id, paths } = await send(['odd@example.com']);
    const path = paths.get('odd@example.com')!;
    for (const name of ['malformed-status-no-text.eml', 'postfix-delayed.eml', 'auto-reply.eml']) {
      const reply = await sendRaw(service.smtpPort, '', [path], reportTo(name, path, 'odd@example.com'));
      expect(reply.code, name).toBe(250);
    }
    expect(await reportsOf(id)).toEqual([]);
    const reply = await sendRaw(
      service.smtpPort,
      '',
      [path],
      reportTo('malformed-status-with-text.eml', path, 'odd@example.com'),
    );
    expect(reply.code).toBe(250);
    expect(await reportsOf(id)).toMatchObject([
      { recipient: 'odd@example.com', bounceType: 'hard', statusCode: '5.1.1', smtpCode: 550, source: 'dsn' },
    ]);
  });

  it('the same report twice is recorded once', async () => {
    const { id, paths } = await send(['twice@example.com']);
    const path = paths.get('twice@example.com')!;
    const raw = reportTo('qmail.eml', path, 'twice@example.com');
    expect((await sendRaw(service.smtpPort, '', [path], raw)).code).toBe(250);
    expect((await sendRaw(service.smtpPort, '', [path], raw)).code).toBe(250);
    expect(await reportsOf(id)).toHaveLength(1);
  });

  it('an ARF complaint is recorded and suppresses the address; a forged Original-Mail-From is not attributed', async () => {
    const { id, paths } = await send(['angry@example.com', 'calm@example.com']);
    const angry = paths.get('angry@example.com')!;
    const calm = paths.get('calm@example.com')!;
    // Original-Mail-From altered, or naming another recipient's return path: not attributed.
    const altered = angry.replace(/-[a-z2-7]{16}@/, '-aaaaaaaaaaaaaaaa@');
    const forged = reportTo('arf-abuse.eml', angry, 'angry@example.com').replace(
      `Original-Mail-From: <${angry}>`,
      `Original-Mail-From: <${altered}>`,
    );
    const another = reportTo('arf-abuse.eml', angry, 'angry@example.com').replace(
      `Original-Mail-From: <${angry}>`,
      `Original-Mail-From: <${calm}>`,
    );
    expect((await sendRaw(service.smtpPort, '', [angry], forged)).code).toBe(250);
    expect((await sendRaw(service.smtpPort, '', [angry], another)).code).toBe(250);
    expect(await reportsOf(id)).toEqual([]);

    expect(
      (await sendRaw(service.smtpPort, '', [angry], reportTo('arf-abuse.eml', angry, 'angry@example.com'))).code,
    ).toBe(250);
    expect(await reportsOf(id)).toMatchObject([
      { recipient: 'angry@example.com', kind: 'complaint', bounceType: null, reason: 'abuse', source: 'arf' },
    ]);
    service.background.wake();
    await eventually(async () => hooksFor('message.complaint', id)[0], 10_000);
    expect(hooksFor('message.complaint', id)[0]!.json.data.object).toMatchObject({
      id,
      grant_id: grant,
      message: { id, from: SENDER, to: ['angry@example.com'] },
      complaint: { type: 'abuse', recipients: [{ email: 'angry@example.com' }], complained_at: expect.any(Number) },
    });
    const listed = await request(service.url, 'GET', '/v3/suppressions?email=angry%40example.com', {
      key: service.apiKey,
    });
    expect(listed.body.data).toMatchObject([
      { object: 'suppression', email: 'angry@example.com', reason: 'complaint' },
    ]);
    expect((await deliveryOf(id)).find((entry) => entry.email === 'angry@example.com')!.complaint).toMatchObject({
      type: 'abuse',
    });
  });

  it('a permanent reply during delivery is a bounce (source smtp), and so is the 550 of an unknown mailbox here', async () => {
    sink.onRecipient = (address) =>
      address === 'nouser@example.com'
        ? { code: 550, message: '5.1.1 <nouser@example.com>: Recipient address rejected: User unknown' }
        : undefined;
    try {
      const sent = await service.nylas.messages.send({
        identifier: grant,
        requestBody: {
          to: [{ email: 'nouser@example.com' }, { email: `ghost@${DOMAIN}` }],
          subject: 'Two failures',
          body: 'x',
        },
      });
      service.background.wake();
      const reports = await eventually(async () => {
        const rows = await reportsOf(sent.data.id);
        return rows.length === 2 ? rows : undefined;
      }, 10_000);
      expect(reports.find((row) => row.recipient === 'nouser@example.com')).toMatchObject({
        source: 'smtp',
        bounceType: 'hard',
        smtpCode: 550,
        statusCode: '5.1.1',
      });
      expect(reports.find((row) => row.recipient === `ghost@${DOMAIN}`)).toMatchObject({
        source: 'smtp',
        bounceType: 'hard',
        smtpCode: 550,
        statusCode: '5.1.1',
      });
      const status = await deliveryOf(sent.data.id);
      expect(status.find((entry) => entry.email === 'nouser@example.com')).toMatchObject({
        status: 'failed',
        bounce: { type: 'hard', source: 'smtp', smtpCode: 550 },
      });
    } finally {
      sink.onRecipient = undefined;
    }
  });

  it('the queue giving up after its retries is a soft bounce (source timeout), not a suppression', async () => {
    sink.onRecipient = (address) =>
      address === 'slow@example.com' ? { code: 451, message: '4.7.1 Greylisted, try again later' } : undefined;
    try {
      const sent = await service.nylas.messages.send({
        identifier: grant,
        requestBody: { to: [{ email: 'slow@example.com' }], subject: 'Slow', body: 'x' },
      });
      service.background.wake();
      await eventually(
        async () => ((await deliveryOf(sent.data.id))[0]?.status === 'deferred' ? true : undefined),
        10_000,
      );
      clock.advance(6 * 86_400_000);
      service.background.wake();
      const [report] = await eventually(async () => {
        const rows = await reportsOf(sent.data.id);
        return rows.length > 0 ? rows : undefined;
      }, 10_000);
      expect(report).toMatchObject({ source: 'timeout', bounceType: 'soft', recipient: 'slow@example.com' });
      const listed = await request(service.url, 'GET', '/v3/suppressions?email=slow%40example.com', {
        key: service.apiKey,
      });
      expect(listed.body.data).toEqual([]);
    } finally {
      sink.onRecipient = undefined;
    }
  });

  it('every ReportListener given to the intake is called in the transaction that records the report', async () => {
    const { id, paths } = await send(['listened@example.com']);
    const path = paths.get('listened@example.com')!;
    const heard: RecordedReport[] = [];
    const intake = createReportIntake(service.core.deps, {
      signing: service.core.deliverability.signing,
      listeners: [
        {
          async reported(tx, report) {
            heard.push(report);
            // What a listener writes commits with the report.
            await tx
              .update(tables.grants)
              .set({ sendingPausedReason: `heard ${report.recipient}` })
              .where(eq(tables.grants.id, report.grantId!));
          },
        },
      ],
    });
    const outcome = await intake.receive({
      raw: Buffer.from(
        reportTo('exim-classic.eml', path, 'listened@example.com').replaceAll(
          'user@example.net',
          'listened@example.com',
        ),
      ),
      rcptTo: [path],
    });
    expect(outcome.recorded).toHaveLength(1);
    expect(heard).toMatchObject([
      { grantId: grant, kind: 'bounce', bounceType: 'hard', recipient: 'listened@example.com' },
    ]);
    const [row] = await service.core.deps.db.orm.select().from(tables.grants).where(eq(tables.grants.id, grant));
    expect(row!.sendingPausedReason).toBe('heard listened@example.com');
    await service.core.deps.db.write((tx) =>
      tx.update(tables.grants).set({ sendingPausedReason: null }).where(eq(tables.grants.id, grant)),
    );
    expect(await reportsOf(id)).toHaveLength(1);
  });
});

describe('the suppression list API', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service?.close();
  });

  it('adds, lists newest first with pages and a filter, removes; bad input is a 400 and another application sees nothing', async () => {
    const key = service.apiKey;
    for (const email of ['a@example.com', 'B@Example.com', 'c@example.com']) {
      const added = await request(service.url, 'POST', '/v3/suppressions', { key, body: { email } });
      expect(added.status).toBe(200);
      expect(added.body.data).toMatchObject({
        object: 'suppression',
        email: email.toLowerCase(),
        reason: 'manual',
        created_at: expect.any(Number),
      });
    }
    const again = await request(service.url, 'POST', '/v3/suppressions', { key, body: { email: 'a@example.com' } });
    expect(again.status).toBe(200);

    const first = await request(service.url, 'GET', '/v3/suppressions?limit=2', { key });
    expect(first.body.data).toHaveLength(2);
    const second = await request(service.url, 'GET', `/v3/suppressions?limit=2&page_token=${first.body.next_cursor}`, {
      key,
    });
    expect([...first.body.data, ...second.body.data].map((entry: { email: string }) => entry.email).sort()).toEqual([
      'a@example.com',
      'b@example.com',
      'c@example.com',
    ]);
    expect(second.body.next_cursor).toBeUndefined();
    const one = await request(service.url, 'GET', '/v3/suppressions?email=B%40example.com', { key });
    expect(one.body.data.map((entry: { email: string }) => entry.email)).toEqual(['b@example.com']);

    const bad = await request(service.url, 'POST', '/v3/suppressions', { key, body: { email: 'not an address' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.type).toBe('invalid_request_error');

    const other = (await service.core.accounts.applications.createApplication({ name: 'Other', plan: 'trial' })).apiKey;
    expect((await request(service.url, 'GET', '/v3/suppressions', { key: other })).body.data).toEqual([]);
    expect((await request(service.url, 'DELETE', '/v3/suppressions/a%40example.com', { key: other })).status).toBe(404);

    expect((await request(service.url, 'DELETE', '/v3/suppressions/a%40example.com', { key })).status).toBe(200);
    const missing = await request(service.url, 'DELETE', '/v3/suppressions/a%40example.com', { key });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain('not on this application');
  });
});
