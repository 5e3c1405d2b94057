/**
 * Hostile MIME over real SMTP: each message is accepted and stored raw (with whatever parsed, or its parse error)
 * or refused before 250, and the event loop of the process (the server's and this test's) never stalls for 100 ms
 * while it is received, parsed and committed.
 */
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { asReceived, createMailbox, rawSmtp, sendRaw } from '../helpers/mail.js';
import { startTestService, type TestService } from '../helpers/service.js';

const DOMAIN = 'bombs.agentpost.localhost';
const EMAIL = `target@${DOMAIN}`;

function head(id: string, extra = ''): string {
  return `From: bomber@example.com\r\nTo: ${EMAIL}\r\nSubject: bomb ${id}\r\nMessage-ID: <${id}@bomb.example>\r\nMIME-Version: 1.0\r\n${extra}`;
}

/** The bombs of the issue, each a complete message with CRLF line ends and no line starting with a dot. */
function buildBombs(): Record<string, Buffer> {
  const siblings: string[] = [];
  for (let index = 0; index < 5000; index++) {
    siblings.push(
      `--s\r\nContent-Type: application/octet-stream; name="p${index}.bin"\r\nContent-Disposition: attachment; filename="p${index}.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from(`part ${index}`).toString('base64')}\r\n`,
    );
  }
  let deep = 'Content-Type: text/plain\r\n\r\nthe core of the nesting\r\n';
  for (let level = 499; level >= 0; level--)
    deep = `Content-Type: multipart/mixed; boundary="d${level}"\r\n\r\n--d${level}\r\n${deep}--d${level}--\r\n`;
  const filler = Array.from({ length: 2048 }, () => 'x'.repeat(1020)).join('\r\n ');
  const base64 = randomBytes(7.5 * 1024 * 1024).toString('base64');
  let nested = 'From: core@example.com\r\nSubject: innermost\r\n\r\nthe innermost message\r\n';
  for (let level = 0; level < 50; level++)
    nested = `From: layer${level}@example.com\r\nSubject: layer ${level}\r\nContent-Type: message/rfc822\r\n\r\n${nested}`;
  return {
    siblings: Buffer.from(
      `${head('siblings', 'Content-Type: multipart/mixed; boundary="s"\r\n')}\r\n${siblings.join('')}--s--\r\n`,
    ),
    deep: Buffer.from(head('deep') + deep),
    header: Buffer.from(`${head('header', `X-Filler: ${filler}\r\n`)}\r\nA message with a 2 MB header.\r\n`),
    divs: Buffer.from(
      `${head('divs', 'Content-Type: text/html; charset=utf-8\r\n')}\r\n${'<div>'.repeat(210_000)}deep text\r\n`,
    ),
    base64: Buffer.from(
      `${head('base64', 'Content-Type: multipart/mixed; boundary="b"\r\n')}\r\n--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n--b\r\n` +
        `Content-Type: application/octet-stream; name="big.bin"\r\nContent-Disposition: attachment; filename="big.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64}\r\n--b--\r\n`,
    ),
    rfc822: Buffer.from(`${head('rfc822', 'Content-Type: message/rfc822\r\n')}\r\n${nested}`),
  };
}

describe('MIME bombs over SMTP', () => {
  let service: TestService;
  let grantId: string;
  let bombs: Record<string, Buffer>;

  beforeAll(async () => {
    service = await startTestService();
    grantId = await createMailbox(service, EMAIL);
    bombs = buildBombs();
    // Warm-up: the first delivery loads modules and starts the parser and checkpoint threads; that start-up cost
    // is not what is measured.
    const warmUp = `From: warm@example.com\r\nTo: ${EMAIL}\r\nSubject: warm-up\r\nContent-Type: multipart/mixed; boundary=w\r\n\r\n--w\r\nContent-Type: text/html\r\n\r\n<p>hi</p>\r\n--w\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\nAAEC\r\n--w--\r\n`;
    expect((await sendRaw(service.smtpPort, 'warm@example.com', [EMAIL], warmUp)).code).toBe(250);
  });
  afterAll(async () => {
    await service?.close();
  });

  it.each([
    ['siblings', '5,000 sibling parts'],
    ['deep', '500-deep multipart nesting'],
    ['header', 'a 2 MB header'],
    ['divs', '1 MB of nested <div>'],
    ['base64', '10 MB of Base64 without line breaks'],
    ['rfc822', '50 nested message/rfc822'],
  ])('%s: %s is stored raw or refused, without stalling the event loop', async (name) => {
    const data = bombs[name]!;
    expect(data.length).toBeGreaterThan(name === 'deep' || name === 'rfc822' ? 4_000 : 800_000);
    // A stall caused by this code happens on every delivery; one caused by another process taking the CPU does
    // not. So the same message is delivered up to three times and the best run must stay under 100 ms.
    const stalls: number[] = [];
    let reply = { code: 0, text: '' };
    for (let attempt = 0; attempt < 3; attempt++) {
      const client = await rawSmtp(service.smtpPort);
      await client.command('EHLO bomber.example');
      await client.command('MAIL FROM:<bomber@example.com>');
      expect((await client.command(`RCPT TO:<${EMAIL}>`)).code).toBe(250);
      expect((await client.command('DATA')).code).toBe(354);
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      for (let offset = 0; offset < data.length; offset += 64 * 1024)
        await client.write(data.subarray(offset, offset + 64 * 1024));
      reply = await client.command('.', 60_000);
      delay.disable();
      client.end();
      stalls.push(delay.max / 1e6);
      if (delay.max / 1e6 < 100 || reply.code !== 250) break;
    }
    const best = Math.min(...stalls);
    expect(best, `the event loop stalled for ${stalls.map((stall) => stall.toFixed(0)).join(', ')} ms`).toBeLessThan(
      100,
    );

    if (reply.code !== 250) {
      // Refusing is allowed, but only with a permanent error before 250, and nothing stored.
      expect(reply.code).toBeGreaterThanOrEqual(500);
      return;
    }
    const rows = await service.core.deps.db.orm
      .select()
      .from(tables.messages)
      .where(eq(tables.messages.headerMessageId, `${name}@bomb.example`));
    expect(rows.length).toBeGreaterThanOrEqual(1);
    const stored = await service.nylas.messages.find({
      identifier: grantId,
      messageId: rows[0]!.id,
      queryParams: { fields: 'raw_mime' as never },
    });
    expect(Buffer.compare(asReceived(Buffer.from(stored.data.rawMime!, 'base64url')), data)).toBe(0);
    const message = (await service.nylas.messages.find({ identifier: grantId, messageId: rows[0]!.id })).data;
    expect(message.subject === `bomb ${name}` || rows[0]!.parseError !== null).toBe(true);
    if (name === 'base64' && rows[0]!.parseError === null) {
      const big = message.attachments!.find((attachment) => attachment.filename === 'big.bin')!;
      expect(big.size).toBe(7.5 * 1024 * 1024);
    }
    if (name === 'siblings' && rows[0]!.parseError === null) expect(message.attachments!.length).toBe(5000);
  });

  it('still delivers an ordinary message afterwards', async () => {
    const reply = await sendRaw(
      service.smtpPort,
      'friend@example.com',
      [EMAIL],
      `From: friend@example.com\r\nTo: ${EMAIL}\r\nSubject: all clear\r\n\r\nhello\r\n`,
    );
    expect(reply.code).toBe(250);
    expect(
      (await service.nylas.messages.list({ identifier: grantId, queryParams: { subject: 'all clear' } })).data,
    ).toHaveLength(1);
  });
});
