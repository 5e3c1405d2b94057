/**
 * AGENTPOST_DNS_SERVERS: every look-up of the service goes to the configured resolver, here dnsmasq on loopback serving
 * names that exist nowhere else (`*.dns.test`): MX delivery (the MX and its address), the relay's host name, webhook
 * targets (the URL's host),
 * the authentication of received mail (SPF and DMARC records), and domain verification (test/server/dmarc.test.ts).
 */
import { WebhookTriggers } from 'nylas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, systemDns } from '../../src/index.js';
import { dnsmasqMissing, startDnsmasq, type Dnsmasq } from '../helpers/dnsmasq.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhooks.js';

const missing = dnsmasqMissing();
if (missing) console.warn(`dns-servers: skipped: ${missing}`);

const DNSMASQ_PORT = 36510;
const SENDER = 'agent@team.agentpost.localhost';

describe('AGENTPOST_DNS_SERVERS is read as a list of resolver addresses', () => {
  it('takes IPv4 and IPv6 addresses with or without a port, and refuses host names and bad ports', () => {
    expect(
      loadConfig({ AGENTPOST_DNS_SERVERS: ' 127.0.0.1:5353, [::1]:53,192.0.2.53,2001:db8::53 ' }).dnsServers,
    ).toEqual(['127.0.0.1:5353', '[::1]:53', '192.0.2.53', '2001:db8::53']);
    expect(loadConfig({}).dnsServers).toEqual([]);
    expect(() => loadConfig({ AGENTPOST_DNS_SERVERS: 'dns.example.com' })).toThrow(
      /AGENTPOST_DNS_SERVERS.*"dns\.example\.com" is not a resolver address/,
    );
    expect(() => loadConfig({ AGENTPOST_DNS_SERVERS: '127.0.0.1:70000' })).toThrow(/AGENTPOST_DNS_SERVERS/);
    expect(() => loadConfig({ AGENTPOST_DNS_SERVERS: '[::1]:0' })).toThrow(/AGENTPOST_DNS_SERVERS/);
    expect(loadConfig({ AGENTPOST_DNS_TIMEOUT: '2' }).dnsTimeoutMs).toBe(2_000);
  });
});

describe.skipIf(missing !== undefined)(
  'every look-up goes to AGENTPOST_DNS_SERVERS (dnsmasq)',
  { timeout: 60_000 },
  () => {
    let dns: Dnsmasq;
    let sink: SmtpSink;
    let receiver: WebhookReceiver;
    let service: TestService;
    let grant: string;

    beforeAll(async () => {
      sink = await startSmtpSink();
      receiver = await startReceiver();
      dns = await startDnsmasq(DNSMASQ_PORT, {
        localZones: ['dns.test'],
        mx: [['remote.dns.test', 'mx.remote.dns.test', 10]],
        hosts: [
          ['mx.remote.dns.test', '127.0.0.1'],
          ['hooks.dns.test', '127.0.0.1'],
          ['relay.dns.test', '127.0.0.1'],
          ['dual.dns.test', '127.0.0.1'],
          ['dual.dns.test', '::1'],
        ],
        txt: [
          ['sender.dns.test', 'v=spf1 ip4:203.0.113.7 -all'],
          ['_dmarc.sender.dns.test', 'v=DMARC1; p=quarantine'],
        ],
      });
      service = await startTestService({
        realDns: true,
        env: {
          AGENTPOST_DNS_SERVERS: dns.server,
          AGENTPOST_DNS_TIMEOUT: '1',
          AGENTPOST_SMTP_DELIVERY_PORT: String(sink.port),
          // The mail server and the webhook receiver are on loopback.
          AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true',
          AGENTPOST_ALLOW_PRIVATE_WEBHOOKS: 'true',
          AGENTPOST_WORKER_POLL_MS: '50',
        },
      });
      grant = await createMailbox(service, SENDER);
    });
    afterAll(async () => {
      await service?.close();
      await dns?.stop();
      await sink?.close();
      await receiver?.close();
    });

    it('resolves host addresses through the resolver: A and AAAA, localhost, and the errors of a missing name', async () => {
      const resolver = systemDns({ servers: [dns.server], timeoutMs: 500 });
      expect((await resolver.lookup('dual.dns.test')).sort((a, b) => a.family - b.family)).toEqual([
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]);
      expect(await resolver.lookup('localhost')).toEqual([
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ]);
      expect(await resolver.lookup('192.0.2.1')).toEqual([{ address: '192.0.2.1', family: 4 }]);
      await expect(resolver.lookup('nothing.dns.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
      // A name outside dnsmasq's zones: it has no upstream and refuses; a temporary error, not "no such host".
      await expect(resolver.lookup('example.org')).rejects.toMatchObject({ code: 'EREFUSED' });
    });

    it('delivers outbound mail to the MX that the resolver names', async () => {
      const sent = await service.nylas.messages.send({
        identifier: grant,
        requestBody: { to: [{ email: 'someone@remote.dns.test' }], subject: 'through dnsmasq', body: 'x' },
      });
      const delivered = await eventually(async () =>
        sink.messages.find((message) => message.rcptTo.includes('someone@remote.dns.test')),
      );
      expect(delivered.raw.toString()).toContain('Subject: through dnsmasq');
      const status = await eventually(async () => {
        const message = await service.nylas.messages.find({ identifier: grant, messageId: sent.data.id });
        const list = (message.data as unknown as { deliveryStatus?: { status: string }[] }).deliveryStatus ?? [];
        return list[0]?.status === 'delivered' ? list[0] : undefined;
      });
      expect(status).toMatchObject({ status: 'delivered' });
    });

    it('resolves the host name of AGENTPOST_SMTP_RELAY through the resolver', async () => {
      const relayed = await startTestService({
        realDns: true,
        env: {
          AGENTPOST_DNS_SERVERS: dns.server,
          AGENTPOST_SMTP_RELAY: `smtp://relay.dns.test:${sink.port}`,
          AGENTPOST_WORKER_POLL_MS: '50',
        },
      });
      try {
        const sender = await createMailbox(relayed, 'relayed@team.agentpost.localhost');
        await relayed.nylas.messages.send({
          identifier: sender,
          requestBody: { to: [{ email: 'someone@anywhere.example' }], subject: 'through the relay by name', body: 'x' },
        });
        const delivered = await eventually(async () =>
          sink.messages.find((message) => message.rcptTo.includes('someone@anywhere.example')),
        );
        expect(delivered.raw.toString()).toContain('Subject: through the relay by name');
      } finally {
        await relayed.close();
      }
    });

    it("checks a webhook URL's host through the resolver (and reaches it)", async () => {
      const url = receiver.url.replace('127.0.0.1', 'hooks.dns.test');
      const created = await service.nylas.webhooks.create({
        requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl: url },
      });
      expect(created.data.webhookUrl).toBe(url);
      expect(receiver.challenges.length).toBeGreaterThan(0);
      const unknown = await service.nylas.webhooks
        .create({
          requestBody: { triggerTypes: [WebhookTriggers.MessageCreated], webhookUrl: 'http://nowhere.dns.test/hook' },
        })
        .catch((error: { statusCode?: number; message?: string }) => error);
      expect(unknown).toMatchObject({ statusCode: 400 });
    });

    it('authenticates received mail with the SPF and DMARC records the resolver serves', async () => {
      const raw = Buffer.from(
        'From: someone@sender.dns.test\r\nTo: agent@team.agentpost.localhost\r\nSubject: hi\r\nMessage-ID: <a@sender.dns.test>\r\n\r\nhello\r\n',
      );
      const verdict = await service.core.mail.stages.authenticator({
        raw,
        mailFrom: 'someone@sender.dns.test',
        client: { address: '203.0.113.7', helo: 'mail.sender.dns.test' },
      });
      expect(verdict.spf).toEqual({ result: 'pass', domain: 'sender.dns.test' });
      expect(verdict.dmarc).toMatchObject({ result: 'pass', policy: 'quarantine' });
      const other = await service.core.mail.stages.authenticator({
        raw,
        mailFrom: 'someone@sender.dns.test',
        client: { address: '198.51.100.9', helo: 'elsewhere.dns.test' },
      });
      expect(other.spf).toEqual({ result: 'fail', domain: 'sender.dns.test' });
      expect(other.dmarc).toMatchObject({ result: 'fail', policy: 'quarantine' });
    });
  },
);
