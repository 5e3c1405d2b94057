import { afterAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createMimeParser, readRawHeaders } from '../../../src/mime/parse-inbound.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('parseInbound (mailparser on worker threads)', () => {
  const parser = createMimeParser({ workers: 2 });
  afterAll(() => parser.close());

  it('normalises addresses, threading headers, dates, bodies and attachments', async () => {
    const raw = Buffer.from(
      [
        'From: "Ann Example" <ann@example.com>',
        'To: bob@example.org, Team: carol@example.net, dave@example.net;',
        'Cc: =?UTF-8?Q?Jos=C3=A9?= <jose@example.com>',
        'Reply-To: replies@example.com',
        'Subject: =?UTF-8?Q?Caf=C3=A9_plans?=',
        'Date: Tue, 03 Mar 2026 10:00:00 +0000',
        'Message-ID: <m3@example.com>',
        'In-Reply-To: <m2@example.com>',
        'References: <m1@example.com>\r\n <m2@example.com>',
        'Content-Type: multipart/mixed; boundary=b',
        '',
        '--b',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Hello <team> & friends',
        '--b',
        'Content-Type: application/pdf; name=plan.pdf',
        'Content-Disposition: attachment; filename=plan.pdf',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('%PDF-1.4 bytes').toString('base64'),
        '--b--',
        '',
      ].join('\r\n'),
    );
    const result = await parser.parse(raw);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.rawHash).toBe(sha256(raw));
    const value = result.value;
    expect(value.subject).toBe('Café plans');
    expect(value.from).toEqual([{ name: 'Ann Example', email: 'ann@example.com' }]);
    expect(value.to.map((entry) => entry.email)).toEqual(['bob@example.org', 'carol@example.net', 'dave@example.net']);
    expect(value.cc).toEqual([{ name: 'José', email: 'jose@example.com' }]);
    expect(value.replyTo).toEqual([{ email: 'replies@example.com' }]);
    expect(value.messageId).toBe('m3@example.com');
    expect(value.inReplyTo).toBe('m2@example.com');
    expect(value.references).toEqual(['m1@example.com', 'm2@example.com']);
    expect(value.date).toBe(Date.parse('2026-03-03T10:00:00Z'));
    expect(value.body).toBe('<div>Hello &lt;team&gt; &amp; friends</div>');
    expect(value.snippet).toBe('Hello <team> & friends');
    expect(value.attachments).toHaveLength(1);
    const [attachment] = value.attachments;
    expect(attachment).toMatchObject({
      filename: 'plan.pdf',
      contentType: 'application/pdf',
      disposition: 'attachment',
      isInline: false,
    });
    expect(attachment!.content.toString()).toBe('%PDF-1.4 bytes');
    expect(attachment!.hash).toBe(sha256(Buffer.from('%PDF-1.4 bytes')));
  });

  it('takes the snippet and search text from HTML without scripts or styles, and survives unclosed tags', async () => {
    const html =
      '<html><head><style>p{color:red}</style></head><body><script>alert(1)</script><p>Visible &amp; clear&#33;</p>' +
      '<'.repeat(50_000);
    const result = await parser.parse(Buffer.from(`Subject: html\r\nContent-Type: text/html\r\n\r\n${html}\r\n`));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.snippet).toBe('Visible & clear!');
    expect(result.value.body).toContain('<p>Visible &amp; clear&#33;</p>');
    expect(result.value.searchText).not.toContain('alert');
  });

  it('fails a parse that overruns its deadline, replaces the worker, and goes on parsing', async () => {
    const slow = createMimeParser({ workers: 1, timeoutMs: 1 });
    try {
      const big = Buffer.from(`Subject: big\r\n\r\n${'line of text\r\n'.repeat(200_000)}`);
      const result = await slow.parse(big);
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error).toContain('longer than 1 ms');
        expect(result.rawHash).toBe(sha256(big));
      }
    } finally {
      await slow.close();
    }
    // The shared pool is unaffected and a closed pool answers with an error, not a hang.
    expect((await parser.parse(Buffer.from('Subject: after\r\n\r\nok\r\n'))).ok).toBe(true);
    expect(await slow.parse(Buffer.from('Subject: x\r\n\r\ny'))).toMatchObject({
      ok: false,
      error: 'the MIME parser is closed',
    });
  });

  it('reads raw header lines unfolded, bounded in bytes and count', () => {
    const raw = Buffer.from(
      'Subject: a\r\n folded\r\nX-Empty:\r\nbad line\r\nTo: b@example.com\r\n\r\nBody: not a header\r\n',
    );
    expect(readRawHeaders(raw)).toEqual([
      { name: 'Subject', value: 'a folded' },
      { name: 'X-Empty', value: '' },
      { name: 'To', value: 'b@example.com' },
    ]);
    const many = Buffer.from(
      `${Array.from({ length: 50 }, (_, index) => `X-${index}: ${index}`).join('\r\n')}\r\n\r\n`,
    );
    expect(readRawHeaders(many, 1024, 10)).toHaveLength(10);
    const huge = Buffer.from(`X-Huge: ${'a'.repeat(2 * 1024 * 1024)}\r\n\r\n`);
    expect(readRawHeaders(huge, 1024)[0]!.value.length).toBeLessThan(1024);
  });
});
