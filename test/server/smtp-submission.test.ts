/**
 * SMTP submission for Agent Accounts over real sockets: nodemailer submits with an app password (a key scoped to one
 * grant, with mail.send) over STARTTLS and over implicit TLS to the service's own listeners; the message is delivered
 * to another hosted mailbox and, through a loopback relay, to a remote address; the Sent copy is stored; the send ran
 * through send_message with the face `smtp`. Refusals: a From that is not the grant's (550 5.7.1), AUTH before
 * STARTTLS on a non-loopback address (538), a key of another grant, a key without mail.send and an application key
 * (535), and a spent failed-authentication budget (454, shared with the HTTP API's 429). The certificate: self-signed
 * in the data directory without files, and the files' pair reloaded when they change.
 */
import { X509Certificate, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { simpleParser } from 'mailparser';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createFailedAuthentications,
  startSubmission,
  type OperationContext,
  type Permission,
} from '../../src/index.js';
import { selfSignedCertificate } from '../../src/submission/index.js';
import { request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const DOMAIN = 'submit.agentpost.localhost';
const SENDER = `agent@${DOMAIN}`;
const OTHER = `colleague@${DOMAIN}`;
const REMOTE = 'someone@remote.example';

/** An app password: a key made through `POST /v3/api-keys`, scoped to `grantId`, with `permissions`. */
async function scopedKey(
  service: TestService,
  grantIds: string | string[],
  permissions: Permission[],
): Promise<string> {
  const created = await request(service.url, 'POST', '/v3/api-keys', {
    key: service.apiKey,
    body: { name: 'app password', scope: { grant_ids: [grantIds].flat() }, permissions },
  });
  expect(created.status).toBe(201);
  return (created.body as { data: { key: string } }).data.key;
}

/** A nodemailer transport to a submission port. */
function transport(
  port: number,
  options: { implicit?: boolean; user: string; pass: string; host?: string; ignoreTLS?: boolean },
) {
  return nodemailer.createTransport({
    host: options.host ?? '127.0.0.1',
    port,
    secure: options.implicit ?? false,
    requireTLS: !options.implicit && !options.ignoreTLS,
    ignoreTLS: options.ignoreTLS ?? false,
    auth: { user: options.user, pass: options.pass },
    tls: { rejectUnauthorized: false },
  });
}

/** What nodemailer's failure carries. */
interface SmtpFailure {
  responseCode?: number;
  response?: string;
}
async function refusal(promise: Promise<unknown>): Promise<SmtpFailure> {
  try {
    await promise;
  } catch (error) {
    return error as SmtpFailure;
  }
  throw new Error('expected a refusal');
}

/** A non-loopback IPv4 address of this machine, if it has one. */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

describe('SMTP submission', () => {
  let service: TestService;
  let sink: SmtpSink;
  let sender: string;
  let other: string;
  let senderKey: string;
  const contexts: OperationContext[] = [];

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({
      env: {
        AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}`,
        AGENTPOST_SUBMISSION_PORT: '0',
        AGENTPOST_SUBMISSION_TLS_PORT: '0',
      },
    });
    sender = await createMailbox(service, SENDER);
    other = await createMailbox(service, OTHER);
    senderKey = await scopedKey(service, sender, ['mail.send']);
    // What send_message hands the outbound service: the context of each send.
    const outbound = service.core.sending.outbound;
    const send = outbound.send.bind(outbound);
    outbound.send = (principal, input, context) => {
      if (context) contexts.push(context as OperationContext);
      return send(principal, input, context);
    };
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  it('keeps a self-signed certificate in the data directory when no certificate files are set', () => {
    const dataDir = dirname(service.config.databaseUrl.replace(/^file:/, ''));
    expect(existsSync(join(dataDir, 'submission-tls.crt'))).toBe(true);
    expect(existsSync(join(dataDir, 'submission-tls.key'))).toBe(true);
    expect(service.submissionPort).toBeGreaterThan(0);
    expect(service.submissionTlsPort).toBeGreaterThan(0);
  });

  it('sends over STARTTLS: delivered to a hosted mailbox and through the relay, a Sent copy kept, face smtp', async () => {
    const before = contexts.length;
    const info = await transport(service.submissionPort!, { user: SENDER, pass: senderKey }).sendMail({
      from: { name: 'The Agent', address: SENDER },
      to: [OTHER, REMOTE],
      subject: 'Over STARTTLS',
      text: 'Plain words\n> with a quote & <angles>',
      attachments: [{ filename: 'notes.txt', content: 'attached text' }],
      headers: { 'X-Campaign': 'submission-test' },
    });
    expect(info.response).toMatch(/^250 2\.0\.0 Ok: sent as /);
    expect(info.accepted).toEqual([OTHER, REMOTE]);

    const delivered = await eventually(async () => {
      const list = await service.nylas.messages.list({ identifier: other, queryParams: { subject: 'Over STARTTLS' } });
      return list.data[0];
    });
    expect(delivered.from?.[0]).toMatchObject({ email: SENDER, name: 'The Agent' });
    expect(delivered.attachments?.map((attachment) => attachment.filename)).toEqual(['notes.txt']);

    const [relayed] = await sink.waitFor(1);
    expect(relayed!.rcptTo).toEqual([REMOTE]);
    const parsed = await simpleParser(relayed!.raw);
    expect(parsed.from?.value[0]?.address).toBe(SENDER);
    expect(parsed.text?.trim()).toBe('Plain words\n> with a quote & <angles>');
    expect(parsed.headers.get('x-campaign')).toBe('submission-test');
    expect(parsed.attachments.map((attachment) => attachment.content.toString())).toEqual(['attached text']);

    const sent = await service.nylas.messages.list({ identifier: sender, queryParams: { in: ['sent'] } });
    expect(sent.data.map((message) => message.subject)).toContain('Over STARTTLS');
    // The provenance of the send (issue 36, item 4): the app password's key, through the face smtp.
    const copy = sent.data.find((message) => message.subject === 'Over STARTTLS') as unknown as {
      provenance?: Record<string, unknown>;
    };
    // (The nylas SDK reads the answer's keys in camel case.)
    expect(copy.provenance).toMatchObject({ face: 'smtp', principal: 'api_key', tool: null, approvalId: null });
    expect(copy.provenance?.apiKeyId).toEqual(expect.any(String));
    expect(contexts.slice(before).map((context) => context.face)).toEqual(['smtp']);
    expect(contexts[before]!.principal.grantIds).toEqual(new Set([sender]));
  });

  it("a mail client's reply joins the thread of the message it answers (In-Reply-To)", async () => {
    const delivered = await service.core.mail.inbound.deliverInbound({
      rawMime: Buffer.from(
        `From: Client <${REMOTE}>\r\nTo: ${SENDER}\r\nSubject: Order 77\r\nMessage-ID: <Order-77@Client.Example>\r\n\r\nWhere is it?\r\n`,
      ),
      envelope: { mailFrom: REMOTE, rcptTo: [SENDER] },
    });
    const received = delivered.deliveries[0]!;
    await transport(service.submissionPort!, { user: SENDER, pass: senderKey }).sendMail({
      from: SENDER,
      to: REMOTE,
      subject: 'Re: Order 77',
      text: 'On its way.',
      inReplyTo: '<Order-77@Client.Example>',
      references: ['<Order-77@Client.Example>'],
    });
    const sent = await eventually(async () => {
      const list = await service.nylas.messages.list({ identifier: sender, queryParams: { subject: 'Re: Order 77' } });
      return list.data.find((message) => message.folders.includes('sent'));
    });
    expect(sent.threadId).toBe(received.threadId);
  });

  it('sends over implicit TLS, Bcc from the envelope', async () => {
    const info = await transport(service.submissionTlsPort!, {
      implicit: true,
      user: SENDER,
      pass: senderKey,
    }).sendMail({
      from: SENDER,
      to: OTHER,
      bcc: REMOTE,
      subject: 'Over implicit TLS',
      html: '<p>Hello <b>there</b></p>',
    });
    expect(info.response).toMatch(/^250 /);
    const delivered = await eventually(async () => {
      const list = await service.nylas.messages.list({
        identifier: other,
        queryParams: { subject: 'Over implicit TLS' },
      });
      return list.data[0];
    });
    expect(delivered.body).toContain('<b>there</b>');
    const relayed = (await sink.waitFor(2))[1]!;
    expect(relayed.rcptTo).toEqual([REMOTE]);
    expect((await simpleParser(relayed.raw)).headers.has('bcc')).toBe(false);
  });

  it('refuses another sender with 550 5.7.1, in MAIL FROM and in the From header, and sends nothing', async () => {
    const sessions = sink.sessions;
    const mailer = transport(service.submissionPort!, { user: SENDER, pass: senderKey });
    const envelope = await refusal(mailer.sendMail({ from: OTHER, to: REMOTE, subject: 'x', text: 'x' }));
    expect(envelope.responseCode).toBe(550);
    expect(envelope.response).toMatch(/^550 5\.7\.1 MAIL FROM must be /);
    const header = await refusal(
      mailer.sendMail({ envelope: { from: SENDER, to: [REMOTE] }, from: OTHER, to: REMOTE, subject: 'x', text: 'x' }),
    );
    expect(header.responseCode).toBe(550);
    expect(header.response).toMatch(/^550 5\.7\.1 From must be /);
    expect(sink.sessions).toBe(sessions);
  });

  it('refuses a key of another grant, one without mail.send, one of two grants and an application key with 535', async () => {
    const otherKey = await scopedKey(service, other, ['mail.send']);
    const readOnly = await scopedKey(service, sender, ['mail.read']);
    const twoGrants = await scopedKey(service, [sender, other], ['mail.send']);
    const cases: [string, string][] = [
      [SENDER, otherKey],
      [SENDER, readOnly],
      [SENDER, twoGrants],
      [SENDER, service.apiKey],
      [SENDER, 'agp_not_a_key_at_all_0000000000'],
    ];
    for (const [user, pass] of cases) {
      const failure = await refusal(
        transport(service.submissionPort!, { user, pass }).sendMail({ from: SENDER, to: OTHER, text: 'x' }),
      );
      expect(failure.responseCode, pass).toBe(535);
      expect(failure.response).toMatch(/^535 5\.7\.8 Authentication failed/);
    }
    // The key of the other grant sends as that grant only.
    const asOther = await refusal(
      transport(service.submissionPort!, { user: OTHER, pass: otherKey }).sendMail({
        from: SENDER,
        to: OTHER,
        text: 'x',
      }),
    );
    expect(asOther.responseCode).toBe(550);
  });

  it('takes AUTH without TLS from loopback only; a non-loopback address gets 538 before STARTTLS', async (context) => {
    const loopback = await transport(service.submissionPort!, {
      user: SENDER,
      pass: senderKey,
      ignoreTLS: true,
    }).sendMail({
      from: SENDER,
      to: OTHER,
      subject: 'loopback, no TLS',
      text: 'x',
    });
    expect(loopback.response).toMatch(/^250 /);
    if (!outsideAddress) return context.skip('this machine has no non-loopback IPv4 address to bind to');
    const listener = await startSubmission({
      port: 0,
      tlsPort: undefined,
      certFile: undefined,
      keyFile: undefined,
      dataDir: undefined,
      names: [outsideAddress],
      now: new Date(),
      random: randomBytes,
      host: outsideAddress,
      hostname: undefined,
      failedAuthentications: createFailedAuthentications(1_000, () => performance.now()),
      logger: service.core.deps.logger,
      maxHeaderBytes: 102_400,
      drainTimeoutMs: 1_000,
      authenticateApiKey: (key) => service.core.accounts.applications.authenticateApiKey(key),
      grantAddress: async (principal, grantId) =>
        (await service.core.accounts.grants.require(principal, grantId)).email,
      parse: (raw) => service.core.mail.inbound.parse(raw),
      requestId: () => 'request',
      send: () => Promise.reject(new Error('not reached')),
    });
    try {
      const plain = await refusal(
        transport(listener.port!, { host: outsideAddress, user: SENDER, pass: senderKey, ignoreTLS: true }).sendMail({
          from: SENDER,
          to: OTHER,
          text: 'x',
        }),
      );
      expect(plain.responseCode).toBe(538);
      expect(plain.response).toMatch(/^538 5\.7\.11 Encryption required/);
    } finally {
      await listener.close();
    }
  });
});

describe('SMTP submission: failed authentications and certificates', () => {
  it('counts failed AUTH against the address budget the HTTP API shares', async () => {
    let now = 0;
    const service = await startTestService({
      env: { AGENTPOST_SUBMISSION_PORT: '0', AGENTPOST_RATE_LIMIT_FAILED_AUTH: '3' },
      rateLimitClock: () => now,
    });
    try {
      const mailer = transport(service.submissionPort!, { user: SENDER, pass: 'agp_wrong_key_000000000000000000' });
      for (let attempt = 0; attempt < 3; attempt++)
        expect((await refusal(mailer.sendMail({ from: SENDER, to: OTHER, text: 'x' }))).responseCode).toBe(535);
      const spent = await refusal(mailer.sendMail({ from: SENDER, to: OTHER, text: 'x' }));
      expect(spent.responseCode).toBe(454);
      expect(spent.response).toMatch(/^454 4\.7\.0 Too many failed authentications/);
      const http = await request(service.url, 'GET', '/v3/grants', { key: service.apiKey });
      expect(http.status).toBe(429);
      now += 61_000;
      expect((await request(service.url, 'GET', '/v3/grants', { key: service.apiKey })).status).toBe(200);
    } finally {
      await service.close();
    }
  });

  it('presents the certificate files and takes a renewed pair at the next connection', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentpost-tls-'));
    const certFile = join(dir, 'cert.pem');
    const keyFile = join(dir, 'key.pem');
    const first = selfSignedCertificate(['first.example'], new Date(), randomBytes);
    writeFileSync(certFile, first.cert);
    writeFileSync(keyFile, first.key);
    const service = await startTestService({
      env: { AGENTPOST_SUBMISSION_TLS_PORT: '0', AGENTPOST_TLS_CERT_FILE: certFile, AGENTPOST_TLS_KEY_FILE: keyFile },
    });
    const presented = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tlsConnect(
          { host: '127.0.0.1', port: service.submissionTlsPort!, rejectUnauthorized: false },
          () => {
            resolve(socket.getPeerX509Certificate()!.subject);
            socket.destroy();
          },
        );
        socket.once('error', reject);
      });
    try {
      expect(await presented()).toBe('CN=first.example');
      const second = selfSignedCertificate(['second.example'], new Date(), randomBytes);
      writeFileSync(certFile, second.cert);
      writeFileSync(keyFile, second.key);
      expect(await presented()).toBe('CN=second.example');
      // A half-written renewal (a certificate without its key) is not taken: the pair before stays.
      writeFileSync(certFile, first.cert);
      expect(await presented()).toBe('CN=second.example');
      expect(new X509Certificate(second.cert).subject).toBe('CN=second.example');
    } finally {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
