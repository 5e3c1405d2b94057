/**
 * Deliverability of a connected account end to end (issue 23, point 5), with Debian's Dovecot (IMAP, LMTP, the auth
 * service) and Postfix (SMTP AUTH through Dovecot, delivery to Dovecot users by LMTP) on loopback, the grant made
 * through the connect flow and synced by the real sync: a tracked send leaves through Postfix with the pixel and
 * rewritten links, and opening and clicking give their signed webhooks with the label; a reply that another client
 * puts in the account's INBOX gives `thread.replied` once the sync brings it in; a DSN APPENDed to the INBOX gives
 * `message.bounce_detected` for the right message and recipient, and stays in the inbox.
 */
import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { ImapFlow } from 'imapflow';
import { simpleParser } from 'mailparser';
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tables } from '../../storage/index.js';
import { dovecotMissing, startDovecot, type Dovecot } from '../helpers/dovecot.js';
import { imapClient, imapConnectSettings } from '../helpers/imap-grant.js';
import { postfixMissing, startPostfix, type Postfix } from '../helpers/postfix.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { eventually, startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../helpers/webhooks.js';

const missing = dovecotMissing() ?? postfixMissing();
if (missing) console.warn(`imap-deliverability: skipped: ${missing}`);

/** Fixed ports of this file (36600-36619). */
const IMAP_PORT = 36601;
const LMTP_PORT = 36602;
const AUTH_PORT = 36603;
const SMTP_PORT = 36604;
const ALICE = { user: 'alice@example.test', password: 'alice-password-1' };
const BOB = { user: 'bob@example.test', password: 'bob-password-1' };
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const WAIT_MS = 20_000;

describe.skipIf(missing !== undefined)(
  "a connected account's tracking, replies and bounces (Dovecot and Postfix)",
  { timeout: 60_000 },
  () => {
    let dovecot: Dovecot;
    let postfix: Postfix;
    let service: TestService;
    let receiver: WebhookReceiver;
    let secret: string;
    let grant: string;
    let alice: ImapFlow;
    let bob: ImapFlow;
    /** The service's clock runs with real time, plus jumps the test makes (hits within seconds of a send are a scanner's). */
    let offset = 0;
    const clock = { now: () => new Date(Date.now() + offset) };

    const notified = (type: string, check: (delivery: ReceivedDelivery) => boolean = () => true) =>
      eventually(
        async () => receiver.deliveries.find((delivery) => delivery.json?.type === type && check(delivery)),
        WAIT_MS,
        type,
      );
    const signed = (delivery: ReceivedDelivery) =>
      delivery.headers['x-nylas-signature'] === createHmac('sha256', secret).update(delivery.body).digest('hex');

    /** The raw message of `path` with this Message-ID (without brackets), once it is there. */
    async function rawOnServer(client: ImapFlow, path: string, headerMessageId: string): Promise<Buffer> {
      return eventually(
        async () => {
          const lock = await client.getMailboxLock(path);
          try {
            const uids = (await client.search({ header: { 'message-id': headerMessageId } }, { uid: true })) || [];
            if (uids.length === 0) return undefined;
            const message = await client.fetchOne(String(uids[0]), { source: true }, { uid: true });
            return message ? message.source : undefined;
          } finally {
            lock.release();
          }
        },
        WAIT_MS,
        `${headerMessageId} in ${path}`,
      );
    }

    beforeAll(async () => {
      dovecot = await startDovecot({
        imapPort: IMAP_PORT,
        lmtpPort: LMTP_PORT,
        authPort: AUTH_PORT,
        users: [ALICE, BOB],
      });
      postfix = startPostfix({
        port: SMTP_PORT,
        domain: 'postfix.localhost',
        transports: {},
        saslAuthPort: AUTH_PORT,
        lmtp: { port: LMTP_PORT, domains: ['example.test'] },
      });
      receiver = await startReceiver();
      service = await startTestService({
        env: { AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true', AGENTPOST_WORKER_POLL_MS: '50' },
        deps: { clock },
      });
      const { data: webhook } = await service.nylas.webhooks.create({
        requestBody: {
          triggerTypes: [
            WebhookTriggers.MessageOpened,
            WebhookTriggers.MessageLinkClicked,
            WebhookTriggers.ThreadReplied,
            WebhookTriggers.MessageBounceDetected,
          ],
          webhookUrl: receiver.url,
        },
      });
      secret = webhook.webhookSecret;
      const { data: created } = await service.nylas.auth.customAuthentication({
        requestBody: {
          provider: 'imap',
          settings: imapConnectSettings({
            user: ALICE.user,
            password: ALICE.password,
            imapPort: IMAP_PORT,
            smtpPort: SMTP_PORT,
          }),
        },
      });
      grant = created.id;
      await service.core.accounts.sync.waitForInitialSync(grant, WAIT_MS);
      alice = await imapClient(IMAP_PORT, ALICE.user, ALICE.password);
      bob = await imapClient(IMAP_PORT, BOB.user, BOB.password);
    }, 60_000);
    afterAll(async () => {
      await alice?.logout().catch(() => undefined);
      await bob?.logout().catch(() => undefined);
      await service?.close();
      await receiver?.close();
      postfix?.stop();
      await dovecot?.stop();
    });

    it('a tracked send through Postfix: opened and clicked give signed webhooks with the label; a reply synced in gives thread.replied; a DSN in the INBOX gives message.bounce_detected', async () => {
      const { data: sent } = await service.nylas.messages.send({
        identifier: grant,
        requestBody: {
          to: [{ email: BOB.user }],
          subject: 'Tracked through Postfix',
          body: '<html><body><p>The <a href="https://plans.example.com/q4?x=1">plan</a>.</p></body></html>',
          trackingOptions: { opens: true, links: true, threadReplies: true, label: 'imap-q4' },
        },
      });
      const [outbound] = await service.core.deps.db.orm
        .select({ header: tables.outboundMessages.headerMessageId })
        .from(tables.outboundMessages)
        .where(eq(tables.outboundMessages.messageId, sent.id));
      const headerMessageId = outbound?.header ?? '';
      expect(headerMessageId).not.toBe('');

      // Bob's copy, delivered by Postfix to Dovecot: the pixel and the rewritten link are in it.
      const delivered = await simpleParser(await rawOnServer(bob, 'INBOX', headerMessageId));
      const html = String(delivered.html);
      const pixel = /\/t\/o\/([A-Za-z0-9_.-]+)"/.exec(html)?.[1];
      const link = /\/t\/l\/([A-Za-z0-9_.-]+)"/.exec(html)?.[1];
      expect(pixel).toBeDefined();
      expect(link).toBeDefined();
      expect(html).not.toContain('https://plans.example.com/q4');

      offset += 60_000;
      expect((await fetch(`${service.url}/t/o/${pixel}`, { headers: { 'user-agent': BROWSER } })).status).toBe(200);
      const clicked = await fetch(`${service.url}/t/l/${link}`, {
        redirect: 'manual',
        headers: { 'user-agent': BROWSER },
      });
      expect(clicked.headers.get('location')).toBe('https://plans.example.com/q4?x=1');
      for (const type of ['message.opened', 'message.link_clicked']) {
        const delivery = await notified(type, (candidate) => candidate.json.data.object.message_id === sent.id);
        expect(signed(delivery)).toBe(true);
        expect(delivery.json.data.object).toMatchObject({ grant_id: grant, label: 'imap-q4' });
      }

      // Bob answers from his own mail program: the reply lands in Alice's INBOX on her server, and the sync brings it in.
      const reply = [
        `From: ${BOB.user}`,
        `To: ${ALICE.user}`,
        'Subject: Re: Tracked through Postfix',
        `Message-ID: <reply-1@example.test>`,
        `In-Reply-To: <${headerMessageId}>`,
        `References: <${headerMessageId}>`,
        `Date: ${new Date().toUTCString()}`,
        '',
        'Looks good.',
        '',
      ].join('\r\n');
      await alice.append('INBOX', reply, []);
      const replied = await notified(
        'thread.replied',
        (candidate) => candidate.json.data.object.root_message_id === sent.id,
      );
      expect(signed(replied)).toBe(true);
      expect(replied.json.data.object).toMatchObject({ grant_id: grant, label: 'imap-q4', from_self: false });

      // A bounce notice for that message reaches Alice's INBOX as her provider would deliver it.
      const dsn = [
        'From: MAILER-DAEMON@postfix.localhost (Mail Delivery System)',
        `To: ${ALICE.user}`,
        'Subject: Undelivered Mail Returned to Sender',
        'Message-ID: <dsn-imap-1@postfix.localhost>',
        `Date: ${new Date().toUTCString()}`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/report; report-type=delivery-status; boundary="R"',
        '',
        '--R',
        'Content-Type: text/plain',
        '',
        'Your message could not be delivered.',
        '--R',
        'Content-Type: message/delivery-status',
        '',
        'Reporting-MTA: dns; postfix.localhost',
        '',
        `Final-Recipient: rfc822; ${BOB.user}`,
        'Action: failed',
        'Status: 5.2.2',
        'Diagnostic-Code: smtp; 552 5.2.2 Mailbox full',
        '',
        '--R',
        'Content-Type: text/rfc822-headers',
        '',
        `From: ${ALICE.user}`,
        `To: ${BOB.user}`,
        'Subject: Tracked through Postfix',
        `Message-ID: <${headerMessageId}>`,
        '',
        '--R--',
        '',
      ].join('\r\n');
      await alice.append('INBOX', dsn, []);
      const bounce = await notified(
        'message.bounce_detected',
        (candidate) => candidate.json.data.object.id === sent.id,
      );
      expect(signed(bounce)).toBe(true);
      expect(bounce.json.data.object).toMatchObject({
        grant_id: grant,
        message_id_header: `<${headerMessageId}>`,
        bounce: { recipient: BOB.user, code: '5.2.2', source: 'dsn' },
      });
      // The notice stays in the user's inbox, synced like any mail.
      const { data: inbox } = await service.nylas.messages.list({
        identifier: grant,
        queryParams: { subject: 'Undelivered Mail Returned to Sender' },
      });
      expect(inbox.map((message) => message.folders)).toEqual([['inbox']]);
    });
  },
);
