/**
 * Mail in, notification out: a message delivered over SMTP to an Agent Account reaches a real receiver as a
 * signed `message.created` notification, verified independently with node:crypto.
 */
import { createHmac } from 'node:crypto';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailbox, smtpClient } from '../helpers/mail.js';
import { startBackgroundWork } from '../../src/index.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

describe('message.created webhooks for mail that arrives', () => {
  let service: TestService;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.close();
  });

  it('delivers a signed message.created with the message as data.object', async () => {
    const email = `watcher@hooks-in.agentpost.localhost`;
    const grantId = await createMailbox(service, email);
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl: receiver.url },
    });

    const transport = smtpClient(service.smtpPort);
    try {
      await transport.sendMail({
        from: 'Alice <alice@example.com>',
        to: email,
        subject: 'Quarterly numbers',
        text: 'See attached.',
      });
    } finally {
      transport.close();
    }
    const [delivery] = await receiver.waitForDeliveries(1);
    expect(delivery!.json).toMatchObject({
      specversion: '1.0',
      type: 'message.created',
      source: '/nylas/emails/realtime',
      webhook_delivery_attempt: 1,
      data: {
        application_id: await service.core.accounts.applications.defaultApplicationId(),
        object: { grant_id: grantId, subject: 'Quarterly numbers' },
      },
    });
    expect(delivery!.json.data.object.from[0].email).toBe('alice@example.com');
    expect(delivery!.headers['x-nylas-signature']).toBe(
      createHmac('sha256', webhook.webhookSecret).update(delivery!.body).digest('hex'),
    );
    const key = Buffer.from(webhook.webhookSecret.slice('whsec_'.length), 'base64');
    const signed = Buffer.concat([
      Buffer.from(`${String(delivery!.headers['webhook-id'])}.${String(delivery!.headers['webhook-timestamp'])}.`),
      delivery!.body,
    ]);
    expect(delivery!.headers['webhook-signature']).toBe(
      `v1,${createHmac('sha256', key).update(signed).digest('base64')}`,
    );

    // The notification's object is the message as the API returns it, body included (the stored event names the
    // message; fan-out reads its body back).
    const { data: message } = await service.nylas.messages.find({
      identifier: grantId,
      messageId: delivery!.json.data.object.id,
    });
    expect(message.subject).toBe('Quarterly numbers');
    expect(message.body).toContain('See attached.');
    expect(delivery!.json.data.object.body).toBe(message.body);
  });

  it('sends message.created.truncated, without a body, for a message deleted before its notification went out', async () => {
    const quiet = await startTestService({ env: { AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    const hook = await startReceiver();
    try {
      // No dispatching while the message is stored and deleted.
      await quiet.background.stop();
      const email = 'gone@hooks-in.agentpost.localhost';
      const grantId = await createMailbox(quiet, email);
      await quiet.nylas.webhooks.create({
        requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl: hook.url },
      });
      const transport = smtpClient(quiet.smtpPort);
      try {
        await transport.sendMail({
          from: 'alice@example.com',
          to: email,
          subject: 'Soon gone',
          text: 'Read me quickly.',
        });
      } finally {
        transport.close();
      }
      const { data: list } = await quiet.nylas.messages.list({ identifier: grantId });
      expect(list).toHaveLength(1);
      // Into the trash, then for good.
      await quiet.nylas.messages.destroy({ identifier: grantId, messageId: list[0]!.id });
      await quiet.nylas.messages.destroy({ identifier: grantId, messageId: list[0]!.id });
      expect((await quiet.nylas.messages.list({ identifier: grantId })).data).toHaveLength(0);

      const background = startBackgroundWork(quiet.core, { pollIntervalMs: 50 });
      try {
        const [delivery] = await hook.waitForDeliveries(1);
        expect(delivery!.json.type).toBe('message.created.truncated');
        expect(delivery!.json.data.object).toMatchObject({ id: list[0]!.id, subject: 'Soon gone' });
        expect(delivery!.json.data.object).not.toHaveProperty('body');
      } finally {
        await background.stop();
      }
    } finally {
      await hook.close();
      await quiet.close();
    }
  });
});
