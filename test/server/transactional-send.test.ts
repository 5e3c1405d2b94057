/**
 * `POST /v3/domains/{domain}/messages/send` through the nylas SDK's `transactionalSend`: a send from a verified
 * domain of the calling application without a mailbox, out through the same queue as mailbox sends (a local
 * recipient has it at once, a remote one through the relay), with no sender's copy stored anywhere.
 */
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/http.js';
import { createMailbox, eventually } from '../helpers/mail.js';
import { sdkError } from '../helpers/sdk.js';
import { startTestService, type Nylas, type TestService } from '../helpers/service.js';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.js';

const DOMAIN = 'notify.agentpost.localhost';
const INBOX = `inbox@${DOMAIN}`;

describe('transactional send from a domain', () => {
  let service: TestService;
  let sink: SmtpSink;
  let inbox: string;
  let other: Nylas;

  beforeAll(async () => {
    sink = await startSmtpSink();
    service = await startTestService({ env: { AGENTPOST_SMTP_RELAY: `smtp://127.0.0.1:${sink.port}` } });
    inbox = await createMailbox(service, INBOX);
    other = service.client(
      (await service.core.accounts.applications.createApplication({ name: 'Second', plan: 'trial' })).apiKey,
    );
  });
  afterAll(async () => {
    await service?.close();
    await sink?.close();
  });

  async function messageCount(): Promise<number> {
    const rows = await service.core.deps.db.client.execute('select count(*) as n from messages');
    return Number(rows.rows[0]!.n);
  }

  it("sends to a local mailbox at once and to a remote address through the relay, keeping no sender's copy", async () => {
    const before = await messageCount();
    const attachment = Buffer.from('receipt body');
    const sent = await service.nylas.transactionalSend.send({
      domainName: DOMAIN,
      requestBody: {
        from: [{ name: 'Receipts', email: `receipts@${DOMAIN}` }],
        to: [{ email: INBOX }, { email: 'customer@example.com' }],
        bcc: [{ email: 'audit@example.org' }],
        subject: 'Your receipt',
        body: '<p>Thanks</p>',
        attachments: [{ filename: 'receipt.txt', contentType: 'text/plain', content: attachment.toString('base64') }],
      },
    });
    expect(sent.requestId).toEqual(expect.any(String));
    expect(sent.data.messageId).toEqual(expect.any(String));

    // The local recipient has it when the call returns; it is the only new stored message (no sent copy).
    const received = await service.nylas.messages.list({ identifier: inbox, queryParams: { subject: 'Your receipt' } });
    expect(received.data).toHaveLength(1);
    expect(received.data[0]).toMatchObject({
      from: [{ name: 'Receipts', email: `receipts@${DOMAIN}` }],
      folders: ['inbox'],
    });
    expect(received.data[0]!.attachments?.[0]).toMatchObject({ filename: 'receipt.txt', size: attachment.length });
    expect(await messageCount()).toBe(before + 1);

    // One SMTP transaction per recipient, each with its own VERP return path on the sender's domain.
    await sink.waitFor(2);
    expect(
      sink.messages.every((message) =>
        new RegExp(`^bounce\\+[0-9a-z_]+-[0-9a-v]+-[a-z2-7]{16}@${DOMAIN.replace(/\./g, '\\.')}$`).test(
          message.mailFrom,
        ),
      ),
    ).toBe(true);
    expect(sink.messages.flatMap((message) => message.rcptTo).sort()).toEqual([
      'audit@example.org',
      'customer@example.com',
    ]);
    const remote = sink.messages[0]!;
    const parsed = await simpleParser(remote.raw);
    expect(parsed.subject).toBe('Your receipt');
    expect(parsed.headers.get('bcc')).toBeUndefined();
    expect(parsed.messageId).toMatch(new RegExp(`@${DOMAIN.replace(/\./g, '\\.')}>$`));
    const outbound = await service.core.deps.db.client.execute({
      sql: 'select kind, grant_id, message_id from outbound_messages where id = ?',
      args: [sent.data.messageId],
    });
    expect(outbound.rows[0]).toMatchObject({ kind: 'transactional', grant_id: null, message_id: null });
  });

  it('takes `from` as one object (the Nylas wire form) and as a list of one (the SDK type allows both)', async () => {
    const base = { to: [{ email: INBOX }], body: 'b' };
    const single = await service.nylas.transactionalSend.send({
      domainName: DOMAIN,
      requestBody: { ...base, subject: 'From one object', from: { name: 'One', email: `one@${DOMAIN}` } as never },
    });
    expect(single.data.messageId).toEqual(expect.any(String));
    const listed = await service.nylas.transactionalSend.send({
      domainName: DOMAIN,
      requestBody: { ...base, subject: 'From a list', from: [{ name: 'List', email: `list@${DOMAIN}` }] },
    });
    expect(listed.data.messageId).toEqual(expect.any(String));
    for (const [subject, from] of [
      ['From one object', { name: 'One', email: `one@${DOMAIN}` }],
      ['From a list', { name: 'List', email: `list@${DOMAIN}` }],
    ] as const) {
      const received = await service.nylas.messages.list({ identifier: inbox, queryParams: { subject } });
      expect(
        received.data.map((message) => message.from),
        subject,
      ).toEqual([[from]]);
    }
    // Off the domain is refused in either form; a list of two senders is not a sender.
    const offDomain = await sdkError(
      service.nylas.transactionalSend.send({
        domainName: DOMAIN,
        requestBody: { ...base, subject: 's', from: { email: 'someone@example.com' } as never },
      }),
    );
    expect(offDomain.statusCode).toBe(400);
    expect(offDomain.message).toContain('from');
    const two = await sdkError(
      service.nylas.transactionalSend.send({
        domainName: DOMAIN,
        requestBody: { ...base, subject: 's', from: [{ email: `a@${DOMAIN}` }, { email: `b@${DOMAIN}` }] },
      }),
    );
    expect(two.statusCode).toBe(400);
    expect(two.message).toContain('from');
  });

  it('refuses a sender off the domain, no recipient, scheduling and attachments by id with 400 naming the field', async () => {
    const base = {
      from: [{ email: `receipts@${DOMAIN}` }],
      to: [{ email: 'customer@example.com' }],
      subject: 's',
      body: 'b',
    };
    const cases: [string, Record<string, unknown>][] = [
      ['from', { ...base, from: [{ email: 'someone@example.com' }] }],
      ['from', { ...base, from: undefined }],
      ['to', { ...base, to: [] }],
      ['send_at', { ...base, sendAt: Math.floor(Date.now() / 1000) + 3600 }],
      ['attachments.0.id', { ...base, attachments: [{ id: 'att_1' }] }],
      ['to.0.email', { ...base, to: [{ email: 'not an address' }] }],
    ];
    for (const [field, body] of cases) {
      const error = await sdkError(
        service.nylas.transactionalSend.send({ domainName: DOMAIN, requestBody: body as never }),
      );
      expect(error.statusCode, field).toBe(400);
      expect(error.type, field).toBe('invalid_request_error');
      expect(error.message, field).toContain(field);
    }
    const badName = await request(service.url, 'POST', '/v3/domains/not_a_domain/messages/send', {
      key: service.apiKey,
      body: base,
    });
    expect(badName.status).toBe(400);
    expect(badName.body).toMatchObject({
      request_id: expect.any(String),
      error: { type: 'invalid_request_error', message: expect.stringContaining('domain_name') },
    });
  });

  it("answers 404 for an unknown domain and another application's domain, and 400 for an unverified one", async () => {
    const body = { from: [{ email: `x@${DOMAIN}` }], to: [{ email: 'customer@example.com' }], subject: 's', body: 'b' };
    const unknown = await sdkError(
      service.nylas.transactionalSend.send({
        domainName: 'nowhere.agentpost.localhost',
        requestBody: { ...body, from: [{ email: 'x@nowhere.agentpost.localhost' }] },
      }),
    );
    expect(unknown.statusCode).toBe(404);
    const foreign = await sdkError(other.transactionalSend.send({ domainName: DOMAIN, requestBody: body }));
    expect(foreign.statusCode).toBe(404);
    expect(foreign.type).toBe('not_found_error');

    const registered = await request(service.url, 'POST', '/v3/admin/domains', {
      key: service.apiKey,
      body: { name: 'Custom', domain_address: 'mail.example.net' },
    });
    expect(registered.body.data.verified_ownership).toBe(false);
    const unverified = await sdkError(
      service.nylas.transactionalSend.send({
        domainName: 'mail.example.net',
        requestBody: { ...body, from: [{ email: 'x@mail.example.net' }] },
      }),
    );
    expect(unverified.statusCode).toBe(400);
    expect(unverified.message).toContain('not verified');
  });

  it('sends large attachments as multipart/form-data, as the SDK does from 3 MB', async () => {
    const big = Buffer.alloc(4 * 1024 * 1024, 7);
    const sent = await service.nylas.transactionalSend.send({
      domainName: DOMAIN,
      requestBody: {
        from: [{ email: `files@${DOMAIN}` }],
        to: [{ email: INBOX }],
        subject: 'Big file',
        body: 'see attached',
        attachments: [
          {
            filename: 'big.bin',
            contentType: 'application/octet-stream',
            content: big.toString('base64'),
            size: big.length,
          },
        ],
      },
    });
    expect(sent.data.messageId).toEqual(expect.any(String));
    const received = await eventually(
      async () =>
        (await service.nylas.messages.list({ identifier: inbox, queryParams: { subject: 'Big file' } })).data[0],
    );
    expect(received.attachments?.[0]).toMatchObject({ filename: 'big.bin', size: big.length });
  });
});
