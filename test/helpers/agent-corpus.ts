/**
 * Mail an agent reads, delivered into a real core (issue 35): threads of replies, a page of long report items and a
 * message carrying files. Shared by the read tests (test/tools/reads.test.ts, read-attachment.test.ts) and
 * `npm run bench -- agent-reads`, so the bench measures the very corpus the tests check.
 */
import type { Core } from '../../src/index.js';

/** The body of message `index` of a thread: distinct paragraphs, its number at both ends so a cut shows. */
export function threadBody(topic: string, index: number, paragraphs: number): string {
  const paragraph = (line: number) =>
    `Paragraph ${line} of message ${index} about the ${topic}: we went through the figures again with the team, checked each line against last quarter, and wrote down what still needs an answer before Friday.`;
  return [
    `Start of message ${index} (${topic}).`,
    ...Array.from({ length: paragraphs }, (_, line) => paragraph(line + 1)),
    `End of message ${index} (${topic}).`,
  ].join('\n\n');
}

/** A text/plain message of `headers` and `body` (CRLF line ends). */
export function plainMail(headers: string[], body: string): Buffer {
  return Buffer.from(
    `${headers.join('\r\n')}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body.replace(/\n/g, '\r\n')}\r\n`,
  );
}

/** Delivers a thread of `count` replies to `mailbox`, an hour apart, and answers the thread id. */
export async function deliverThread(
  core: Core,
  mailbox: string,
  topic: string,
  count: number,
  paragraphs: number,
): Promise<string> {
  let threadId = '';
  const ids: string[] = [];
  for (let index = 1; index <= count; index += 1) {
    const id = `<${topic.replace(/\W+/g, '-')}-${index}@example.org>`;
    const sender = index % 2 === 1 ? 'Pat Doe <pat@example.org>' : 'Sam Roe <sam@example.org>';
    const headers = [
      `From: ${sender}`,
      `To: ${mailbox}`,
      `Subject: ${index === 1 ? '' : 'Re: '}${topic}`,
      `Message-ID: ${id}`,
      `Date: ${new Date(Date.UTC(2026, 2, 2, 8 + index, 0, 0)).toUTCString().replace('GMT', '+0000')}`,
      ...(ids.length > 0 ? [`In-Reply-To: ${ids.at(-1)}`, `References: ${ids.join(' ')}`] : []),
    ];
    ids.push(id);
    const delivered = await core.mail.inbound.deliverInbound({
      rawMime: plainMail(headers, threadBody(topic, index, paragraphs)),
      envelope: { mailFrom: 'pat@example.org', rcptTo: [mailbox] },
    });
    threadId = delivered.deliveries[0]!.threadId;
  }
  return threadId;
}

/**
 * Delivers `count` report messages to `mailbox` whose compact items (six named recipients, a long subject) take,
 * at 50, about twice a result's budget together.
 */
export async function deliverReports(core: Core, mailbox: string, count: number): Promise<void> {
  const recipients = Array.from(
    { length: 6 },
    (_, index) => `Recipient Number${index} <recipient.number${index}@partners.example.com>`,
  ).join(', ');
  for (let index = 1; index <= count; index += 1) {
    const subject = `Item ${index}: quarterly partner report with the regional figures, the open questions and the next steps agreed in the meeting`;
    await core.mail.inbound.deliverInbound({
      rawMime: plainMail(
        [
          `From: Reports <reports@example.org>`,
          `To: ${mailbox}, ${recipients}`,
          `Subject: ${subject}`,
          `Message-ID: <item-${index}@example.org>`,
        ],
        threadBody('report', index, 3),
      ),
      envelope: { mailFrom: 'reports@example.org', rcptTo: [mailbox] },
    });
  }
}

/** A multipart/mixed message carrying `files` (base64 in 76-character lines) after a one-line text part. */
export function mailWithFiles(
  headers: string[],
  files: readonly { name: string; type: string; bytes: Uint8Array }[],
): Buffer {
  const parts = files.map(({ name, type, bytes }) => {
    const base64 = Buffer.from(bytes).toString('base64').replace(/.{76}/g, '$&\r\n');
    return `--b\r\nContent-Type: ${type}; name="${name}"\r\nContent-Disposition: attachment; filename="${name}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64}\r\n`;
  });
  return Buffer.from(
    `${headers.join('\r\n')}\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nEverything attached.\r\n${parts.join('')}--b--\r\n`,
  );
}
