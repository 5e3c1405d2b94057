/**
 * Where outbound mail goes without a relay (the recipient domain's MX hosts by preference, the domain's own
 * address without MX, nothing for a null MX or a domain that does not exist) and through a relay that wants
 * credentials. DNS is the test's resolver; the "mail servers" are SMTP sinks on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const SENDER = 'router@routes.agentpost.localhost';

describe('outbound routes', () => {
  let sink: SmtpSink;
  let authSink: SmtpSink;
  let direct: TestService;
  let relayed: TestService;
  let directGrant: string;
  let relayedGrant: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    authSink = await startSmtpSink({ auth: { user: 'relay-user', pass: 'p@ss word' } });
    direct = await startTestService({ env: { AGENTPOST_SMTP_DELIVERY_PORT: String(sink.port) } });
    relayed = await startTestService({ env: { AGENTPOST_SMTP_RELAY: `smtp://relay-user:${encodeURIComponent('p@ss word')}@127.0.0.1:${authSink.port}` } });
    directGrant = await createMailbox(direct, SENDER);
    relayedGrant = await createMailbox(relayed, SENDER);
  });
  afterAll(async () => {
    await direct?.close();
    await relayed?.close();
    await sink?.close();
    await authSink?.close();
  });

  async function statuses(service: TestService, grant: string, messageId: string) {
    return eventually(async () => {
      const message = await service.nylas.messages.find({ identifier: grant, messageId });
      const list = (message.data as unknown as { deliveryStatus?: { email: string; status: string; code?: number; response?: string }[] }).deliveryStatus ?? [];
      return list.length > 0 && list.every((entry) => entry.status !== 'queued') ? list : undefined;
    });
  }

  it('delivers to the MX hosts in preference order, moving on when one does not answer', async () => {
    // mx1 (preferred) has an address nothing listens on; mx2 is the sink.
    direct.dns.mx.set('mx-domain.example', [
      { exchange: 'mx2.mx-domain.example', priority: 20 },
      { exchange: 'mx1.mx-domain.example', priority: 10 },
    ]);
    direct.dns.hosts.set('mx1.mx-domain.example', ['127.0.0.2']);
    direct.dns.hosts.set('mx2.mx-domain.example', ['127.0.0.1']);
    const sent = await direct.nylas.messages.send({ identifier: directGrant, requestBody: { to: [{ email: 'someone@mx-domain.example' }], subject: 'via MX', body: 'x' } });
    const [status] = await statuses(direct, directGrant, sent.data.id);
    expect(status).toMatchObject({ email: 'someone@mx-domain.example', status: 'delivered', code: 250 });
    expect(sink.messages.some((message) => message.rcptTo.includes('someone@mx-domain.example'))).toBe(true);
  });

  it('without an MX record delivers to the domain\'s own address (implicit MX)', async () => {
    direct.dns.hosts.set('implicit.example', ['127.0.0.1']);
    const sent = await direct.nylas.messages.send({ identifier: directGrant, requestBody: { to: [{ email: 'a@implicit.example' }], subject: 'implicit', body: 'x' } });
    const [status] = await statuses(direct, directGrant, sent.data.id);
    expect(status).toMatchObject({ status: 'delivered' });
  });

  it('a null MX or a domain that does not exist fails for good at once', async () => {
    direct.dns.mx.set('nullmx.example', [{ exchange: '', priority: 0 }]);
    const sent = await direct.nylas.messages.send({
      identifier: directGrant,
      requestBody: { to: [{ email: 'a@nullmx.example' }, { email: 'b@does-not-exist.example' }], subject: 'nowhere', body: 'x' },
    });
    const list = await statuses(direct, directGrant, sent.data.id);
    expect(list.find((entry) => entry.email === 'a@nullmx.example')).toMatchObject({ status: 'failed', code: 556 });
    expect(list.find((entry) => entry.email === 'b@does-not-exist.example')).toMatchObject({ status: 'failed', code: 550 });
  });

  it('authenticates to a relay with the credentials of AGENTPOST_SMTP_RELAY', async () => {
    const sent = await relayed.nylas.messages.send({ identifier: relayedGrant, requestBody: { to: [{ email: 'x@anywhere.example' }], subject: 'relayed', body: 'x' } });
    const [status] = await statuses(relayed, relayedGrant, sent.data.id);
    expect(status).toMatchObject({ status: 'delivered' });
    expect(authSink.messages.at(-1)?.user).toBe('relay-user');
  });
});
