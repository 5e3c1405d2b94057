/**
 * Where outbound mail goes without a relay (the recipient domain's MX hosts by preference, the domain's own
 * address without MX, nothing for a null MX or a domain that does not exist), only to public addresses unless
 * AGENTPOST_ALLOW_PRIVATE_NETWORKS is set, and through a relay that wants credentials. DNS is the test's resolver; the "mail servers" are SMTP sinks on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmtpClient, SmtpSubmission } from '../../src/ports/index.js';
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
    // The "mail servers" are on loopback: this service lifts the address policy.
    direct = await startTestService({
      env: { AGENTPOST_SMTP_DELIVERY_PORT: String(sink.port), AGENTPOST_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    relayed = await startTestService({
      env: { AGENTPOST_SMTP_RELAY: `smtp://relay-user:${encodeURIComponent('p@ss word')}@127.0.0.1:${authSink.port}` },
    });
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
      const list =
        (
          message.data as unknown as {
            deliveryStatus?: { email: string; status: string; code?: number; response?: string }[];
          }
        ).deliveryStatus ?? [];
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
    const sent = await direct.nylas.messages.send({
      identifier: directGrant,
      requestBody: { to: [{ email: 'someone@mx-domain.example' }], subject: 'via MX', body: 'x' },
    });
    const [status] = await statuses(direct, directGrant, sent.data.id);
    expect(status).toMatchObject({ email: 'someone@mx-domain.example', status: 'delivered', code: 250 });
    expect(sink.messages.some((message) => message.rcptTo.includes('someone@mx-domain.example'))).toBe(true);
  });

  it("without an MX record delivers to the domain's own address (implicit MX)", async () => {
    direct.dns.hosts.set('implicit.example', ['127.0.0.1']);
    const sent = await direct.nylas.messages.send({
      identifier: directGrant,
      requestBody: { to: [{ email: 'a@implicit.example' }], subject: 'implicit', body: 'x' },
    });
    const [status] = await statuses(direct, directGrant, sent.data.id);
    expect(status).toMatchObject({ status: 'delivered' });
  });

  it('a null MX or a domain that does not exist fails for good at once', async () => {
    direct.dns.mx.set('nullmx.example', [{ exchange: '', priority: 0 }]);
    const sent = await direct.nylas.messages.send({
      identifier: directGrant,
      requestBody: {
        to: [{ email: 'a@nullmx.example' }, { email: 'b@does-not-exist.example' }],
        subject: 'nowhere',
        body: 'x',
      },
    });
    const list = await statuses(direct, directGrant, sent.data.id);
    expect(list.find((entry) => entry.email === 'a@nullmx.example')).toMatchObject({ status: 'failed', code: 556 });
    expect(list.find((entry) => entry.email === 'b@does-not-exist.example')).toMatchObject({
      status: 'failed',
      code: 550,
    });
  });

  it('authenticates to a relay with the credentials of AGENTPOST_SMTP_RELAY', async () => {
    const sent = await relayed.nylas.messages.send({
      identifier: relayedGrant,
      requestBody: { to: [{ email: 'x@anywhere.example' }], subject: 'relayed', body: 'x' },
    });
    const [status] = await statuses(relayed, relayedGrant, sent.data.id);
    expect(status).toMatchObject({ status: 'delivered' });
    expect(authSink.messages.at(-1)?.user).toBe('relay-user');
  });
});

describe('direct MX delivery and the address policy (no AGENTPOST_ALLOW_PRIVATE_NETWORKS)', () => {
  let sink: SmtpSink;
  let service: TestService;
  let grant: string;
  /** What the service asked its SMTP client to connect to (the real client behind it, for the loopback sink). */
  const submissions: SmtpSubmission[] = [];

  async function statuses(messageId: string) {
    return eventually(async () => {
      const message = await service.nylas.messages.find({ identifier: grant, messageId });
      const list =
        (
          message.data as unknown as {
            deliveryStatus?: { email: string; status: string; code?: number; response?: string }[];
          }
        ).deliveryStatus ?? [];
      return list.length > 0 && list.every((entry) => entry.status !== 'queued') ? list : undefined;
    });
  }

  beforeAll(async () => {
    sink = await startSmtpSink();
    // A public mail server cannot be reached from a test: its submissions are recorded and answered 250.
    const smtp: SmtpClient = {
      async send(submission) {
        submissions.push(submission);
        return { accepted: submission.envelope.to, rejected: [], response: '250 2.0.0 Ok: recorded' };
      },
      async close() {},
    };
    service = await startTestService({ env: { AGENTPOST_SMTP_DELIVERY_PORT: String(sink.port) }, deps: { smtp } });
    grant = await createMailbox(service, SENDER);
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  it('refuses an MX on loopback, private, metadata or mapped addresses for good, with the reason recorded, and connects to nothing', async () => {
    service.dns.mx.set('inside.example', [
      { exchange: 'mx1.inside.example', priority: 10 },
      { exchange: 'mx2.inside.example', priority: 20 },
    ]);
    service.dns.hosts.set('mx1.inside.example', ['127.0.0.1', '::ffff:7f00:1']);
    service.dns.hosts.set('mx2.inside.example', ['169.254.169.254', '10.0.0.25']);
    // Implicit MX: the domain's own address record.
    service.dns.hosts.set('loopback.example', ['::1']);
    const sent = await service.nylas.messages.send({
      identifier: grant,
      requestBody: {
        to: [{ email: 'a@inside.example' }, { email: 'b@loopback.example' }],
        subject: 'inward',
        body: 'x',
      },
    });
    const list = await statuses(sent.data.id);
    const inside = list.find((entry) => entry.email === 'a@inside.example');
    expect(inside).toMatchObject({ status: 'failed', code: 550 });
    expect(inside?.response).toMatch(/^5\.4\.4 the mail servers of inside\.example have only non-public addresses/);
    expect(inside?.response).toContain('mx1.inside.example → 127.0.0.1 (127.0.0.0/8 loopback');
    expect(inside?.response).toContain('169.254.169.254');
    expect(inside?.response).toContain('AGENTPOST_ALLOW_PRIVATE_NETWORKS=true');
    expect(list.find((entry) => entry.email === 'b@loopback.example')).toMatchObject({ status: 'failed', code: 550 });
    expect(submissions).toEqual([]);
    expect(sink.sessions).toBe(0);
  });

  it('skips the non-public addresses of a domain and connects to its public one by address, with the MX name for TLS', async () => {
    service.dns.mx.set('mixed.example', [
      { exchange: 'mx1.mixed.example', priority: 10 },
      { exchange: 'mx2.mixed.example', priority: 20 },
    ]);
    service.dns.hosts.set('mx1.mixed.example', ['192.168.1.10']);
    service.dns.hosts.set('mx2.mixed.example', ['fd00::25', '93.184.216.34']);
    const sent = await service.nylas.messages.send({
      identifier: grant,
      requestBody: { to: [{ email: 'c@mixed.example' }], subject: 'outward', body: 'x' },
    });
    const [status] = await statuses(sent.data.id);
    expect(status).toMatchObject({ email: 'c@mixed.example', status: 'delivered', code: 250 });
    expect(submissions.map((submission) => [submission.host, submission.servername])).toEqual([
      ['93.184.216.34', 'mx2.mixed.example'],
    ]);
    expect(sink.sessions).toBe(0);
  });
});
