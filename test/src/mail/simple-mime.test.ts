/**
 * The fast path (src/mime/simple-mime.ts) against mailparser itself: for every message the fast path
 * accepts, normalize() of its result must deep-equal normalize() of mailparser's result for the same bytes (and so
 * must the raw fields it hands over). Fixtures of common mail (single part, multipart/alternative as Gmail, Apple
 * Mail, Outlook and Thunderbird send it, multipart/mixed of text parts), fast-check properties over random messages
 * of each kind and over mangled multiparts, and the messages that must go to mailparser.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { normalize } from '../../../src/mime/normalize.js';
import {
  alternativeMessage as alternative,
  gmailAlternative,
  qpEncode,
  smtpSourceMessage,
} from '../../helpers/mime.js';
import { PARSER_OPTIONS } from '../../../src/mime/parse-worker.js';
import { parseSimpleMessage } from '../../../src/mime/simple-mime.js';

/** mailparser takes the current time for a Date header that does not parse: both sides must see the same clock. */
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
beforeAll(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: NOW });
});
afterAll(() => {
  vi.useRealTimers();
});

const ADDRESS_KEYS = ['from', 'to', 'cc', 'bcc', 'replyTo'] as const;
const FIELDS = ['subject', 'messageId', 'inReplyTo', 'references', 'text', 'html'] as const;

/** The fields of a simpleParser result the fast path hands over, comparable with toStrictEqual. */
function fields(mail: Record<string, unknown>) {
  const out: Record<string, unknown> = {};
  for (const key of FIELDS) out[key] = mail[key] === undefined ? undefined : mail[key];
  out.date = mail.date instanceof Date ? mail.date.getTime() : mail.date;
  for (const key of ADDRESS_KEYS) {
    const value = mail[key] as { value: unknown } | { value: unknown }[] | undefined;
    out[key] = value === undefined ? undefined : Array.isArray(value) ? value.map((entry) => entry.value) : value.value;
  }
  out.attachments = mail.attachments;
  return out;
}

/** Runs both parsers; when the fast path accepts the message, its results must equal mailparser's. */
async function differential(raw: Buffer) {
  const fast = parseSimpleMessage(raw);
  if (!fast) return undefined;
  const slow = (await simpleParser(raw, PARSER_OPTIONS)) as unknown as Record<string, unknown>;
  expect(fields(fast)).toStrictEqual(fields(slow));
  expect(normalize(fast).value).toStrictEqual(normalize(slow).value);
  return fast;
}

const crlf = (lines: (string | Buffer)[]) =>
  Buffer.concat(
    lines.map((line) =>
      typeof line === 'string' ? Buffer.from(`${line}\r\n`) : Buffer.concat([line, Buffer.from('\r\n')]),
    ),
  );
const b64Word = (text: string, charset = 'UTF-8') =>
  `=?${charset}?B?${Buffer.from(text, charset.toLowerCase() === 'utf-8' ? 'utf8' : 'latin1').toString('base64')}?=`;
const qWord = (text: string, charset = 'utf-8') =>
  `=?${charset}?Q?${[...Buffer.from(text, charset.toLowerCase() === 'utf-8' ? 'utf8' : 'latin1')].map((byte) => (byte === 0x20 ? '_' : /[A-Za-z0-9]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`)).join('')}?=`;

const wrap = (text: string, width = 76, eol = '\r\n') =>
  (text.match(new RegExp(`.{1,${width}}`, 'g')) ?? ['']).join(eol);

const HTML_BODY = `<html><head><meta charset="utf-8"><style>p{margin:0}</style></head><body><div dir="ltr">Hi Zoë,<br><br>Le café est à 9 h — see you there ✓ 🎉<br><a href="https://example.com/?a=1&amp;b=2">link</a></div></body></html>`;

/** Common single-part mail, each of which must take the fast path. */
const COMMON: Record<string, Buffer> = {
  'smtp-source (CRLF)': smtpSourceMessage(),
  'smtp-source (LF, smtp-sink headers)': smtpSourceMessage('\n', [
    'X-Client-Addr: 127.0.0.1',
    'X-Client-Proto: SMTP',
    'X-Helo-Args: vm',
    'X-Mail-Args: <sender@example.com>',
    'X-Rcpt-Args: <agent@bench.agentpost.localhost>',
    'Received: from vm ([127.0.0.1])',
    '\tby smtp-sink (smtp-sink) with SMTP id 1c7d8fc0;',
    '\tSun, 22 Nov 2026 03:13:01 +0000 (UTC)',
  ]),
  'gmail text/plain utf-8 quoted-printable, Q and B words': crlf([
    'MIME-Version: 1.0',
    'Received: by 2002:a05:6358:1234 with SMTP id x1csp123;',
    '        Tue, 3 Mar 2026 02:00:00 -0800 (PST)',
    `From: ${b64Word('Zoë Müller')} <zoe@gmail.com>`,
    `To: ${qWord('José Álvarez')} <jose@example.org>, "Bob, Jr." <bob@example.org>,`,
    ' carol@example.net',
    `Cc: ${qWord('Ünïcödé')} <u@example.com>`,
    `Subject: ${qWord('Café plans for 9 h — ✓')}`,
    ' ' + b64Word(' and more 🎉'),
    'Date: Tue, 3 Mar 2026 11:00:00 +0100',
    'Message-ID: <CAF=abc123+XYZ@mail.gmail.com>',
    'Content-Type: text/plain; charset="UTF-8"',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    qpEncode(
      Buffer.from(
        'Hi José,\n\nLe café est à 9 h — see you there ✓ 🎉   \nA very long line that goes on and on and on beyond seventy-six characters so it must be soft-wrapped by the encoder.\n\n-- \nZoë\n',
      ),
    ),
  ]),
  'gmail text/html utf-8 base64': crlf([
    'From: Ann <ann@gmail.com>',
    'To: bob@example.org',
    'Subject: =?UTF-8?B?SGVsbG8g8J+OiQ==?=',
    'Date: Wed, 04 Mar 2026 08:30:00 +0000',
    'Message-ID: <CAH1@mail.gmail.com>',
    'In-Reply-To: <prev@example.org>',
    'References: <root@example.org> <prev@example.org>',
    'Content-Type: text/html; charset="UTF-8"',
    'Content-Transfer-Encoding: base64',
    '',
    wrap(Buffer.from(HTML_BODY).toString('base64')),
  ]),
  'outlook text/html windows-1252 quoted-printable': crlf([
    'From: "Doe, Jane" <jane.doe@contoso.com>',
    'To: "Smith, John" <john.smith@contoso.com>; "Lee, Kim" <kim.lee@contoso.com>',
    'Subject: RE: =?iso-8859-1?Q?R=E9union_du_comit=E9?=',
    'Thread-Topic: Re: Réunion',
    'Thread-Index: AQHZ1234567890abcdef==',
    'Date: Thu, 5 Mar 2026 14:15:16 +0000',
    'Message-ID: <AM0PR01MB1234567890ABCDEF@AM0PR01MB1234.eurprd01.prod.outlook.com>',
    'References: <a1@x.com>',
    ' <a2@x.com>\t<a3@x.com>',
    'Content-Language: fr-FR',
    'Content-Type: text/html; charset="Windows-1252"',
    'Content-Transfer-Encoding: quoted-printable',
    'MIME-Version: 1.0',
    '',
    qpEncode(
      Buffer.from(
        '<html><body><p>R\u00e9union \u00e0 10 h \u2013 caf\u00e9 \u20ac</p>\n<p>Cordialement,</p></body></html>\n',
        'latin1',
      ),
    ),
  ]),
  'outlook text/plain iso-8859-1 8bit': crlf([
    'From: =?iso-8859-1?Q?J=FCrgen_K=F6nig?= <jk@example.de>',
    'To: team@example.de',
    'Subject: =?iso-8859-1?B?' + Buffer.from('Grüße aus Köln', 'latin1').toString('base64') + '?=',
    'Date: Fri, 6 Mar 2026 09:00:00 +0100',
    'Content-Type: text/plain; charset=iso-8859-1',
    'Content-Transfer-Encoding: 8bit',
    '',
    Buffer.from('Grüße aus Köln, ½ ¼ ¾ ©\r\nZweite Zeile', 'latin1'),
  ]),
  'apple mail text/plain us-ascii 7bit': crlf([
    'From: Tim <tim@icloud.com>',
    'Content-Type: text/plain;',
    '\tcharset=us-ascii',
    'Content-Transfer-Encoding: 7bit',
    'Mime-Version: 1.0 (Mac OS X Mail 16.0 \\(3731.500.231\\))',
    'Subject: Lunch?',
    'Message-Id: <A1B2C3D4-1234-5678-9ABC-DEF012345678@icloud.com>',
    'Date: Sat, 7 Mar 2026 12:34:56 -0800',
    'To: Craig <craig@example.com>',
    '',
    'Noon works.',
    '',
    'Sent from my iPhone',
  ]),
  'apple mail text/html utf-8 quoted-printable, inline disposition': crlf([
    'From: Tim <tim@icloud.com>',
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    'Content-Disposition: inline',
    'Subject: =?utf-8?Q?Caf=C3=A9?=',
    'Date: Sat, 7 Mar 2026 12:34:56 -0800',
    'To: Craig <craig@example.com>',
    '',
    qpEncode(Buffer.from(HTML_BODY)),
  ]),
  'undisclosed recipients group, bcc and reply-to': crlf([
    'From: list@example.com',
    'To: undisclosed-recipients:;',
    'Bcc: hidden@example.com',
    'Reply-To: Replies <replies@example.com>',
    'Cc: Team: a@example.com, "B" <b@example.com>;, solo@example.com',
    'Subject: group test',
    'Date: Sun, 8 Mar 2026 10:00:00 GMT',
    '',
    'body',
  ]),
  'duplicate headers': crlf([
    'From: first@example.com',
    'From: second@example.com',
    'To: a@example.com',
    'To: b@example.com, c@example.com',
    'Cc: c1@example.com',
    'Cc: c2@example.com',
    'Subject: first subject',
    'Subject: second subject',
    'Subject:',
    'Date: Mon, 9 Mar 2026 10:00:00 +0000',
    'Date: Tue, 10 Mar 2026 10:00:00 +0000',
    'Message-ID: <one@example.com>',
    'Message-ID: <two@example.com>',
    'References: <r1@example.com>',
    'References: <r2@example.com> <r3@example.com>',
    'In-Reply-To: <i1@example.com>',
    'In-Reply-To:',
    '',
    'body',
  ]),
  'missing date, message-id without brackets': crlf([
    'From: a@example.com',
    'To: b@example.com',
    'Message-ID: 1234.5678@host.example',
    'In-Reply-To: parent@host.example',
    'Subject: no date',
    '',
    'hello',
  ]),
  'invalid date': crlf([
    'From: a@example.com',
    'To: b@example.com',
    'Date: the day after tomorrow',
    'Subject: bad date',
    '',
    'hello',
  ]),
  'empty date': crlf(['From: a@example.com', 'Date:', '', 'hello']),
  'many references, folded': crlf([
    'From: a@example.com',
    'Subject: long thread',
    `References: ${Array.from({ length: 60 }, (_, index) => `<ref${index}.${'x'.repeat(index % 7)}@example.com>`).join('\r\n ')}`,
    'References: bare-id@example.com <last@example.com>',
    'Date: Wed, 11 Mar 2026 10:00:00 +0000',
    '',
    'reply',
  ]),
  'LF line endings': Buffer.from(
    'From: "Ann" <ann@example.com>\nTo: bob@example.org\nSubject: =?UTF-8?Q?LF_only_=E2=9C=93?=\nDate: Thu, 12 Mar 2026 10:00:00 +0000\nContent-Type: text/plain; charset=utf-8\n\nline one\nline two\n\nline four\n',
  ),
  'no trailing newline': Buffer.from('From: a@example.com\r\nSubject: x\r\n\r\nlast line without newline'),
  'mixed and bare CR line endings': Buffer.from(
    'From: a@example.com\r\nSubject: x\n\r\nline1\rstill line1\r\nline2\nline3\r',
  ),
  'empty body': crlf(['From: a@example.com', 'Subject: empty', 'Date: Thu, 12 Mar 2026 10:00:00 +0000', '']),
  'empty html body': crlf(['From: a@example.com', 'Content-Type: text/html', '', '']),
  'headers only, no empty line': Buffer.from('From: a@example.com\r\nTo: b@example.com\r\nSubject: headers only'),
  'no headers at all': Buffer.from('\r\njust a body\r\n'),
  'odd folding: indented first line, key only in a continuation, blank-looking continuation': Buffer.from(
    ' Subject: leading space\r\nTo\r\n : b@example.com\r\nFrom: a@example.com\r\n \r\n\tcontinued\r\n\r\nbody',
  ),
  'mbox From_ line': crlf([
    'From sender@example.com Thu Mar 12 10:00:00 2026',
    'From: a@example.com',
    'Subject: mbox',
    '',
    'body',
  ]),
  'header without colon, empty content-type, weird key case and spacing': crlf([
    'FROM : a@example.com',
    'this line has no colon',
    'Content-Type:',
    'sUbJeCt:   spaced   ',
    '',
    'body',
  ]),
  'raw UTF-8 and invalid UTF-8 in headers': crlf([
    Buffer.from('From: Zoë Müller <zoe@example.com>'),
    Buffer.from('Subject: Grüße ✓ à'),
    Buffer.concat([Buffer.from('To: '), Buffer.from([0xe9, 0xff]), Buffer.from(' <bad@example.com>')]),
    '',
    'body',
  ]),
  'punycode and encoded-word addresses': crlf([
    'From: user@xn--bcher-kva.example',
    'To: =?utf-8?Q?a=40b?= <x@example.com>, =?utf-8?Q?evil?=@example.com, "Q" <=?utf-8?Q?local?=@example.com>',
    `Cc: ${b64Word('Hidden <hidden@example.com>')}, ${b64Word('Just a name')}`,
    '',
    'body',
  ]),
  // mailparser 3.9.30 uses its own nodemailer 10.0.12 addressparser, which reads these differently from nodemailer 10.6
  'addresses the nested addressparser reads its own way': crlf([
    'From: user @ good.com',
    'To: Name <user@example.com(x)evil.com>, a@[x@evil.com], "Joe" <"a@evil.com>"@good.com>',
    'Cc: user@victim.example .allowed.example, x (a\\) b@evil.com) <y@z.com>',
    '',
    'body',
  ]),
  'quoted-printable edge cases': crlf([
    'From: a@example.com',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: Quoted-Printable',
    '',
    'trailing blanks   \t ',
    'soft=',
    'break, =3d =3D =zz =4 =\t ',
    Buffer.from('raw 8-bit: caf\u00e9 \u2713 and latin1 byte:', 'utf8'),
    Buffer.from([0x41, 0xe9, 0x42, 0x20, 0x20]),
    'ends with =',
  ]),
  'base64 unpadded, with junk and line breaks': crlf([
    'From: a@example.com',
    'Content-Transfer-Encoding: BASE64',
    '',
    'SGVsbG8sIHdv',
    'cmxk!IQ',
    '*',
  ]),
  'base64 empty': crlf(['From: a@example.com', 'Content-Transfer-Encoding: base64', '', '']),
  'transfer encoding with a comment': crlf([
    'From: a@example.com',
    'Content-Transfer-Encoding: quoted-printable (by the way)',
    '',
    'a=3Db',
  ]),
  'text/plain with a name parameter and charset alias': crlf([
    'From: a@example.com',
    'Content-Type: text/plain; name="notes.txt"; charset=latin1',
    '',
    Buffer.from('caf\u00e9', 'latin1'),
  ]),
  'large base64 body (over 64 KB)': crlf([
    'From: a@example.com',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    wrap(Buffer.from('Zoë ✓ '.repeat(30_000) + 'end!').toString('base64')),
  ]),
  'thunderbird text/plain format=flowed': crlf([
    'From: Ann <ann@example.org>',
    'Subject: flowed',
    'User-Agent: Mozilla Thunderbird',
    'Content-Type: text/plain; charset=UTF-8; format=flowed',
    'Content-Transfer-Encoding: 8bit',
    '',
    'A paragraph that the client wrapped at seventy-two characters, so it has ',
    'soft line breaks after a space, and Zoë writes ✓ ',
    'here.',
    '',
    '> quoted text ',
    '>  stuffed',
    ' leading space stuffed',
    '',
    '-- ',
    'Ann',
  ]),
  'apple text/plain format=flowed delsp=yes quoted-printable': crlf([
    'From: Tim <tim@icloud.com>',
    'Content-Type: text/plain; charset=utf-8; format=flowed; delsp=yes',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Long line folded by the client with an extra space before the soft=20',
    ' break, caf=C3=A9 ',
    'done.',
  ]),
  'delsp without format=flowed (ignored)': crlf([
    'From: a@example.com',
    'Content-Type: text/plain; delsp=yes',
    '',
    'soft ',
    'break',
  ]),
  'large plain body with a 100 KB line': crlf([
    'From: a@example.com',
    '',
    'x'.repeat(100_000),
    'é'.repeat(70_000),
    'tail',
  ]),
};

describe('parseSimpleMessage', () => {
  it('loads the libmime copy mailparser loads', () => {
    const require = createRequire(import.meta.url);
    const fromMailparser = createRequire(require.resolve('mailparser'));
    expect(require.resolve('libmime')).toBe(fromMailparser.resolve('libmime'));
  });

  for (const [name, raw] of Object.entries(COMMON)) {
    it(`takes the fast path with mailparser's values: ${name}`, async () => {
      const fast = await differential(raw);
      expect(fast).toBeDefined();
    });
  }

  it('reads the smtp-source message as mailparser does, field by field', async () => {
    const fast = parseSimpleMessage(smtpSourceMessage())!;
    const value = normalize(fast).value;
    expect(value.from).toEqual([{ email: 'sender@example.com' }]);
    expect(value.to).toEqual([{ email: 'agent@bench.agentpost.localhost' }]);
    expect(value.messageId).toBe('0a39.0003.0000@vm');
    expect(value.date).toBe(Date.parse('2026-11-22T03:13:01Z'));
    expect(value.subject).toBe('');
    expect(fast.text).toMatch(/^0X{77}\n1X{77}\n/);
    expect((fast.text as string).endsWith(`6${'X'.repeat(77)}\n`)).toBe(true);
  });

  it('takes the current time for an unparseable Date header, as mailparser does', async () => {
    const fast = await differential(COMMON['invalid date']!);
    expect((fast!.date as Date).getTime()).toBe(NOW);
  });

  const refused: Record<string, Buffer> = {
    'multipart/mixed with an attachment': crlf([
      'From: a@example.com',
      'Content-Type: multipart/mixed; boundary=b',
      '',
      '--b',
      '',
      'x',
      '--b',
      'Content-Type: application/pdf',
      'Content-Disposition: attachment; filename=a.pdf',
      '',
      'pdf',
      '--b--',
    ]),
    'message/rfc822': crlf([
      'From: a@example.com',
      'Content-Type: message/rfc822',
      '',
      'From: inner@example.com',
      'Subject: inner',
      '',
      'inner body',
    ]),
    'message/delivery-status': crlf([
      'From: a@example.com',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.com',
    ]),
    'single part attachment (disposition)': crlf([
      'From: a@example.com',
      'Content-Type: text/plain',
      'Content-Disposition: attachment; filename=notes.txt',
      '',
      'x',
    ]),
    'unknown disposition (treated as attachment)': crlf(['From: a@example.com', 'Content-Disposition: weird', '', 'x']),
    'attachment disposition without content type': crlf([
      'From: a@example.com',
      'Content-Disposition: attachment',
      '',
      'x',
    ]),
    'file name without content type': crlf([
      'From: a@example.com',
      'Content-Disposition: inline; filename=photo.jpg',
      '',
      'x',
    ]),
    'application/pdf single part': crlf([
      'From: a@example.com',
      'Content-Type: application/pdf',
      'Content-Transfer-Encoding: base64',
      '',
      'JVBERi0=',
    ]),
    'boundary parameter on a text part': crlf([
      'From: a@example.com',
      'Content-Type: text/plain; boundary=x',
      '',
      '--x',
      'Subject: nested',
      '',
      'y',
    ]),
    'iso-2022-jp': crlf([
      'From: a@example.com',
      'Content-Type: text/plain; charset=iso-2022-jp',
      'Content-Transfer-Encoding: 7bit',
      '',
      '\x1b$B$3$s$K$A$O\x1b(B',
    ]),
    'koi8-r': crlf(['From: a@example.com', 'Content-Type: text/plain; charset=koi8-r', '', 'x']),
    'unknown charset': crlf(['From: a@example.com', 'Content-Type: text/plain; charset=x-unknown-42', '', 'x']),
    'uuencode transfer encoding': crlf([
      'From: a@example.com',
      'Content-Transfer-Encoding: x-uuencode',
      '',
      'begin 644 a',
    ]),
    'base64 with padding mid-stream': crlf([
      'From: a@example.com',
      'Content-Transfer-Encoding: base64',
      '',
      'QQ==',
      'QkI=',
    ]),
    'header section over 64 KB': crlf(['From: a@example.com', `X-Long: ${'a'.repeat(70_000)}`, '', 'x']),
    'more than 500 header lines': crlf([...Array.from({ length: 501 }, (_, index) => `X-H${index}: v`), '', 'x']),
    'no empty line and over 64 KB': Buffer.from(`From: a@example.com\r\nX-Long: ${'a'.repeat(70_000)}`),
    'message over 1 MB (2 MB header)': Buffer.from(`X-Huge: ${'a'.repeat(2 * 1024 * 1024)}\r\n\r\nx`),
    '10 MB base64 body': Buffer.concat([
      Buffer.from('Content-Transfer-Encoding: base64\r\n\r\n'),
      Buffer.alloc(10 * 1024 * 1024, 'QUFB'),
    ]),
    'empty input': Buffer.alloc(0),
  };
  for (const [name, raw] of Object.entries(refused)) {
    it(`leaves to mailparser: ${name}`, () => {
      expect(parseSimpleMessage(raw)).toBeUndefined();
    });
  }

  it('never throws on non-buffer input', () => {
    expect(parseSimpleMessage('From: a@example.com\r\n\r\nx' as unknown as Buffer)).toBeUndefined();
    expect(parseSimpleMessage(undefined as unknown as Buffer)).toBeUndefined();
  });
});

// ---- multipart/alternative ----

const TEXT_BODY =
  'Hi Zoë,\n\nLe café est à 9 h — see you there ✓ 🎉\nA very long line that goes on and on and on beyond seventy-six characters so it must be soft-wrapped.\n\n-- \nAnn\n';

const qpUtf8 = (text: string, eol = '\r\n') => qpEncode(Buffer.from(text), eol);
const b64 = (bytes: Buffer | string, eol = '\r\n') => wrap(Buffer.from(bytes).toString('base64'), 76, eol);

const ALTERNATIVE: Record<string, Buffer> = {
  'gmail: utf-8 quoted-printable text and html, ~6 KB': gmailAlternative(),
  'gmail: utf-8 base64 text and html': alternative({
    boundary: '0000000000009f8e7d6c5b4a3928',
    parts: [
      [['Content-Type: text/plain; charset="UTF-8"', 'Content-Transfer-Encoding: base64'], b64(TEXT_BODY)],
      [['Content-Type: text/html; charset="UTF-8"', 'Content-Transfer-Encoding: base64'], b64(HTML_BODY)],
    ],
  }),
  'gmail: 7bit ascii text and html': alternative({
    boundary: '000000000000aaaabbbbccccdddd',
    parts: [
      [['Content-Type: text/plain; charset="UTF-8"'], 'Sure, see you then.\r\n\r\nOn Tue, Ann wrote:\r\n> Lunch?'],
      [
        ['Content-Type: text/html; charset="UTF-8"'],
        '<div dir="ltr">Sure, see you then.</div><br><div class="gmail_quote">On Tue, Ann wrote:<blockquote>Lunch?</blockquote></div>',
      ],
    ],
  }),
  'apple mail: us-ascii 7bit text, quoted-printable html, encoding before type': alternative({
    head: [
      'From: Tim <tim@icloud.com>',
      'Mime-Version: 1.0 (Mac OS X Mail 16.0 \\(3731.500.231\\))',
      'Subject: Lunch?',
      'Message-Id: <A1B2C3D4-1234-5678-9ABC-DEF012345678@icloud.com>',
      'Date: Sat, 7 Mar 2026 12:34:56 -0800',
      'To: Craig <craig@example.com>',
    ],
    boundary: 'Apple-Mail=_8B8E1C7E-1234-4D5E-9F00-0123456789AB',
    parts: [
      [
        ['Content-Transfer-Encoding: 7bit', 'Content-Type: text/plain;', '\tcharset=us-ascii'],
        'Noon works.\r\n\r\nSent from my iPhone',
      ],
      [
        ['Content-Transfer-Encoding: quoted-printable', 'Content-Type: text/html;', '\tcharset=us-ascii'],
        qpUtf8(
          '<html><head><meta http-equiv="content-type" content="text/html; charset=us-ascii"></head><body style="word-wrap: break-word;">Noon works.<div><br></div><div>Sent from my iPhone</div></body></html>',
        ),
      ],
    ],
  }),
  'apple mail: utf-8 format=flowed delsp=yes text, quoted-printable html': alternative({
    boundary: 'Apple-Mail-6D7C1A2B-3C4D-5E6F-7A8B-9C0D1E2F3A4B',
    parts: [
      [
        [
          'Content-Type: text/plain; charset=utf-8; format=flowed; delsp=yes',
          'Content-Transfer-Encoding: quoted-printable',
        ],
        'Caf=C3=A9 at nine, the long line was folded with an extra space before the =\r\nsoft  \r\nbreak.\r\n\r\nSent from my iPhone',
      ],
      [
        ['Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable'],
        qpUtf8('<html><body dir="auto">Café at nine.<br><br><div>Sent from my iPhone</div></body></html>'),
      ],
    ],
  }),
  'outlook: iso-8859-1 quoted-printable, preamble and epilogue': alternative({
    head: [
      'From: "Doe, Jane" <jane.doe@contoso.com>',
      'To: "Smith, John" <john.smith@contoso.com>',
      'Subject: RE: =?iso-8859-1?Q?R=E9union_du_comit=E9?=',
      'Thread-Topic: Re: Réunion',
      'Date: Thu, 5 Mar 2026 14:15:16 +0000',
      'Message-ID: <AM0PR01MB1234567890ABCDEF@AM0PR01MB1234.eurprd01.prod.outlook.com>',
      'Content-Language: fr-FR',
      'X-MS-Has-Attach:',
      'MIME-Version: 1.0',
    ],
    boundary: '_000_AM0PR01MB1234567890ABCDEFAM0PR01MB1234eurp_',
    preamble: [],
    parts: [
      [
        ['Content-Type: text/plain; charset="iso-8859-1"', 'Content-Transfer-Encoding: quoted-printable'],
        qpEncode(Buffer.from('R\u00e9union \u00e0 10 h \u2013 caf\u00e9 \u20ac\nCordialement,\nJane\n', 'latin1')),
      ],
      [
        ['Content-Type: text/html; charset="iso-8859-1"', 'Content-Transfer-Encoding: quoted-printable'],
        qpEncode(
          Buffer.from(
            '<html><head>\n<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">\n</head><body><p>R\u00e9union \u00e0 10 h \u2013 caf\u00e9 \u20ac</p></body></html>\n',
            'latin1',
          ),
        ),
      ],
    ],
    epilogue: [''],
  }),
  'outlook: windows-1252 8bit': alternative({
    boundary: '_000_DB9PR_',
    parts: [
      [
        ['Content-Type: text/plain; charset="Windows-1252"', 'Content-Transfer-Encoding: 8bit'],
        Buffer.from('Gr\u00fc\u00dfe \u0080 \u0093quoted\u0094', 'latin1'),
      ],
      [
        ['Content-Type: text/html; charset="Windows-1252"', 'Content-Transfer-Encoding: 8bit'],
        Buffer.from('<p>Gr\u00fc\u00dfe \u0080</p>', 'latin1'),
      ],
    ],
  }),
  'thunderbird: preamble, utf-8 format=flowed 8bit text, 8bit html': alternative({
    head: [
      'Message-ID: <3f0e1c2d-aaaa-bbbb-cccc-0123456789ab@example.org>',
      'Date: Wed, 4 Mar 2026 09:00:00 +0100',
      'MIME-Version: 1.0',
      'User-Agent: Mozilla Thunderbird',
      'Content-Language: en-US',
      'To: bob@example.org',
      'From: Ann <ann@example.org>',
      'Subject: Thunderbird',
    ],
    boundary: '------------0aBcD3fGh1JkLmN0pQrStUv',
    preamble: ['This is a multi-part message in MIME format.'],
    parts: [
      [
        ['Content-Type: text/plain; charset=UTF-8; format=flowed', 'Content-Transfer-Encoding: 8bit'],
        'A paragraph that Thunderbird wrapped at seventy-two characters, so it has \r\nsoft breaks, and Zoë writes ✓ here.\r\n\r\n-- \r\nAnn\r\n',
      ],
      [
        ['Content-Type: text/html; charset=UTF-8', 'Content-Transfer-Encoding: 8bit'],
        '<!DOCTYPE html>\r\n<html>\r\n  <head>\r\n    <meta http-equiv="content-type" content="text/html; charset=UTF-8">\r\n  </head>\r\n  <body>\r\n    <p>A paragraph, Zoë ✓</p>\r\n  </body>\r\n</html>\r\n',
      ],
    ],
  }),
  'html first, then text': alternative({
    boundary: 'b1',
    parts: [
      [['Content-Type: text/html; charset=utf-8'], HTML_BODY],
      [['Content-Type: text/plain; charset=utf-8'], TEXT_BODY],
    ],
  }),
  'text only inside alternative': alternative({
    boundary: 'only-text',
    parts: [[['Content-Type: text/plain'], TEXT_BODY]],
  }),
  'html only inside alternative': alternative({
    boundary: 'only-html',
    parts: [[['Content-Type: text/html; charset=UTF-8', 'Content-Transfer-Encoding: base64'], b64(HTML_BODY)]],
  }),
  'parts without headers (text/plain by default)': alternative({
    boundary: 'bare',
    parts: [
      [[], 'first'],
      [[], 'second'],
    ],
  }),
  'two text and two html parts (joined)': alternative({
    boundary: 'many',
    parts: [
      [['Content-Type: text/plain'], 'one'],
      [['Content-Type: text/html'], '<p>one</p>'],
      [['Content-Type: text/plain; charset=iso-8859-1'], Buffer.from('deux \u00e9', 'latin1')],
      [['Content-Type: text/html', 'Content-Disposition: inline'], '<p>two</p>'],
    ],
  }),
  'parts without body lines': alternative({
    boundary: 'empty',
    parts: [
      [['Content-Type: text/plain'], undefined],
      [['Content-Type: text/html'], undefined],
    ],
  }),
  'a text part of one empty line before html (the splitter keeps its line break)': alternative({
    boundary: 'one-empty',
    parts: [
      [['Content-Type: text/plain'], ''],
      [['Content-Type: text/html'], '<p>x</p>'],
    ],
  }),
  'a last part of one empty line': alternative({
    boundary: 'last-empty',
    parts: [
      [['Content-Type: text/plain'], 'x'],
      [['Content-Type: text/html'], ''],
    ],
  }),
  'parts of blank lines only': alternative({
    boundary: 'blank',
    parts: [
      [['Content-Type: text/plain'], '\r\n\r\n'],
      [['Content-Type: text/html'], '\r\n \r\n'],
    ],
  }),
  'LF line endings': alternative({
    eol: '\n',
    boundary: 'lf-only',
    preamble: ['preamble'],
    parts: [
      [
        ['Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: quoted-printable'],
        qpUtf8(TEXT_BODY, '\n'),
      ],
      [['Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: base64'], b64(HTML_BODY, '\n')],
    ],
    epilogue: ['epilogue'],
  }),
  'mixed CRLF and LF': Buffer.from(
    'From: a@example.com\nContent-Type: multipart/alternative; boundary=mix\r\n\n--mix\r\nContent-Type: text/plain\n\r\nline1\r\nline2\n\n--mix\nContent-Type: text/html\r\n\r\n<p>x</p>\r\r\n--mix--\n',
  ),
  'boundary with quotes and special characters': alternative({
    boundary: "=_?'()+,-./:a1=_",
    parts: [
      [['Content-Type: text/plain'], 'plain --=_ and a mid-line --' + "=_?'()+,-./:a1=_" + ' boundary'],
      [['Content-Type: text/html'], '<p>x</p>'],
    ],
  }),
  'boundary one character long, dashes in the bodies': alternative({
    boundary: 'x',
    parts: [
      [[], '-x\r\n- x\r\n---x\r\n--\r\nx--x'],
      [['Content-Type: text/html'], '<hr>--y'],
    ],
  }),
  'preamble with another delimiter-like line, epilogue text': alternative({
    boundary: 'pre',
    preamble: ['This is a multi-part message in MIME format.', '--other', ''],
    parts: [[['Content-Type: text/plain'], 'x']],
    epilogue: ['', 'trailing words', 'and more'],
  }),
  'closing delimiter without a line break': alternative({
    boundary: 'noeol',
    parts: [
      [['Content-Type: text/plain'], 'x'],
      [['Content-Type: text/html'], '<p>x</p>'],
    ],
    close: '',
  }),
  'closing delimiter without a line break after an empty line': alternative({
    boundary: 'noeol2',
    parts: [
      [['Content-Type: text/plain'], 'x'],
      [['Content-Type: text/html'], ''],
    ],
    close: '',
  }),
  'closing delimiter without a line break after a part without body lines': alternative({
    boundary: 'noeol3',
    parts: [
      [['Content-Type: text/plain'], 'x'],
      [['Content-Type: text/html'], undefined],
    ],
    close: '',
  }),
  'root quoted-printable encoding and charset (ignored for a multipart)': alternative({
    head: ['From: a@example.com', 'Content-Transfer-Encoding: quoted-printable'],
    type: 'Multipart/Alternative; charset=utf-8',
    boundary: 'rootqp',
    parts: [[['Content-Type: text/plain'], 'a=3Db']],
  }),
  'part headers folded and in odd case, transfer encoding comment, name parameter': alternative({
    boundary: 'odd',
    parts: [
      [
        [
          'content-TYPE: TEXT/PLAIN;',
          '  charset="utf-8";',
          '  name="body.txt"',
          'Content-Transfer-Encoding: Quoted-Printable (yes)',
          'Content-ID: <body@x>',
          'X-Whatever: 1',
        ],
        qpUtf8('caf\u00e9'),
      ],
      [['Content-Type: text/html; charset=utf-8', 'Content-Disposition: INLINE; filename="body.html"'], '<b>x</b>'],
    ],
  }),
  'a part header with an mbox From_ line': alternative({
    boundary: 'mbox',
    parts: [[['From nobody', 'Content-Type: text/html'], '<p>x</p>']],
  }),
  'sixteen parts': alternative({
    boundary: 'sixteen',
    parts: Array.from({ length: 16 }, (_, index): [string[], string] => [
      [`Content-Type: text/${index % 2 ? 'html' : 'plain'}`],
      `part ${index}`,
    ]),
  }),
  'large base64 html (over 64 KB)': alternative({
    boundary: 'large',
    parts: [
      [['Content-Type: text/plain'], 'short'],
      [
        ['Content-Type: text/html; charset=utf-8', 'Content-Transfer-Encoding: base64'],
        b64(`<p>${'Zoë ✓ '.repeat(20_000)}</p>`),
      ],
    ],
  }),
};

describe('parseSimpleMessage: multipart/alternative', () => {
  for (const [name, raw] of Object.entries(ALTERNATIVE)) {
    it(`takes the fast path with mailparser's values: ${name}`, async () => {
      const fast = await differential(raw);
      expect(fast).toBeDefined();
    });
  }

  it('reads text and html of a Gmail message, and keeps what mailparser keeps of odd parts', async () => {
    const fast = (await differential(gmailAlternative()))!;
    expect(fast.text).toMatch(/^Bonjour à tous/);
    expect(fast.html).toMatch(/^<div dir="ltr"><div>Bonjour/);
    expect(normalize(fast).value.subject).toBe('Réunion du comité — résumé');
    const joined = (await differential(ALTERNATIVE['two text and two html parts (joined)']!))!;
    expect(joined.text).toBe('one\ndeux é');
    expect(joined.html).toBe('<p>one</p><br/>\n<p>two</p>');
    const quirk = (await differential(
      ALTERNATIVE['a text part of one empty line before html (the splitter keeps its line break)']!,
    ))!;
    expect(quirk.text).toBe('\n');
    const last = (await differential(ALTERNATIVE['a last part of one empty line']!))!;
    expect([last.text, last.html]).toEqual(['x', undefined]);
    const htmlOnly = (await differential(ALTERNATIVE['html only inside alternative']!))!;
    expect(htmlOnly.text).toBeUndefined();
  });

  const b = 'b';
  const simple = (lines: string[]) =>
    crlf(['From: a@example.com', 'Content-Type: multipart/alternative; boundary="b"', '', ...lines]);
  const refused: Record<string, Buffer> = {
    'no delimiter at all': simple(['just a preamble']),
    'no closing delimiter (the splitter runs the last part to the end)': simple([
      `--${b}`,
      'Content-Type: text/plain',
      '',
      'x',
    ]),
    'no closing delimiter, last line unterminated': Buffer.from(
      'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\n\r\nx',
    ),
    'only a closing delimiter': simple([`--${b}--`]),
    'a closing delimiter in the preamble': simple([`--${b}--`, `--${b}`, '', 'x', `--${b}--`]),
    'a part header without its empty line': simple([`--${b}`, 'Content-Type: text/plain', `--${b}--`]),
    'a part header cut by the next delimiter': simple([
      `--${b}`,
      'Content-Type: text/plain',
      `--${b}`,
      '',
      'x',
      `--${b}--`,
    ]),
    'a delimiter with trailing blanks': simple([`--${b}  `, '', 'x', `--${b}--`]),
    'a delimiter line with more after the boundary': simple([`--${b}`, '', 'x', `--${b}x`, `--${b}--`]),
    'a closing delimiter with trailing blanks': simple([`--${b}`, '', 'x', `--${b}-- `]),
    'a lone CR before a delimiter': Buffer.from(
      'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\n\r\nx\n\r--b--\r\n',
    ),
    'the boundary after the close (parts in the epilogue)': simple([
      `--${b}`,
      '',
      'x',
      `--${b}--`,
      `--${b}`,
      'Content-Type: text/plain',
      '',
      'hidden',
      `--${b}--`,
    ]),
    'an empty boundary': crlf(['Content-Type: multipart/alternative; boundary=""', '', '--', '', 'x', '----']),
    'no boundary parameter': crlf(['Content-Type: multipart/alternative', '', '--', '', 'x']),
    'a boundary with a space': crlf([
      'Content-Type: multipart/alternative; boundary="a b"',
      '',
      '--a b',
      '',
      'x',
      '--a b--',
    ]),
    'a boundary with non-ASCII characters': crlf([
      'Content-Type: multipart/alternative; boundary="é"',
      '',
      '--é',
      '',
      'x',
      '--é--',
    ]),
    'a boundary over 70 characters': crlf([
      `Content-Type: multipart/alternative; boundary="${'y'.repeat(71)}"`,
      '',
      `--${'y'.repeat(71)}`,
      '',
      'x',
      `--${'y'.repeat(71)}--`,
    ]),
    'seventeen parts': alternative({
      boundary: 'seventeen',
      parts: Array.from({ length: 17 }, (_, index): [string[], string] => [
        ['Content-Type: text/plain'],
        `part ${index}`,
      ]),
    }),
    'nested multipart': alternative({
      boundary: 'outer',
      parts: [[['Content-Type: multipart/alternative; boundary="inner"'], '--inner\r\n\r\nx\r\n--inner--']],
    }),
    'text/calendar alternative (iMIP)': alternative({
      boundary: 'cal',
      parts: [
        [['Content-Type: text/plain'], 'x'],
        [['Content-Type: text/calendar; method=REQUEST'], 'BEGIN:VCALENDAR\r\nEND:VCALENDAR'],
      ],
    }),
    'an attachment disposition on a text part': alternative({
      boundary: 'att',
      parts: [
        [['Content-Type: text/plain'], 'x'],
        [['Content-Type: text/plain', 'Content-Disposition: attachment; filename=a.txt'], 'y'],
      ],
    }),
    'an image part': alternative({
      boundary: 'img',
      parts: [
        [['Content-Type: text/plain'], 'x'],
        [['Content-Type: image/png', 'Content-Transfer-Encoding: base64'], 'iVBORw0KGgo='],
      ],
    }),
    'message/rfc822 part': alternative({
      boundary: 'rfc',
      parts: [[['Content-Type: message/rfc822'], 'Subject: inner\r\n\r\nbody']],
    }),
    'an empty part Content-Type (an attachment)': alternative({
      boundary: 'emptytype',
      parts: [[['Content-Type:'], 'x']],
    }),
    'a boundary parameter on a text part': alternative({
      boundary: 'outer',
      parts: [[['Content-Type: text/plain; boundary=inner'], 'x']],
    }),
    'an unknown charset in a part': alternative({
      boundary: 'cs',
      parts: [[['Content-Type: text/plain; charset=koi8-r'], 'x']],
    }),
    'an unknown transfer encoding in a part': alternative({
      boundary: 'te',
      parts: [[['Content-Transfer-Encoding: x-uuencode'], 'begin 644 a']],
    }),
    'base64 padding mid-stream in a part': alternative({
      boundary: 'pad',
      parts: [[['Content-Transfer-Encoding: base64'], 'QQ==\r\nQkI=']],
    }),
    'multipart/related': alternative({
      type: 'multipart/related',
      boundary: 'rel',
      parts: [[['Content-Type: text/html'], '<img src="cid:a">']],
    }),
    'multipart/alternative in a part of a text message (boundary on the root only)': crlf([
      'Content-Type: text/plain; boundary=b',
      '',
      '--b',
      '',
      'x',
      '--b--',
    ]),
  };
  for (const [name, raw] of Object.entries(refused)) {
    it(`leaves to mailparser: ${name}`, () => {
      expect(parseSimpleMessage(raw)).toBeUndefined();
    });
  }
});

// ---- multipart/mixed of text parts and multipart/alternatives ----

/** A multipart/alternative part for {@link alternative}'s `parts`: its Content-Type, then its own body. */
const innerAlternative = (
  boundary: string,
  parts: [string[], string | undefined][],
  options: { eol?: string; preamble?: string[]; epilogue?: string[] } = {},
): [string[], string] => {
  const eol = options.eol ?? '\r\n';
  const lines = [...(options.preamble ?? [])];
  for (const [headers, body] of parts)
    lines.push(`--${boundary}`, ...headers, '', ...(body === undefined ? [] : [body]));
  lines.push(`--${boundary}--`, ...(options.epilogue ?? []));
  return [[`Content-Type: multipart/alternative; boundary="${boundary}"`], lines.join(eol)];
};

const MIXED: Record<string, Buffer> = {
  'mailing list: mixed of an alternative and a text footer': alternative({
    type: 'multipart/mixed',
    boundary: '===============1234567890123456789==',
    parts: [
      innerAlternative('000000000000a1b2c3d4e5f60718', [
        [
          ['Content-Type: text/plain; charset="UTF-8"', 'Content-Transfer-Encoding: quoted-printable'],
          qpUtf8(TEXT_BODY),
        ],
        [
          ['Content-Type: text/html; charset="UTF-8"', 'Content-Transfer-Encoding: quoted-printable'],
          qpUtf8(HTML_BODY),
        ],
      ]),
      [
        [
          'Content-Type: text/plain; charset="us-ascii"',
          'MIME-Version: 1.0',
          'Content-Transfer-Encoding: 7bit',
          'Content-Disposition: inline',
        ],
        '_______________________________________________\r\nlist mailing list\r\nlist@example.org',
      ],
    ],
    epilogue: [''],
  }),
  'apple mail: mixed of one alternative (inner preamble and epilogue, LF)': alternative({
    eol: '\n',
    type: 'multipart/mixed',
    boundary: 'Apple-Mail=_OUTER-1',
    parts: [
      innerAlternative(
        'Apple-Mail=_INNER-2',
        [
          [['Content-Type: text/plain; charset=us-ascii'], 'Hi'],
          [['Content-Type: text/html; charset=us-ascii'], '<div>Hi</div>'],
        ],
        { eol: '\n', preamble: ['inner preamble'], epilogue: ['', 'inner epilogue'] },
      ),
    ],
  }),
  'mixed of one text part': alternative({
    type: 'multipart/mixed',
    boundary: 'm1',
    parts: [[['Content-Type: text/plain; charset=utf-8'], TEXT_BODY]],
  }),
  'mixed of one html part': alternative({
    type: 'multipart/mixed',
    boundary: 'm2',
    parts: [[['Content-Type: text/html; charset=utf-8'], HTML_BODY]],
  }),
  'mixed of text and html parts': alternative({
    type: 'multipart/mixed',
    boundary: 'm3',
    parts: [
      [[], 'A'],
      [['Content-Type: text/html'], '<p>B</p>'],
      [[], 'C'],
    ],
  }),
  'mixed of text and an empty html part': alternative({
    type: 'multipart/mixed',
    boundary: 'm4',
    parts: [
      [[], 'A'],
      [['Content-Type: text/html'], undefined],
    ],
  }),
  'mixed of text, alternative, text': alternative({
    type: 'multipart/mixed',
    boundary: 'm5',
    parts: [
      [[], 'intro'],
      innerAlternative('a5', [
        [[], 'plain'],
        [['Content-Type: text/html'], '<p>html</p>'],
      ]),
      [['Content-Type: text/plain; charset=iso-8859-1', 'Content-Transfer-Encoding: quoted-printable'], 'caf=E9'],
    ],
  }),
  'mixed of two alternatives': alternative({
    type: 'multipart/mixed',
    boundary: 'm6',
    parts: [
      innerAlternative('a6', [
        [[], 'one'],
        [['Content-Type: text/html'], '<p>one</p>'],
      ]),
      innerAlternative('b6', [[['Content-Type: text/html'], '<p>two</p>']]),
    ],
  }),
};

describe('parseSimpleMessage: multipart/mixed', () => {
  for (const [name, raw] of Object.entries(MIXED)) {
    it(`takes the fast path with mailparser's values: ${name}`, async () => {
      const fast = await differential(raw);
      expect(fast).toBeDefined();
    });
  }

  it('joins the parts of a mixed message as mailparser does', async () => {
    const footer = (await differential(MIXED['mailing list: mixed of an alternative and a text footer']!))!;
    expect(footer.text).toBe(
      `${TEXT_BODY}\n_______________________________________________\nlist mailing list\nlist@example.org`,
    );
    expect(footer.html).toBe(`${HTML_BODY}<br/>\n`);
    const leaves = (await differential(MIXED['mixed of text and html parts']!))!;
    expect([leaves.text, leaves.html]).toEqual(['A\n\nC', '<br/>\n<p>B</p><br/>\n']);
    const emptyHtml = (await differential(MIXED['mixed of text and an empty html part']!))!;
    expect([emptyHtml.text, emptyHtml.html]).toEqual(['A', '']);
  });

  const mixed = (parts: [string[], string | undefined][], boundary = 'o') =>
    alternative({ type: 'multipart/mixed', boundary, parts });
  const refused: Record<string, Buffer> = {
    'an inner alternative not closed (the outer delimiters become its text)': Buffer.from(
      'Content-Type: multipart/mixed; boundary=o\r\n\r\n--o\r\nContent-Type: multipart/alternative; boundary=i\r\n\r\n--i\r\n\r\nA\r\n--o\r\nContent-Type: text/plain\r\n\r\nfooter\r\n--o--\r\n',
    ),
    'an outer delimiter in the inner preamble': Buffer.from(
      'Content-Type: multipart/mixed; boundary=o\r\n\r\n--o\r\nContent-Type: multipart/alternative; boundary=i\r\n\r\n--o\r\n\r\nA\r\n--o--\r\n',
    ),
    'the inner delimiter after the inner close': mixed([
      innerAlternative('i', [[[], 'A']], { epilogue: ['--i', '', 'hidden'] }),
    ]),
    'the same boundary inside': mixed([innerAlternative('o', [[[], 'A']])]),
    'the outer boundary a prefix of the inner one': mixed([innerAlternative('oo', [[[], 'A']])]),
    'the inner boundary a prefix of the outer one': mixed([innerAlternative('o', [[[], 'A']])], 'oo'),
    'an alternative in an alternative': alternative({ boundary: 'o', parts: [innerAlternative('i', [[[], 'A']])] }),
    'a mixed in a mixed': mixed([[['Content-Type: multipart/mixed; boundary=i'], '--i\r\n\r\nA\r\n--i--']]),
    'a related in a mixed': mixed([
      [['Content-Type: multipart/related; boundary=i'], '--i\r\nContent-Type: text/html\r\n\r\nA\r\n--i--'],
    ]),
    'an attachment in the inner alternative': mixed([
      innerAlternative('i', [
        [[], 'A'],
        [['Content-Type: application/pdf'], 'x'],
      ]),
    ]),
    'a pdf beside the alternative': mixed([
      innerAlternative('i', [[[], 'A']]),
      [['Content-Type: application/pdf', 'Content-Disposition: attachment; filename=a.pdf'], 'x'],
    ]),
  };
  for (const [name, raw] of Object.entries(refused)) {
    it(`leaves to mailparser: ${name}`, () => {
      expect(parseSimpleMessage(raw)).toBeUndefined();
    });
  }
});

// ---- property: random single-part messages ----

const word = fc.stringMatching(/^[A-Za-z0-9]{1,8}$/);
const unicodeText = fc.string({
  unit: fc.constantFrom(
    'a',
    'Z',
    ' ',
    'é',
    'ü',
    'ß',
    '€',
    '✓',
    '😀',
    '中',
    '"',
    ',',
    '<',
    '>',
    '@',
    ':',
    ';',
    '_',
    '=',
    '?',
    '(',
    ')',
    '\\',
    '\t',
  ),
  maxLength: 24,
});
const latinText = fc.string({
  unit: fc.constantFrom('a', 'B', ' ', 'é', 'ü', 'ß', '©', '½', ',', '_', '=', '?'),
  maxLength: 20,
});

/** An encoded word, sometimes malformed or adjacent to another. */
const encodedWord = fc.oneof(
  unicodeText.map((text) => b64Word(text)),
  unicodeText.map((text) => qWord(text)),
  latinText.map((text) => qWord(text, 'ISO-8859-1')),
  latinText.map((text) => b64Word(text, 'iso-8859-1')),
  fc.tuple(unicodeText, unicodeText).map(([left, right]) => `${b64Word(left)} ${b64Word(right)}`),
  fc.tuple(unicodeText, unicodeText).map(([left, right]) => `${qWord(left)}\t${qWord(right)}`),
  fc.constantFrom('=?utf-8?Q?broken', '=?x-unknown?Q?abc?=', '=?utf-8?B?***?=', '=?UTF-8*en?Q?lang?='),
);
const phrase = fc.oneof(
  word,
  fc.array(word, { minLength: 1, maxLength: 3 }).map((words) => words.join(' ')),
  encodedWord,
  unicodeText.map((text) => `"${text.replace(/["\\]/g, '')}"`),
);
const domain = fc.oneof(
  fc.array(word, { minLength: 1, maxLength: 3 }).map((labels) => `${labels.join('.')}.example`),
  fc.constant('xn--bcher-kva.example'),
  fc.constant('[192.0.2.1]'),
);
const email = fc
  .tuple(fc.oneof(word, fc.constant('first.last'), fc.constant('a+tag')), domain)
  .map(([local, host]) => `${local}@${host}`);
const mailbox = fc.oneof(
  email,
  fc.tuple(phrase, email).map(([name, address]) => `${name} <${address}>`),
  email.map((address) => `<${address}>`),
  fc.tuple(email, word).map(([address, comment]) => `${address} (${comment})`),
);
const addressList = fc.oneof(
  fc.array(mailbox, { minLength: 1, maxLength: 4 }).map((list) => list.join(', ')),
  fc.tuple(word, fc.array(mailbox, { maxLength: 3 })).map(([name, list]) => `${name}: ${list.join(', ')};`),
  fc.constant('undisclosed-recipients:;'),
  fc.constant(''),
);
const messageId = fc
  .tuple(word, domain, fc.boolean())
  .map(([local, host, bracketed]) => (bracketed ? `<${local}@${host}>` : `${local}@${host}`));
const date = fc.oneof(
  fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms).toUTCString()),
  fc
    .tuple(
      fc.integer({ min: 946_684_800_000, max: 4_102_444_800_000 }),
      fc.constantFrom('+0000', '-0800', '+0530', '(UTC)', 'GMT'),
    )
    .map(([ms, zone]) => `${new Date(ms).toUTCString().replace(' GMT', '')} ${zone}`),
  fc.constantFrom('not a date', '', '32 Foo 2026', 'Tue, 3 Mar 2026'),
);

const randomCase = (name: string) => fc.constantFrom(name, name.toLowerCase(), name.toUpperCase());
const header = (name: string, value: fc.Arbitrary<string>) =>
  fc.tuple(randomCase(name), value).map(([key, text]) => `${key}: ${text}`);

const envelopeHeader = fc.oneof(
  header('From', addressList),
  header('To', addressList),
  header('Cc', addressList),
  header('Bcc', addressList),
  header('Reply-To', addressList),
  header(
    'Subject',
    fc.oneof(
      phrase,
      unicodeText,
      fc.array(encodedWord, { minLength: 1, maxLength: 3 }).map((words) => words.join(' ')),
    ),
  ),
  header('Date', date),
  header('Message-ID', messageId),
  header('In-Reply-To', messageId),
  header(
    'References',
    fc.array(messageId, { minLength: 0, maxLength: 12 }).map((ids) => ids.join(' ')),
  ),
  header('X-Mailer', phrase),
  header(
    'Received',
    fc.constant(
      'from mx.example.com (mx.example.com [192.0.2.1]) by mx2.example.com with ESMTPS id abc; Tue, 3 Mar 2026 10:00:00 +0000',
    ),
  ),
);

/** Folds a header at random spaces. */
const folded = (line: string, folds: number[]) => {
  let out = '';
  let index = 0;
  for (const character of line) {
    out += character === ' ' && index++ > 0 && folds.includes(index % 5) ? '\n\t' : character;
  }
  return out;
};

const bodyText = fc.string({
  unit: fc.constantFrom('a', 'b', ' ', ' ', '\t', '\n', '\n', '\r\n', '=', '.', 'é', '✓', '😀', '<', '>', '&'),
  maxLength: 400,
});
const transferEncoding = fc.constantFrom(
  undefined,
  '7bit',
  '8bit',
  'binary',
  'quoted-printable',
  'Quoted-Printable',
  'base64',
  'BASE64',
);
const charset = fc.constantFrom(
  undefined,
  'utf-8',
  'UTF-8',
  '"utf-8"',
  'us-ascii',
  'iso-8859-1',
  'windows-1252',
  'latin1',
);
const contentType = fc.constantFrom(
  undefined,
  'text/plain',
  'text/html',
  'TEXT/PLAIN',
  'text/html ',
  'text/plain; format=flowed',
  'text/plain; format=Flowed; delsp=yes',
  'text/plain; delsp=yes',
);

const randomMessage = fc
  .record({
    headers: fc.array(envelopeHeader, { maxLength: 12 }),
    folds: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 2 }),
    contentType,
    charset,
    encoding: transferEncoding,
    disposition: fc.constantFrom(undefined, 'inline'),
    body: bodyText,
    eol: fc.constantFrom('\r\n', '\n'),
    trailingEol: fc.boolean(),
    qpNoise: fc.boolean(),
  })
  .map((spec) => {
    const headers = [...spec.headers];
    headers.push(...partHeaders(spec));
    const head = headers.map((line) => folded(line, spec.folds).replace(/\n/g, spec.eol)).join(spec.eol);
    return Buffer.concat([
      Buffer.from(`${head}${spec.eol}${spec.eol}`),
      encodeBody(spec),
      Buffer.from(spec.trailingEol ? spec.eol : ''),
    ]);
  });

interface PartSpec {
  contentType: string | undefined;
  charset: string | undefined;
  encoding: string | undefined;
  disposition: string | undefined;
  body: string;
  eol: string;
  qpNoise: boolean;
}

/** The Content-* header lines of a generated part. */
function partHeaders(spec: PartSpec): string[] {
  const headers: string[] = [];
  if (spec.contentType)
    headers.push(`Content-Type: ${spec.contentType}${spec.charset ? `; charset=${spec.charset}` : ''}`);
  if (spec.encoding) headers.push(`Content-Transfer-Encoding: ${spec.encoding}`);
  if (spec.disposition) headers.push(`Content-Disposition: ${spec.disposition}`);
  return headers;
}

/** The body of a generated part, in its charset and transfer encoding. */
function encodeBody(spec: PartSpec): Buffer {
  const latin = spec.contentType !== undefined && /8859|1252|latin/.test(spec.charset ?? '');
  const text = spec.body.replace(/\r?\n/g, spec.eol);
  const bytes = latin ? Buffer.from(text.replace(/[^\x00-\xff]/g, '?'), 'latin1') : Buffer.from(text);
  const encoding = spec.encoding?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(wrap(bytes.toString('base64'), 76, spec.eol));
  if (encoding === 'quoted-printable')
    return Buffer.from(qpEncode(bytes, spec.eol) + (spec.qpNoise ? ` =4 =\t${spec.eol}x=${spec.eol}= ` : ''));
  return bytes;
}

// ---- property: random multipart/alternative messages ----

const boundaryText = fc.oneof(
  fc.stringMatching(/^[0-9A-Za-z'()+_,\-./:=?]{1,70}$/),
  fc.stringMatching(/^[0-9a-f]{28}$/).map((hex) => hex),
  fc.uuid().map((uuid) => `Apple-Mail=_${uuid.toUpperCase()}`),
  fc.stringMatching(/^[0-9A-Za-z]{24}$/).map((text) => `------------${text}`),
);
const lineText = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', 'é', '✓', '.', '=', '<', '>'), maxLength: 30 });
const partSpec = fc.record({
  contentType: fc.constantFrom(
    undefined,
    'text/plain',
    'text/html',
    'TEXT/HTML',
    'text/plain; format=flowed',
    'text/plain; format=flowed; delsp=yes',
  ),
  charset,
  encoding: transferEncoding,
  disposition: fc.constantFrom(undefined, 'inline'),
  body: fc.oneof(
    { weight: 6, arbitrary: bodyText },
    { weight: 1, arbitrary: fc.constantFrom('', '\n', '\r\n', '\n\n', ' ') },
  ),
  noBodyLine: fc.boolean(),
  reversed: fc.boolean(),
  extraHeader: fc.constantFrom(undefined, 'Content-ID: <part@x>', 'X-Part: 1', 'Content-Description: body'),
});
const randomAlternative = fc
  .record({
    headers: fc.array(envelopeHeader, { maxLength: 8 }),
    rootType: fc.constantFrom('multipart/alternative', 'Multipart/Alternative', 'MULTIPART/ALTERNATIVE'),
    rootEncoding: fc.constantFrom(undefined, '7bit', '8bit'),
    boundary: boundaryText,
    quoteBoundary: fc.boolean(),
    preamble: fc.array(lineText, { maxLength: 3 }),
    parts: fc.array(partSpec, { minLength: 1, maxLength: 4 }),
    epilogue: fc.array(lineText, { maxLength: 3 }),
    eol: fc.constantFrom('\r\n', '\n'),
    close: fc.constantFrom('eol', 'none'),
    qpNoise: fc.boolean(),
  })
  .map((spec) => {
    const { eol } = spec;
    const quoted = spec.quoteBoundary || !/^[A-Za-z0-9_]+$/.test(spec.boundary) ? `"${spec.boundary}"` : spec.boundary;
    const chunks: (string | Buffer)[] = [...spec.headers.map((line) => line.replace(/\n/g, eol) + eol)];
    if (spec.rootEncoding) chunks.push(`Content-Transfer-Encoding: ${spec.rootEncoding}${eol}`);
    chunks.push(
      `Content-Type: ${spec.rootType};${eol}\tboundary=${quoted}${eol}${eol}`,
      ...spec.preamble.map((line) => line + eol),
    );
    for (const part of spec.parts) {
      const partSpecWithEol = { ...part, eol, qpNoise: spec.qpNoise };
      const headers = [...partHeaders(partSpecWithEol), ...(part.extraHeader ? [part.extraHeader] : [])];
      if (part.reversed) headers.reverse();
      chunks.push(`--${spec.boundary}${eol}`, ...headers.map((line) => line + eol), eol);
      if (!part.noBodyLine) chunks.push(encodeBody(partSpecWithEol), eol);
    }
    chunks.push(`--${spec.boundary}--${spec.close === 'eol' ? eol : ''}`);
    if (spec.close === 'eol') chunks.push(...spec.epilogue.map((line) => line + eol));
    return Buffer.concat(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)));
  });

/** Lines that look like, or are, delimiters and part headers, put into otherwise good messages. */
const junkLine = (boundary: string) =>
  fc.constantFrom(
    `--${boundary}`,
    `--${boundary}--`,
    `--${boundary} `,
    `--${boundary}-- `,
    `\r--${boundary}`,
    `--${boundary}x`,
    `--${boundary}-`,
    `--${boundary}--x`,
    `--${boundary}\rx`,
    `x--${boundary}`,
    `-- ${boundary}`,
    '--',
    'Content-Type: text/plain',
    'Content-Type: text/html; charset=windows-1252',
    'Content-Type: image/png',
    `Content-Type: multipart/alternative; boundary=${boundary}2`,
    'Content-Transfer-Encoding: base64',
    'Content-Disposition: attachment',
    '',
    '\r',
    'x',
  );
/** A leaf of a generated multipart: its header lines and body (undefined: no body line). */
const leafOf = (eol: string, qpNoise: boolean) =>
  partSpec.map((spec): [string[], Buffer | undefined] => {
    const withEol = { ...spec, eol, qpNoise };
    const headers = [...partHeaders(withEol), ...(spec.extraHeader ? [spec.extraHeader] : [])];
    if (spec.reversed) headers.reverse();
    return [headers, spec.noBodyLine ? undefined : encodeBody(withEol)];
  });
/** A multipart/mixed of text parts and multipart/alternatives of text parts, boundaries not prefixes of each other. */
const randomMixed = fc
  .record({
    headers: fc.array(envelopeHeader, { maxLength: 6 }),
    outer: boundaryText.map((text) => `o${text}`.slice(0, 70)),
    inner: fc.stringMatching(/^[0-9A-Za-z'()+_,\-./:=?]{1,60}$/).map((text) => `i${text}`),
    eol: fc.constantFrom('\r\n', '\n'),
    qpNoise: fc.boolean(),
    preamble: fc.array(lineText, { maxLength: 2 }),
    epilogue: fc.array(lineText, { maxLength: 2 }),
    // per part of the mixed: 0 a text part, n an alternative of n text parts
    shape: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 4 }),
    innerPreamble: fc.array(lineText, { maxLength: 2 }),
    innerEpilogue: fc.array(lineText, { maxLength: 2 }),
  })
  .chain((spec) =>
    fc.tuple(
      fc.constant(spec),
      fc.tuple(
        ...spec.shape.map((count) =>
          fc.array(leafOf(spec.eol, spec.qpNoise), { minLength: Math.max(count, 1), maxLength: Math.max(count, 1) }),
        ),
      ),
    ),
  )
  .map(([spec, groups]) => {
    const { eol } = spec;
    const line = (text: string | Buffer) => Buffer.concat([Buffer.from(text), Buffer.from(eol)]);
    const chunks: Buffer[] = [
      ...spec.headers.map((header) => line(header.replace(/\n/g, eol))),
      line(`Content-Type: multipart/mixed; boundary="${spec.outer}"`),
      line(''),
      ...spec.preamble.map(line),
    ];
    const writeLeaf = ([headers, body]: [string[], Buffer | undefined]) => {
      chunks.push(...headers.map(line), line(''));
      if (body !== undefined) chunks.push(line(body));
    };
    groups.forEach((leaves, index) => {
      chunks.push(line(`--${spec.outer}`));
      if (spec.shape[index] === 0) {
        writeLeaf(leaves[0]!);
        return;
      }
      const inner = `${spec.inner}${index}`;
      chunks.push(
        line(`Content-Type: multipart/alternative; boundary="${inner}"`),
        line(''),
        ...spec.innerPreamble.map(line),
      );
      for (const leaf of leaves) {
        chunks.push(line(`--${inner}`));
        writeLeaf(leaf);
      }
      chunks.push(line(`--${inner}--`), ...spec.innerEpilogue.map(line));
    });
    chunks.push(line(`--${spec.outer}--`), ...spec.epilogue.map(line));
    return Buffer.concat(chunks);
  });

const mutatedMultipart = fc
  .tuple(
    fc.oneof(randomAlternative, randomMixed),
    fc.array(fc.tuple(fc.nat(), fc.nat(20)), { minLength: 1, maxLength: 3 }),
    fc.option(fc.nat(), { nil: undefined }),
  )
  .chain(([raw, inserts, cut]) => {
    const boundaries = [...raw.toString('latin1').matchAll(/boundary="?([^"\r\n]+)"?/g)].map((match) => match[1]!);
    const junk = fc.constantFrom(...boundaries).chain(junkLine);
    return fc.tuple(
      fc.constant(raw),
      fc.constant(inserts),
      fc.constant(cut),
      fc.array(junk, { minLength: inserts.length, maxLength: inserts.length }),
    );
  })
  .map(([raw, inserts, cut, junk]) => {
    const lines = raw.toString('latin1').split('\n');
    inserts.forEach(([position], index) =>
      lines.splice(position % (lines.length + 1), 0, Buffer.from(junk[index]!).toString('latin1')),
    );
    const bytes = Buffer.from(lines.join('\n'), 'latin1');
    return cut === undefined ? bytes : bytes.subarray(0, cut % (bytes.length + 1));
  });

describe('parseSimpleMessage against mailparser (multipart properties)', () => {
  it('gives mailparser’s values for random multipart/alternative messages, and takes the fast path for them', async () => {
    let fast = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(randomAlternative, async (raw) => {
        runs++;
        if (await differential(raw)) fast++;
      }),
      { numRuns: 300, seed: 20261125 },
    );
    // text parts in supported charsets and encodings, delimiters as clients write them: all must be accepted
    expect(fast).toBe(runs);
  });

  it('gives mailparser’s values for random multipart/mixed messages of text parts and alternatives, and takes the fast path for them', async () => {
    let fast = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(randomMixed, async (raw) => {
        runs++;
        if (await differential(raw)) fast++;
      }),
      { numRuns: 200, seed: 777 },
    );
    expect(fast).toBe(runs);
  });

  it('gives mailparser’s values for whatever it accepts of mangled multipart messages', async () => {
    let fast = 0;
    await fc.assert(
      fc.asyncProperty(mutatedMultipart, async (raw) => {
        if (await differential(raw)) fast++;
      }),
      { numRuns: 400, seed: 4242 },
    );
    // some mangling leaves a message the fast path still reads (an empty line or text in a body, say)
    expect(fast).toBeGreaterThan(40);
  });
});

describe('parseSimpleMessage against mailparser (property)', () => {
  it('gives mailparser’s values for random single-part messages, and takes the fast path for them', async () => {
    let fast = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(randomMessage, async (raw) => {
        runs++;
        if (await differential(raw)) fast++;
      }),
      { numRuns: 300, seed: 20260315 },
    );
    // Every generated message is single-part text in a supported charset and encoding: all must be accepted.
    expect(runs).toBe(300);
    expect(fast).toBe(runs);
  });

  it('decodes quoted-printable as libqp does, whatever the mix of =, hex digits, blanks and line breaks', async () => {
    const unit = fc.constantFrom(
      '=',
      '3',
      'D',
      'a',
      'F',
      'z',
      ' ',
      '\t',
      '\r',
      '\n',
      '\r\n',
      '=\r\n',
      '=\n',
      '= \r\n',
      '=3D',
      '=C3=A9',
      '=e2=9c=93',
      '\u00e9',
    );
    let fast = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit, maxLength: 80 }),
        fc.constantFrom('text/plain', 'text/html; charset=iso-8859-1'),
        fc.boolean(),
        async (body, type, multipart) => {
          const part = [`Content-Type: ${type}`, 'Content-Transfer-Encoding: quoted-printable'];
          const raw = multipart
            ? alternative({ boundary: 'qp', parts: [[part, body]] })
            : Buffer.concat([Buffer.from(`From: a@example.com\r\n${part.join('\r\n')}\r\n\r\n`), Buffer.from(body)]);
          if (await differential(raw)) fast++;
        },
      ),
      { numRuns: 400, seed: 99 },
    );
    expect(fast).toBe(400);
  });

  it('gives mailparser’s values for arbitrary bytes in headers and body', async () => {
    let fast = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 60 }), { maxLength: 6 }),
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom(
          '',
          'Content-Transfer-Encoding: quoted-printable\r\n',
          'Content-Transfer-Encoding: base64\r\n',
          'Content-Type: text/html; charset=windows-1252\r\n',
        ),
        async (headerBytes, bodyBytes, part) => {
          const names = ['From: ', 'To: ', 'Subject: ', 'Date: ', 'References: ', 'Message-ID: '];
          const head = headerBytes.map((bytes, index) =>
            Buffer.concat([
              Buffer.from(names[index % names.length]!),
              Buffer.from(bytes.map((byte) => (byte === 0x0a || byte === 0x0d ? 0x20 : byte))),
              Buffer.from('\r\n'),
            ]),
          );
          const raw = Buffer.concat([...head, Buffer.from(part), Buffer.from('\r\n'), Buffer.from(bodyBytes)]);
          if (await differential(raw)) fast++;
        },
      ),
      { numRuns: 150, seed: 7 },
    );
    // base64 bodies of random bytes may hold '=' mid-stream (refused); the rest must be accepted
    expect(fast).toBeGreaterThan(100);
  });
});
