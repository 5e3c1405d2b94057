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
    const plain = (byte >= 0x21 && byte <= 0x7e && byte !== 0x3d) || ((byte === 0x20 || byte === 0x09) && next !== undefined && next !== 0x0a && next !== 0x0d);
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
  const lines = [...extraHeaders, 'From: <sender@example.com>', 'To: <agent@bench.agentpost.localhost>', 'Date: Sun, 22 Nov 2026 03:13:01 +0000 (UTC)', 'Message-Id: <0a39.0003.0000@vm>', ''];
  for (let index = 0; index < 127; index++) lines.push(`${index % 10}${'X'.repeat(77)}`);
  return Buffer.from(`${lines.join(eol)}${eol}`);
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
    ...(attachment ? ['--mix', 'Content-Type: application/ics; name=invite.ics', 'Content-Disposition: attachment; filename=invite.ics', 'Content-Transfer-Encoding: base64', '', Buffer.from(calendar).toString('base64').replace(/.{76}/g, '$&\r\n')] : []),
    '--mix--',
    '',
  ].join('\r\n');
}
