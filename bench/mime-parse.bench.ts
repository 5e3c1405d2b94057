/**
 * CPU cost of parsing one inbound message in the parse worker (src/mail/parse-worker.ts), in the same run:
 * mailparser (`simpleParser` with the worker's options) + normalize() against the fast path
 * (src/mail/simple-mime.ts) + normalize(), on
 * - the ~10 KB message Postfix smtp-source sends (issue 3's SMTP ingest benchmark): CRLF, From/To/Date/Message-Id,
 *   no Content-Type, 80-character lines;
 * - a ~10 KB UTF-8 quoted-printable text/html message (encoded-word subject and names, as Gmail/Outlook send);
 * - a ~6 KB multipart/alternative (UTF-8 quoted-printable text/plain and text/html), what mail clients send and what
 *   a connected account's sync ingests most (issue 19).
 * CPU time (µs per message) is process.cpuUsage() (user + system) over sequential parses, divided by their count. The two results
 * are checked to be equal before measuring. BENCH_MIME_ROUNDS scales the counts (default 1).
 */
import { simpleParser } from 'mailparser';
import { normalize } from '../src/mime/normalize.js';
import { gmailAlternative, qpEncode, smtpSourceMessage } from '../test/helpers/mime.js';
import { PARSER_OPTIONS } from '../src/mime/parse-worker.js';
import { parseSimpleMessage } from '../src/mime/simple-mime.js';

const ROUNDS = Number(process.env.BENCH_MIME_ROUNDS ?? 1);

function htmlQpMessage(): Buffer {
  const paragraph =
    '<p style="margin:0 0 12px 0;font-family:Arial,sans-serif">Bonjour à tous — voici le résumé de la réunion du comité. ' +
    'Les décisions prises : budget validé ✓, calendrier révisé, prochaine étape « lancement » en été. Grüße, Zoë 🎉</p>\n';
  let html =
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8"></head><body><div dir="ltr">\n';
  while (Buffer.byteLength(html) < 7_600) html += paragraph;
  html += '</div></body></html>\n';
  const head = [
    'MIME-Version: 1.0',
    'From: =?UTF-8?Q?Zo=C3=AB_M=C3=BCller?= <zoe@example.com>',
    'To: "Doe, Jane" <jane@example.org>, =?UTF-8?B?Sm9zw6kgw4FsdmFyZXo=?= <jose@example.org>',
    'Subject: =?UTF-8?Q?R=C3=A9union_du_comit=C3=A9_=E2=80=94_r=C3=A9sum=C3=A9?=',
    'Date: Tue, 3 Mar 2026 11:00:00 +0100',
    'Message-ID: <CAF=abc123+XYZ@mail.gmail.com>',
    'In-Reply-To: <prev@example.org>',
    'References: <root@example.org> <prev@example.org>',
    'Content-Type: text/html; charset="UTF-8"',
    'Content-Transfer-Encoding: quoted-printable',
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${qpEncode(Buffer.from(html))}\r\n`);
}

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

async function perMessage(count: number, parse: () => unknown): Promise<number> {
  for (let index = 0; index < Math.min(200, count); index++) await parse();
  const started = cpuMs();
  for (let index = 0; index < count; index++) await parse();
  return (cpuMs() - started) / count;
}

export async function run(): Promise<Record<string, number | string>> {
  const figures: Record<string, number | string> = {};
  const messages: [string, Buffer][] = [
    ['smtp-source 10 KB', smtpSourceMessage()],
    ['html utf-8 qp 10 KB', htmlQpMessage()],
    ['multipart/alternative utf-8 qp 6 KB', gmailAlternative()],
  ];
  for (const [name, raw] of messages) {
    const fast = parseSimpleMessage(raw);
    if (!fast) throw new Error(`${name}: the fast path refused the message`);
    const slow = await simpleParser(raw, PARSER_OPTIONS);
    if (JSON.stringify(normalize(fast).value) !== JSON.stringify(normalize(slow).value))
      throw new Error(`${name}: the fast path and mailparser disagree`);

    const mailparserMs = await perMessage(1_000 * ROUNDS, async () =>
      normalize(await simpleParser(raw, PARSER_OPTIONS)),
    );
    const fastMs = await perMessage(10_000 * ROUNDS, () => normalize(parseSimpleMessage(raw)!));
    const fastParseMs = await perMessage(10_000 * ROUNDS, () => parseSimpleMessage(raw));
    figures[`${name} (${raw.length} B): mailparser + normalize, CPU µs/msg`] = mailparserMs * 1000;
    figures[`${name}: fast path + normalize, CPU µs/msg`] = fastMs * 1000;
    figures[`${name}: fast path alone, CPU µs/msg`] = fastParseMs * 1000;
    figures[`${name}: speed-up (mailparser+normalize / fast+normalize)`] = `${(mailparserMs / fastMs).toFixed(1)}x`;
  }
  return figures;
}
