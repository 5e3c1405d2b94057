/**
 * A real bounce from Debian's Postfix: Agentpost relays a send to a Postfix instance on loopback that is the
 * recipient's MTA. Postfix accepts the unknown user, fails to deliver locally, and sends a real RFC 3464 DSN to the
 * VERP return path, which its transport map routes back to Agentpost's SMTP listener. The DSN is attributed to the
 * message and recipient, a signed `message.bounce_detected` webhook arrives, the address is suppressed, and the
 * next send to it gets the 400.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailbox, eventually } from '../helpers/mail.js';
import { postfixMissing, startPostfix, type Postfix } from '../helpers/postfix.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const missing = postfixMissing();
if (missing) console.warn(`bounce-postfix: skipped: ${missing}`);

const DOMAIN = 'postfix-sender.agentpost.localhost';
const SENDER = `agent@${DOMAIN}`;
/** Postfix's own domain: every user there that does not exist bounces. */
const REMOTE = 'postfix-recipient.localhost';
const NOBODY = `no-such-user@${REMOTE}`;

/** A free port of this suite's range (42000-42999) for Postfix's smtpd, which cannot take port 0 and say which. */
async function freePortInRange(from = 42_025, to = 42_999): Promise<number> {
  for (let port = from; port <= to; port++) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port in ${from}-${to}`);
}

describe.skipIf(missing !== undefined)('a real DSN from Postfix', { timeout: 60_000 }, () => {
  let service: TestService;
  let postfix: Postfix;
  let receiver: WebhookReceiver;
  let grant: string;

  beforeAll(async () => {
    const port = await freePortInRange();
    receiver = await startReceiver();
    service = await startTestService({
      env: {
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${port}`,
        AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true',
        AGENTPOST_OUTBOUND_RETRY_SCHEDULE: '1s',
      },
    });
    postfix = startPostfix({
      port,
      domain: REMOTE,
      transports: { [DOMAIN]: { host: '127.0.0.1', port: service.smtpPort } },
    });
    grant = await createMailbox(service, SENDER);
  }, 60_000);
  afterAll(async () => {
    postfix?.stop();
    await service?.close();
    await receiver?.close();
  });

  it('a send to an unknown user bounces through Postfix back to us as a signed message.bounce_detected, and the address is suppressed', async () => {
    const { data: webhook } = await service.nylas.webhooks.create({
      requestBody: { triggerTypes: [WebhookTriggers.MessageBounceDetected], webhookUrl: receiver.url },
    });
    const sent = await service.nylas.messages.send({
      identifier: grant,
      requestBody: { to: [{ email: NOBODY }], subject: 'Hello, is anybody there?', body: 'Hi' },
    });
    service.background.wake();

    const [delivery] = await receiver.waitForDeliveries(1, 45_000).catch((error: unknown) => {
      throw new Error(`no webhook: ${String(error)}\n--- postfix log ---\n${postfix.log().slice(-4000)}`);
    });
    expect(delivery!.headers['x-nylas-signature']).toBe(
      createHmac('sha256', webhook.webhookSecret).update(delivery!.body).digest('hex'),
    );
    expect(delivery!.json).toMatchObject({
      type: 'message.bounce_detected',
      data: {
        grant_id: grant,
        object: {
          object: 'message',
          id: sent.data.id,
          grant_id: grant,
          subject: 'Hello, is anybody there?',
          bounce: {
            type: 'hard',
            recipient: NOBODY,
            code: '5.1.1',
            source: 'dsn',
            reason: expect.stringContaining('unknown user'),
          },
        },
      },
    });
    // Postfix's log: the message came with a return path of ours, and the DSN went to it, relayed to our listener.
    const returnPath = new RegExp(`bounce\\+[0-9a-z_]+-0-[a-z2-7]{16}@${DOMAIN.replace(/\./g, '\\.')}`).source;
    expect(postfix.log()).toMatch(new RegExp(`from=<${returnPath}>`));
    await eventually(
      async () =>
        new RegExp(
          `to=<${returnPath}>, relay=127\\.0\\.0\\.1\\[127\\.0\\.0\\.1\\]:${service.smtpPort}.*status=sent`,
        ).test(postfix.log())
          ? true
          : undefined,
      10_000,
    );

    const message = await service.nylas.messages.find({ identifier: grant, messageId: sent.data.id });
    const [status] = (
      message.data as unknown as {
        deliveryStatus: { email: string; status: string; bounce?: { type: string; code: string } }[];
      }
    ).deliveryStatus;
    expect(status).toMatchObject({ email: NOBODY, status: 'failed', bounce: { type: 'hard', code: '5.1.1' } });

    const refused = await sdkError(
      service.nylas.messages.send({
        identifier: grant,
        requestBody: { to: [{ email: NOBODY }], subject: 'Again', body: 'Hi' },
      }),
    );
    expect(refused.statusCode).toBe(400);
    expect(refused.message).toContain(`${NOBODY} (hard bounce)`);
  });
});
