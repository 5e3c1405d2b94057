/**
 * The header-section limit (AGENTPOST_MAX_HEADER_BYTES, Postfix's `header_size_limit`, 102,400 bytes by default):
 * mail over SMTP with a larger header section is refused with 552 5.3.4 and nothing is stored; at the limit it is
 * taken; the setting moves it; a message fetched from a connected account (which cannot be refused) is stored with the
 * fields past the limit discarded. Real listener, raw sockets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headerSectionBytes } from '../../src/mail/header-section.js';
import { startInboundSmtp } from '../../src/mail/inbound-smtp.js';
import { createMailbox, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'headers.agentpost.localhost';
const AGENT = `agent@${DOMAIN}`;

/** A message whose header section is exactly `bytes` bytes (a folded field fills it), with its subject. */
function messageWithHeader(bytes: number, subject: string): string {
  const head = `From: sender@example.com\r\nTo: ${AGENT}\r\nSubject: ${subject}\r\nX-Fold: a`;
  const lines = Math.floor((bytes - head.length) / 4);
  let header = `${head}${'\r\n b'.repeat(lines)}`;
  header += 'c'.repeat(bytes - header.length);
  const message = `${header}\r\n\r\nthe body\r\n`;
  expect(headerSectionBytes(Buffer.from(message))).toBe(bytes);
  return message;
}

describe('the header-section limit', () => {
  let service: TestService;
  let grantId: string;

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, AGENT);
  });
  afterAll(async () => {
    await service?.close();
  });

  const stored = async (subject: string) =>
    (await service.nylas.messages.list({ identifier: grantId, queryParams: { subject } })).data;

  it('refuses a header section over 102,400 bytes with 552 5.3.4 and stores nothing; takes one at the limit', async () => {
    const over = await sendRaw(
      service.smtpPort,
      'sender@example.com',
      [AGENT],
      messageWithHeader(102_401, 'over the limit'),
    );
    expect(over.code).toBe(552);
    expect(over.text).toMatch(/^552 5\.3\.4 Message header too large: the limit is 102400 bytes/);
    expect(await stored('over the limit')).toHaveLength(0);

    const at = await sendRaw(
      service.smtpPort,
      'sender@example.com',
      [AGENT],
      messageWithHeader(102_400, 'at the limit'),
    );
    expect(at.code).toBe(250);
    expect(await stored('at the limit')).toHaveLength(1);
  });

  it('refuses a field folded over 300,000 lines at once, and keeps serving', async () => {
    const reply = await sendRaw(
      service.smtpPort,
      'sender@example.com',
      [AGENT],
      `From: sender@example.com\r\nTo: ${AGENT}\r\nX-Fold: a\r\n${' b\r\n'.repeat(300_000)}\r\nbody\r\n`,
    );
    expect(reply.code).toBe(552);
    expect(
      (await sendRaw(service.smtpPort, 'sender@example.com', [AGENT], messageWithHeader(500, 'after the fold'))).code,
    ).toBe(250);
  });

  it('stores a fetched message (a connected account cannot refuse it) with the fields past the limit discarded', async () => {
    const raw = Buffer.from(
      messageWithHeader(150_000, 'fetched with a long header').replace(
        'X-Fold:',
        'Message-ID: <fetched@example.com>\r\nX-Fold:',
      ),
    );
    const applicationId = await service.core.accounts.applications.defaultApplicationId();
    const delivery = await service.core.mail.inbound.storeFetched({
      raw,
      applicationId,
      grantId,
      grant: { email: AGENT, provider: 'nylas' },
      folders: ['inbox'],
      unread: true,
      starred: false,
      date: Math.floor(Date.now() / 1000),
      links: () => [],
    });
    const message = await service.nylas.messages.find({
      identifier: grantId,
      messageId: delivery.messageId,
      queryParams: { fields: 'raw_mime' as never },
    });
    const kept = Buffer.from(
      (message.data as { rawMime?: string; raw_mime?: string }).rawMime ??
        (message.data as { raw_mime?: string }).raw_mime ??
        '',
      'base64url',
    );
    expect(headerSectionBytes(kept)).toBeLessThanOrEqual(102_400);
    expect(kept.toString()).toContain('Subject: fetched with a long header');
    expect(kept.toString()).not.toContain('X-Fold:');
    expect(kept.toString().endsWith('\r\n\r\nthe body\r\n')).toBe(true);
  });
});

describe('AGENTPOST_MAX_HEADER_BYTES', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ env: { AGENTPOST_MAX_HEADER_BYTES: '2048' } });
    await createMailbox(service, AGENT);
  });
  afterAll(async () => {
    await service?.close();
  });

  it('sets the limit', async () => {
    expect((await sendRaw(service.smtpPort, 'sender@example.com', [AGENT], messageWithHeader(2_048, 'at'))).code).toBe(
      250,
    );
    const over = await sendRaw(service.smtpPort, 'sender@example.com', [AGENT], messageWithHeader(2_049, 'over'));
    expect(over.text).toMatch(/^552 5\.3\.4 Message header too large: the limit is 2048 bytes/);
  });
});

describe('the header-section limit before the report intakes', () => {
  it('refuses a report to a return path whose header section is over the limit, before the intake reads it', async () => {
    const received: Buffer[] = [];
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    const listener = await startInboundSmtp({
      inbound: {
        checkRecipient: async () => ({ ok: false, code: 550, message: 'unknown' }) as never,
        deliverInbound: async () => ({ deliveries: [], rejected: [], parseError: undefined }),
      },
      reports: {
        checkAddress: async () => ({ kind: 'accept' }),
        receive: async ({ raw }: { raw: Buffer }) => {
          received.push(raw);
          return { recorded: ['r1'] };
        },
      } as never,
      logger: silent,
      host: '127.0.0.1',
      port: 0,
      maxHeaderBytes: 4_096,
    });
    try {
      const returnPath = `bounce+abc@${DOMAIN}`;
      const over = await sendRaw(
        listener.port,
        '',
        [returnPath],
        `From: MAILER-DAEMON@example.com\r\nX-Fold: a\r\n${' b\r\n'.repeat(2_000)}\r\nreport\r\n`,
      );
      expect(over.text).toMatch(/^552 5\.3\.4 Message header too large: the limit is 4096 bytes/);
      expect(received).toHaveLength(0);
      const within = await sendRaw(
        listener.port,
        '',
        [returnPath],
        'From: MAILER-DAEMON@example.com\r\nSubject: report\r\n\r\nreport\r\n',
      );
      expect(within.code).toBe(250);
      expect(received).toHaveLength(1);
    } finally {
      await listener.close();
    }
  });
});
