/**
 * `thread.replied` end to end: a send tracked with `thread_replies` through the nylas SDK, then a reply from an
 * outside mailer over real SMTP (nodemailer to our listener) and a reply from another mailbox of this service (local
 * delivery). Each gives one signed webhook carrying the label; replies to untracked sends, or to sends tracked
 * without `thread_replies`, give none.
 */
import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { simpleParser } from 'mailparser';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { THREAD_REPLIED_JOB } from '../../src/deliverability/thread-replies.js';
import { createMailbox, smtpClient } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { eventually, startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const DOMAIN = 'replied.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;
const COLLEAGUE = `colleague@${DOMAIN}`;

describe('thread.replied for replies to tracked sends', () => {
  let service: TestService;
  let sink: SmtpSink;
  let receiver: WebhookReceiver;
  let agent: string;
  let colleague: string;
  let secret: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      env: { AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true', AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}` },
    });
    receiver = await startReceiver();
    agent = await createMailbox(service, AGENT);
    colleague = await createMailbox(service, COLLEAGUE);
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.ThreadReplied], webhookUrl: receiver.url },
    });
    secret = webhook.webhookSecret;
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
    await sink?.close();
  });

  /** The jobs of replies still waiting, and the tracked send of a sent copy. */
  const pendingReplyJobs = () =>
    service.core.deps.db.orm.select().from(tables.jobs).where(eq(tables.jobs.kind, THREAD_REPLIED_JOB));
  const trackedOf = async (messageId: string) =>
    (
      await service.core.deps.db.orm
        .select()
        .from(tables.trackedMessages)
        .where(eq(tables.trackedMessages.messageId, messageId))
    )[0]!;

  it('a reply from an outside mailer over SMTP gives one signed thread.replied with the label; sent again, it counts once', async () => {
    const before = sink.messages.length;
    const sent = await service.nylas.messages.send({
      identifier: agent,
      requestBody: {
        to: [{ email: 'bob@example.com' }],
        subject: 'Proposal',
        body: '<p>Shall we meet on Tuesday?</p>',
        trackingOptions: { threadReplies: true, label: 'q3-outreach' },
      },
    });
    const [relayed] = (await sink.waitFor(before + 1)).slice(before);
    const original = await simpleParser(relayed!.raw);
    expect(original.messageId).toBeDefined();

    // Bob answers from his own mail program, through our MX.
    const transport = smtpClient(service.smtpPort);
    const reply = {
      from: 'Bob <bob@example.com>',
      to: AGENT,
      subject: 'Re: Proposal',
      text: 'Tuesday works.',
      inReplyTo: original.messageId!,
      references: [original.messageId!],
      messageId: '<bob-reply-1@example.com>',
    };
    try {
      await transport.sendMail(reply);
    } finally {
      transport.close();
    }
    const [delivery] = await receiver.waitForDeliveries(1);
    expect(delivery!.headers['x-nylas-signature']).toBe(
      createHmac('sha256', secret).update(delivery!.body).digest('hex'),
    );
    const { data: inbox } = await service.nylas.messages.list({ identifier: agent, queryParams: { in: ['inbox'] } });
    const stored = inbox.find((message) => message.subject === 'Re: Proposal')!;
    expect(delivery!.json).toMatchObject({
      type: 'thread.replied',
      source: '/com/nylas/tracking',
      data: {
        application_id: await service.core.accounts.applications.defaultApplicationId(),
        grant_id: agent,
        object: {
          object: 'thread',
          grant_id: agent,
          message_id: stored.id,
          root_message_id: sent.data.id,
          reply_to_message_id: sent.data.id,
          label: 'q3-outreach',
          reply_data: { count: 1 },
          from_self: false,
          sender_app_id: await service.core.accounts.applications.defaultApplicationId(),
          thread_id: sent.data.threadId,
          timestamp: expect.any(Number),
        },
      },
    });
    // The reply is in the tracked message's thread.
    expect(stored.threadId).toBe(sent.data.threadId);

    // The same reply again (Bob's server retrying): stored, but not counted again.
    const again = smtpClient(service.smtpPort);
    try {
      await again.sendMail(reply);
    } finally {
      again.close();
    }
    await eventually(async () => (await pendingReplyJobs()).length === 0, 10_000, 'the reply job to run');
    expect((await trackedOf(sent.data.id)).repliesCount).toBe(1);
    const engagement = await service.core.deps.db.orm
      .select()
      .from(tables.engagementEvents)
      .where(eq(tables.engagementEvents.messageId, (await trackedOf(sent.data.id)).id));
    expect(engagement).toHaveLength(1);
  });

  it('a reply from another mailbox of this service (local delivery) gives thread.replied too', async () => {
    const count = receiver.deliveries.length;
    const sent = await service.nylas.messages.send({
      identifier: agent,
      requestBody: {
        to: [{ email: COLLEAGUE }],
        subject: 'Lunch?',
        body: 'Are you free at noon?',
        trackingOptions: { threadReplies: true, label: 'internal' },
      },
    });
    // The colleague's copy arrived at once (local delivery); they answer it through the API.
    const { data: received } = await service.nylas.messages.list({
      identifier: colleague,
      queryParams: { subject: 'Lunch?' },
    });
    expect(received).toHaveLength(1);
    const answer = await service.nylas.messages.send({
      identifier: colleague,
      requestBody: { to: [{ email: AGENT }], subject: 'Re: Lunch?', body: 'Yes!', replyToMessageId: received[0]!.id },
    });

    const deliveries = await receiver.waitForDeliveries(count + 1);
    const object = deliveries[count]!.json.data.object;
    const { data: inbox } = await service.nylas.messages.list({
      identifier: agent,
      queryParams: { subject: 'Re: Lunch?' },
    });
    expect(inbox).toHaveLength(1);
    expect(inbox[0]!.id).not.toBe(answer.data.id);
    expect(object).toMatchObject({
      message_id: inbox[0]!.id,
      root_message_id: sent.data.id,
      reply_to_message_id: sent.data.id,
      label: 'internal',
      reply_data: { count: 1 },
      from_self: false,
      thread_id: sent.data.threadId,
    });
  });

  it('gives nothing for replies to an untracked send or to one tracked without thread_replies', async () => {
    const count = receiver.deliveries.length;
    const before = sink.messages.length;
    await service.nylas.messages.send({
      identifier: agent,
      requestBody: { to: [{ email: 'carol@example.com' }], subject: 'Untracked', body: 'Hello' },
    });
    await service.nylas.messages.send({
      identifier: agent,
      requestBody: {
        to: [{ email: 'dave@example.com' }],
        subject: 'Opens only',
        body: 'Hello',
        trackingOptions: { opens: true, threadReplies: false, label: 'opens' },
      },
    });
    const relayed = (await sink.waitFor(before + 2)).slice(before);
    const transport = smtpClient(service.smtpPort);
    try {
      for (const message of relayed) {
        const parsed = await simpleParser(message.raw);
        await transport.sendMail({
          from: message.rcptTo[0]!,
          to: AGENT,
          subject: `Re: ${parsed.subject}`,
          text: 'Thanks',
          inReplyTo: parsed.messageId!,
          references: [parsed.messageId!],
        });
      }
    } finally {
      transport.close();
    }
    // Both replies were stored (acknowledged with 250) without a reply job: nothing will ever be sent for them.
    const { data: stored } = await service.nylas.messages.list({ identifier: agent, queryParams: { in: ['inbox'] } });
    expect(
      stored.filter((message) => message.subject === 'Re: Untracked' || message.subject === 'Re: Opens only'),
    ).toHaveLength(2);
    expect(await pendingReplyJobs()).toEqual([]);
    const replied = await service.core.deps.db.orm
      .select()
      .from(tables.outboxEvents)
      .where(eq(tables.outboxEvents.type, 'thread.replied'));
    expect(replied).toHaveLength(2);
    expect(receiver.deliveries.length).toBe(count);
  });
});
