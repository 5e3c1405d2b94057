/**
 * The composer: what a message looks like on the wire, and that no value can start a header of its own even
 * when it bypasses the input schemas (the schemas refuse CR and LF; the composer flattens them as well).
 */
import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { htmlToText } from '../../../src/mime/normalize.js';
import { composeMime, parsedOf, type ComposeInput } from '../../../src/outbound/compose.js';

function input(overrides: Partial<ComposeInput> = {}): ComposeInput {
  return {
    from: { name: 'Agent', email: 'agent@example.org' },
    to: [{ name: 'Bob', email: 'bob@example.com' }],
    cc: [],
    bcc: [{ email: 'hidden@example.net' }],
    replyTo: [],
    subject: 'Hello',
    body: '<p>Hi <b>Bob</b></p><p>Second line &amp; more</p>',
    isPlaintext: false,
    attachments: [],
    messageId: 'abc123@example.org',
    date: new Date('2026-03-01T10:00:00Z'),
    inReplyTo: undefined,
    references: [],
    customHeaders: [],
    ...overrides,
  };
}

/** The header section of a raw message. */
function headerOf(raw: Buffer): string {
  const text = raw.toString('latin1');
  return text.slice(0, text.indexOf('\r\n\r\n'));
}

describe('composeMime', () => {
  it('writes the headers, an HTML body with a text alternative, and no Bcc', async () => {
    const raw = await composeMime(
      input({ inReplyTo: 'parent@example.com', references: ['root@example.com', 'parent@example.com'] }),
    );
    const head = headerOf(raw);
    expect(head).toMatch(/^Message-ID: <abc123@example\.org>$/m);
    expect(head).toMatch(/^Date: Sun, 01 Mar 2026 10:00:00 \+0000$/m);
    expect(head).toMatch(/^In-Reply-To: <parent@example\.com>$/m);
    expect(head).toMatch(/^References: <root@example\.com> <parent@example\.com>$/m);
    expect(head).not.toMatch(/^Bcc:/im);
    expect(raw.toString('latin1')).not.toContain('hidden@example.net');
    expect(raw.toString('latin1')).toContain('\r\n');
    expect(raw.toString('latin1')).not.toMatch(/[^\r]\n/);
    const parsed = await simpleParser(raw);
    expect(parsed.text?.trim()).toBe('Hi Bob\nSecond line & more');
    expect(parsed.html).toContain('<b>Bob</b>');
  });

  it('sends plain text only when asked, and keeps the body as written', async () => {
    const raw = await composeMime(input({ isPlaintext: true, body: 'line 1\nline <2>' }));
    const parsed = await simpleParser(raw);
    expect(parsed.html).toBe(false);
    expect(parsed.text?.trim()).toBe('line 1\nline <2>');
    expect(parsedOf(input({ isPlaintext: true, body: 'a <b>' })).body).toBe('<div>a &lt;b&gt;</div>');
  });

  it('flattens CR and LF in every header-bound value: nothing injected reaches the headers', async () => {
    const evil = '\r\nBcc: victim@example.com\r\nX-Injected: yes';
    const raw = await composeMime(
      input({
        subject: `Hello${evil}`,
        from: { name: `Agent${evil}`, email: 'agent@example.org' },
        to: [{ name: `Bob${evil}`, email: 'bob@example.com' }],
        replyTo: [{ name: `R${evil}`, email: 'r@example.com' }],
        customHeaders: [{ name: 'X-Tag', value: `v${evil}` }],
        attachments: [
          {
            filename: `a.txt${evil}`,
            contentType: 'text/plain',
            content: Buffer.from('x'),
            contentId: undefined,
            inline: false,
          },
        ],
        messageId: `id@example.org>${evil}`,
        inReplyTo: `p@example.com>${evil}`,
        references: [`r@example.com>${evil}`],
      }),
    );
    const lines = raw.toString('latin1').split('\r\n');
    expect(lines.filter((line) => /^bcc:/i.test(line))).toEqual([]);
    expect(lines.filter((line) => /^x-injected:/i.test(line))).toEqual([]);
    const parsed = await simpleParser(raw);
    expect(parsed.bcc).toBeUndefined();
    expect(parsed.headers.has('x-injected')).toBe(false);
    expect(parsed.subject).toContain('Hello');
  });

  it('puts inline parts (by Content-ID) beside the HTML and the others after it', async () => {
    const raw = await composeMime(
      input({
        body: '<img src="cid:pic">',
        attachments: [
          {
            filename: 'pic.png',
            contentType: 'image/png',
            content: Buffer.from([1, 2, 3]),
            contentId: 'pic',
            inline: true,
          },
          {
            filename: 'doc.pdf',
            contentType: 'application/pdf',
            content: Buffer.from([4, 5]),
            contentId: undefined,
            inline: false,
          },
        ],
      }),
    );
    const text = raw.toString('latin1');
    const related = text.indexOf('multipart/related');
    expect(text.indexOf('multipart/mixed')).toBeLessThan(related);
    expect(related).toBeLessThan(text.indexOf('Content-ID: <pic>'));
    expect(text.indexOf('Content-ID: <pic>')).toBeLessThan(text.indexOf('filename=doc.pdf'));
  });

  it('adds a text/calendar alternative and an invite.ics attachment to an iMIP message', async () => {
    const ics = 'BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nEND:VCALENDAR\r\n';
    const raw = await composeMime(
      input({ isPlaintext: true, body: 'You are invited', calendar: { method: 'REQUEST', ics } }),
    );
    const text = raw.toString('latin1');
    expect(text).toMatch(/Content-Type: multipart\/alternative/);
    expect(text).toMatch(/Content-Type: text\/calendar; charset=utf-8; method=REQUEST/);
    expect(text).toMatch(/Content-Type: application\/ics; name=invite\.ics/);
  });
});

describe('htmlToText', () => {
  it('drops style and script, decodes entities, and gets through hostile markup (one forward scan)', () => {
    expect(htmlToText('<style>p{}</style><p>a</p><script>x</script>b &lt;&#65;&gt;')).toBe('a\nb <A>');
    expect(htmlToText('<'.repeat(200_000))).toBe('');
    expect(htmlToText('<div>'.repeat(100_000))).toBe('');
    expect(htmlToText('<style>'.repeat(50_000))).toBe('');
  });
});
