/**
 * Issue 18 as a user meets it, through the nylas SDK against the real service: one send tracked for opens, links
 * and replies, with a label; the reader loads the pixel, clicks a rewritten link (302 to the original) and replies
 * from their own mail program over SMTP. Each gives its signed webhook carrying the label, and the engagement endpoint
 * reads all three back. (Bounces from a real MTA: bounce-postfix.test.ts; pausing on real DSNs: sending-health.test.ts.)
 */
import { createHmac } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../helpers/clock.js';
import { request } from '../helpers/http.js';
import { createMailbox, smtpClient } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { eventually, startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../helpers/webhooks.js';

const DOMAIN = 'flow.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;
const READER = 'reader@example.com';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

describe('deliverability: a tracked send, opened, clicked and answered', () => {
  const clock = fixedClock('2026-09-01T08:00:00Z');
  let service: TestService;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let secret: string;
  let grantId: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    receiver = await startReceiver();
    service = await startTestService({
      env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`, AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' },
      deps: { clock },
    });
    grantId = await createMailbox(service, AGENT);
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: {
        triggerTypes: [
          WebhookTriggers.MessageOpened,
          WebhookTriggers.MessageLinkClicked,
          WebhookTriggers.ThreadReplied,
        ],
        webhookUrl: receiver.url,
      },
    });
    secret = webhook.webhookSecret;
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
    await sink?.close();
  });

  const signedBy = (delivery: ReceivedDelivery) =>
    delivery.headers['x-nylas-signature'] === createHmac('sha256', secret).update(delivery.body).digest('hex');
  const notification = (type: string) =>
    eventually(async () => receiver.deliveries.find((delivery) => delivery.json?.type === type), 10_000);

  it('gives message.opened, message.link_clicked and thread.replied, each signed with the label, and the engagement shows them', async () => {
    const before = sink.messages.length;
    const { data: sent } = await service.nylas.messages.send({
      identifier: AGENT,
      requestBody: {
        to: [{ email: READER }],
        subject: 'Our autumn plans',
        body: '<html><body><p>Read <a href="https://plans.example.com/autumn?x=1&amp;y=2">the plans</a>.</p></body></html>',
        trackingOptions: { opens: true, links: true, threadReplies: true, label: 'autumn-campaign' },
      },
    });
    const [relayed] = (await sink.waitFor(before + 1)).slice(before);
    const delivered = await simpleParser(relayed!.raw);
    const html = String(delivered.html);
    const pixel = /\/t\/o\/([A-Za-z0-9_.-]+)"/.exec(html)?.[1];
    const link = /\/t\/l\/([A-Za-z0-9_.-]+)"/.exec(html)?.[1];
    expect(pixel).toBeDefined();
    expect(link).toBeDefined();
    expect(html).not.toContain('https://plans.example.com/autumn');

    // The reader opens it a minute later (not a gateway's prefetch) and clicks.
    clock.advance(60_000);
    const opened = await fetch(`${service.url}/t/o/${pixel}`, { headers: { 'user-agent': BROWSER } });
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toBe('image/gif');
    const clicked = await fetch(`${service.url}/t/l/${link}`, {
      redirect: 'manual',
      headers: { 'user-agent': BROWSER },
    });
    expect(clicked.status).toBe(302);
    expect(clicked.headers.get('location')).toBe('https://plans.example.com/autumn?x=1&y=2');

    // Then answers from their own mail program, through our MX.
    const transport = smtpClient(service.smtpPort);
    try {
      await transport.sendMail({
        from: READER,
        to: AGENT,
        subject: 'Re: Our autumn plans',
        text: 'Count me in.',
        inReplyTo: delivered.messageId!,
        references: [delivered.messageId!],
      });
    } finally {
      transport.close();
    }

    const open = await notification('message.opened');
    const click = await notification('message.link_clicked');
    const reply = await notification('thread.replied');
    for (const delivery of [open, click, reply]) {
      expect(signedBy(delivery)).toBe(true);
      expect(delivery.json).toMatchObject({
        source: '/com/nylas/tracking',
        data: { grant_id: grantId, object: { label: 'autumn-campaign', grant_id: grantId } },
      });
    }
    expect(open.json.data.object).toMatchObject({
      message_id: sent.id,
      message_data: { count: 1 },
      recents: [expect.objectContaining({ user_agent: BROWSER })],
    });
    expect(click.json.data.object).toMatchObject({
      message_id: sent.id,
      link_data: [{ count: 1, url: 'https://plans.example.com/autumn?x=1&y=2' }],
      recents: [expect.objectContaining({ link_index: '0' })],
    });
    expect(reply.json.data.object).toMatchObject({
      object: 'thread',
      root_message_id: sent.id,
      reply_to_message_id: sent.id,
      thread_id: sent.threadId,
      from_self: false,
      reply_data: { count: 1 },
    });

    const engagement = await eventually(async () => {
      const read = await request(service.url, 'GET', `/v3/grants/${AGENT}/messages/${sent.id}/engagement`, {
        key: service.apiKey,
      });
      return read.body.data?.replies?.count === 1 && read.body.data.opens.count === 1 ? read.body.data : undefined;
    }, 10_000);
    expect(engagement).toMatchObject({
      tracked: true,
      tracking_options: { opens: true, links: true, thread_replies: true, label: 'autumn-campaign' },
      opens: { count: 1 },
      clicks: { count: 1 },
      links: [{ link_index: '0', url: 'https://plans.example.com/autumn?x=1&y=2', count: 1 }],
      replies: { count: 1, message_ids: [reply.json.data.object.message_id] },
      delivery_status: [expect.objectContaining({ email: READER, status: 'delivered' })],
    });
  });
});
