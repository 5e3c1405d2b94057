/** Message builders shared by the MIME tests and bench/mime-parse.bench.ts. */

/** Quoted-printable with soft line breaks at 76, as mail clients write it. */
export function qpEncode(bytes: Buffer, eol = '\r\n'): string {
  const lines: string[] = [];
  let line = '';
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index]!;
    if (byte === 0x0a) {
      lines.push(line);
      line = '';
      continue;
    }
    const next = bytes[index + 1];
    const plain =
      (byte >= 0x21 && byte <= 0x7e && byte !== 0x3d) ||
      ((byte === 0x20 || byte === 0x09) && next !== undefined && next !== 0x0a && next !== 0x0d);
    const token = plain ? String.fromCharCode(byte) : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    if (line.length + token.length > 75) {
      lines.push(`${line}=`);
      line = '';
    }
    line += token;
  }
  lines.push(line);
  return lines.join(eol);
}

/** The message Postfix smtp-source sends (issue 3's benchmark): about 10 KB of 80-character lines. */
export function smtpSourceMessage(eol = '\r\n', extraHeaders: string[] = []): Buffer {
  const lines = [
    ...extraHeaders,
    'From: <sender@example.com>',
    'To: <agent@bench.agentpost.localhost>',
    'Date: Sun, 22 Nov 2026 03:13:01 +0000 (UTC)',
    'Message-Id: <0a39.0003.0000@vm>',
    '',
  ];
  for (let index = 0; index < 127; index++) lines.push(`${index % 10}${'X'.repeat(77)}`);
  return Buffer.from(`${lines.join(eol)}${eol}`);
}

/** What {@link alternativeMessage} builds. */
export interface AlternativeParts {
  /** Header lines before the root Content-Type (default: From, To, Subject, Date, MIME-Version). */
  head?: string[];
  /** The root type (default multipart/alternative); `; boundary=` follows it. */
  type?: string;
  boundary: string;
  preamble?: string[];
  /** Each part: its header lines and its body (`undefined`: no body line at all, `''`: one empty line). */
  parts: [string[], string | Buffer | undefined][];
  epilogue?: string[];
  /** Line break (default CRLF). */
  eol?: string;
  /** What follows the closing delimiter (default `eol`). */
  close?: string;
}

/** A multipart/alternative message (or another multipart type), built line by line with `eol`. */
export function alternativeMessage(options: AlternativeParts): Buffer {
  const eol = options.eol ?? '\r\n';
  const quoted = /^[A-Za-z0-9_]+$/.test(options.boundary) ? options.boundary : `"${options.boundary}"`;
  const chunks: (string | Buffer)[] = [
    ...(
      options.head ?? [
        'From: Ann <ann@example.org>',
        'To: bob@example.org',
        'Subject: alt',
        'Date: Tue, 3 Mar 2026 11:00:00 +0100',
        'MIME-Version: 1.0',
      ]
    ).map((line) => line + eol),
    `Content-Type: ${options.type ?? 'multipart/alternative'}; boundary=${quoted}${eol}${eol}`,
    ...(options.preamble ?? []).map((line) => line + eol),
  ];
  for (const [headers, body] of options.parts) {
    chunks.push(`--${options.boundary}${eol}`, ...headers.map((line) => line + eol), eol);
    if (body !== undefined) chunks.push(body, eol);
  }
  chunks.push(`--${options.boundary}--${options.close ?? eol}`, ...(options.epilogue ?? []).map((line) => line + eol));
  return Buffer.concat(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)));
}

/** A ~6 KB multipart/alternative as Gmail sends one: UTF-8 quoted-printable text/plain and text/html, encoded words. */
export function gmailAlternative(): Buffer {
  const paragraph =
    'Bonjour à tous — voici le résumé de la réunion du comité. Les décisions prises : budget validé ✓, calendrier révisé. Grüße, Zoë 🎉\n';
  let text = '';
  while (Buffer.byteLength(text) < 1_500) text += paragraph;
  const html = `<div dir="ltr">${text
    .split('\n')
    .filter(Boolean)
    .map((line) => `<div>${line}</div>`)
    .join('\n')}</div>\n`;
  return alternativeMessage({
    head: [
      'MIME-Version: 1.0',
      'From: =?UTF-8?Q?Zo=C3=AB_M=C3=BCller?= <zoe@gmail.com>',
      'Date: Tue, 3 Mar 2026 11:00:00 +0100',
      'Message-ID: <CAF=abc123+XYZ@mail.gmail.com>',
      'Subject: =?UTF-8?Q?R=C3=A9union_du_comit=C3=A9_=E2=80=94_r=C3=A9sum=C3=A9?=',
      'To: "Doe, Jane" <jane@example.org>, =?UTF-8?B?Sm9zw6kgw4FsdmFyZXo=?= <jose@example.org>',
      'In-Reply-To: <prev@example.org>',
      'References: <root@example.org> <prev@example.org>',
    ],
    boundary: '000000000000a1b2c3d4e5f60718',
    parts: [
      [
        ['Content-Type: text/plain; charset="UTF-8"', 'Content-Transfer-Encoding: quoted-printable'],
        qpEncode(Buffer.from(text)),
      ],
      [
        ['Content-Type: text/html; charset="UTF-8"', 'Content-Transfer-Encoding: quoted-printable'],
        qpEncode(Buffer.from(html)),
      ],
    ],
  });
}

/** What {@link imipMessage} builds. */
export interface ImipParts {
  from: string;
  to: string;
  subject: string;
  /** The iCalendar text (any line ends; written with CRLF). */
  ics: string;
  method: string;
  /** Also attach it as `invite.ics` (Base64), as Google and Outlook do. */
  attachment?: boolean;
}

/** An iMIP message as calendar clients send one: a text part and a `text/calendar` alternative (and the `.ics` file). */
export function imipMessage({ from, to, subject, ics, method, attachment = false }: ImipParts): string {
  const calendar = ics.replace(/\r?\n/g, '\r\n').trimEnd();
  return [
    `From: ${from}`,
    `To: ${to}`,
    `Subject: ${subject}`,
    `Message-ID: <${Math.random().toString(36).slice(2)}.${Date.now()}@imip.example>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="mix"',
    '',
    '--mix',
    'Content-Type: multipart/alternative; boundary="alt"',
    '',
    '--alt',
    'Content-Type: text/plain; charset=utf-8',
    '',
    subject,
    '--alt',
    `Content-Type: text/calendar; charset=utf-8; method=${method}`,
    '',
    calendar,
    '--alt--',
    ...(attachment
      ? [
          '--mix',
          'Content-Type: application/ics; name=invite.ics',
          'Content-Disposition: attachment; filename=invite.ics',
          'Content-Transfer-Encoding: base64',
          '',
          Buffer.from(calendar).toString('base64').replace(/.{76}/g, '$&\r\n'),
        ]
      : []),
    '--mix--',
    '',
  ].join('\r\n');
}
