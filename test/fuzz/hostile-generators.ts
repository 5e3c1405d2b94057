/**
 * Generators of hostile input whose cost should grow at most linearly with a size `n`: what the scaling watchdog
 * (./scaling.test.ts) and `npm run bench -- hostile-scaling` send. Each builds one input of size `n`:
 * - `smtp`: a whole message, sent over SMTP to the mailbox `to`;
 * - `http`: a request to the API (after `smtp` ones have stored mail to read);
 * - `parser`: a pure parser of untrusted input the service runs on its event loop (bounce, complaint and DMARC
 *   report readers), called in-process (their only input is the bytes).
 * `sizes.test` is the smallest size `npm test` runs (then 4× and 16× it); `sizes.limit` is the largest the service
 * allows (the header-section limit, the 40 MB message cap, the HTTP body and URL limits), which `npm run fuzz` and the
 * bench reach as 16×.
 */
import { strToU8, zipSync, type Zippable } from 'fflate';
import { buildPdf, INVOICE_PAGES } from '../fixtures/agent/make-attachments.js';
import { aggregateXml, reportEmail, zipOf } from '../helpers/dmarc.js';
import { parseReport } from '../../src/deliverability/report-parser.js';
import { readAggregateReport } from '../../src/domains/dmarc-report-parser.js';

export type Generator =
  | {
      name: string;
      kind: 'smtp';
      sizes: { test: number; limit: number };
      message(n: number, to: string): string;
      /**
       * A read of the stored message measured with it (the conversions made when it is read); `attachmentIds` are
       * the stored message's attachments, in order (looked up first when the read is of an attachment).
       */
      read?(
        grantId: string,
        messageId: string,
        attachmentIds: string[],
      ): { method: string; path: string; body?: string };
      /** The read names an attachment of the message: its ids are looked up before it. */
      readsAttachment?: true;
    }
  | {
      name: string;
      kind: 'http';
      sizes: { test: number; limit: number };
      request(n: number, grantId: string): { method: string; path: string; body?: string };
    }
  | { name: string; kind: 'parser'; sizes: { test: number; limit: number }; run(n: number): Promise<unknown> };

const HEADER_LIMIT = 102_400;
/** The 16× size of a generator that fills the header section, for a header line of `bytes` bytes. */
const headerSizes = (bytes: number, test: number) => ({ test, limit: Math.floor((HEADER_LIMIT - 200) / bytes / 16) });

const message = (to: string, head: string, body = 'hello\r\n', extra = '') =>
  `From: Sender <sender@example.com>\r\nTo: ${to}\r\nSubject: hostile\r\nMessage-ID: <m${Math.random().toString(36).slice(2)}@example.com>\r\n${head}${extra}\r\n${body}`;

/** A multipart nested `depth` levels deep (its Content-Type and body; no header section before it). */
export function nested(depth: number): string {
  let text = 'Content-Type: text/plain\r\n\r\ninnermost\r\n';
  for (let level = depth; level > 0; level--)
    text = `Content-Type: multipart/mixed; boundary="b${level}"\r\n\r\n--b${level}\r\n${text}--b${level}--\r\n`;
  return text;
}

/** A message carrying one attachment (base64 in 76-character lines). */
function withAttachment(to: string, filename: string, contentType: string, bytes: Uint8Array): string {
  const base64 = Buffer.from(bytes).toString('base64').replace(/.{76}/g, '$&\r\n');
  return message(
    to,
    'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="a"\r\n',
    `--a\r\nContent-Type: text/plain\r\n\r\nAttached.\r\n--a\r\nContent-Type: ${contentType}; name="${filename}"\r\nContent-Disposition: attachment; filename="${filename}"\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64}\r\n--a--\r\n`,
  );
}

/** Its attachment read as text (read_attachment's route): the extraction measured with the message. */
const readAttachmentText = (grantId: string, messageId: string, attachmentIds: string[]) => ({
  method: 'GET',
  path: `/v3/grants/${grantId}/attachments/${attachmentIds[0] ?? 'none'}/text?message_id=${messageId}&max_tokens=2000`,
});

/** A generator of messages carrying one hostile file, each read as text through read_attachment's route. */
function attachmentRead(
  name: string,
  sizes: { test: number; limit: number },
  filename: string,
  contentType: string,
  bytes: (n: number) => Uint8Array,
): Generator {
  return {
    name,
    kind: 'smtp',
    sizes,
    message: (n, to) => withAttachment(to, filename, contentType, bytes(n)),
    read: readAttachmentText,
    readsAttachment: true,
  };
}

/** A unique name per input, so no two inputs share the reader's cache (it is keyed by the bytes' hash). */
const unique = () => Math.random().toString(36).slice(2);

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

/** A PDF of `n` pages cut at 90%: its cross-reference table and trailer are gone, so PDF.js rebuilds them by scanning. */
function pdfCutShort(n: number): Uint8Array {
  const pages = Array.from({ length: n }, (_, index) => [
    ...INVOICE_PAGES[index % INVOICE_PAGES.length]!,
    `Page ${index}`,
  ]);
  const pdf = buildPdf(pages, { Title: `Hostile ${unique()}` });
  return pdf.subarray(0, Math.floor(pdf.length * 0.9));
}

/** A DOCX whose directory lists `n` small parts and then a document part of 2 MB of one letter (a ratio near 1,000). */
function docxBomb(n: number): Uint8Array {
  const files: Zippable = {
    '[Content_Types].xml': strToU8(
      `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
    ),
  };
  for (let index = 0; index < n; index++) files[`word/media/part${index}-${unique()}.xml`] = strToU8(`<p>${index}</p>`);
  files['word/document.xml'] = strToU8(
    `<w:document><w:body><w:p><w:r><w:t>${'A'.repeat(2 * 1024 * 1024)}</w:t></w:r></w:p></w:body></w:document>`,
  );
  return zipSync(files);
}

/** An XLSX whose sheet has `n` rows never closed, cells pointing at shared strings that do not exist, numbers out of range. */
function xlsxMalformed(n: number): Uint8Array {
  const rows = Array.from(
    { length: n },
    (_, index) =>
      `<row r="${index + 1}"><c r="A${index + 1}" t="s"><v>${99_999 + index}</v><c r="B${index + 1}"><v>1e999</v><c r="ZZZZ${index}" t="d"><v>not a date`,
  ).join('');
  return zipSync({
    '[Content_Types].xml': strToU8(
      `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>`,
    ),
    'xl/workbook.xml': strToU8(
      `${XML_HEAD}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S ${unique()}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ),
    'xl/_rels/workbook.xml.rels': strToU8(
      `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
    ),
    'xl/worksheets/sheet1.xml': strToU8(
      `${XML_HEAD}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}`,
    ),
  });
}

/** A bounce (RFC 3464) whose returned message has `n` header fields and whose status part lists `n` recipients. */
function bounceOf(n: number): Buffer {
  const recipients = Array.from(
    { length: n },
    (_, index) => `Final-Recipient: rfc822; u${index}@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n`,
  ).join('\r\n');
  const returned = Array.from({ length: n }, (_, index) => `X-R${index}: v`).join('\r\n');
  return Buffer.from(
    'From: MAILER-DAEMON@example.com\r\nTo: bounce+abc@agentpost.example\r\nSubject: Undelivered\r\nContent-Type: multipart/report; report-type=delivery-status; boundary="r"\r\n\r\n' +
      `--r\r\nContent-Type: text/plain\r\n\r\nfailed\r\n--r\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.com\r\n\r\n${recipients}\r\n--r\r\nContent-Type: text/rfc822-headers\r\n\r\n${returned}\r\n--r--\r\n`,
  );
}

/** A complaint (RFC 5965) folded over `n` lines in its feedback part. */
function complaintOf(n: number): Buffer {
  return Buffer.from(
    'From: abuse@isp.example\r\nTo: bounce+abc@agentpost.example\r\nSubject: complaint\r\nContent-Type: multipart/report; report-type=feedback-report; boundary="f"\r\n\r\n' +
      `--f\r\nContent-Type: text/plain\r\n\r\nA complaint\r\n--f\r\nContent-Type: message/feedback-report\r\n\r\nFeedback-Type: abuse\r\nUser-Agent: x\r\nVersion: 1\r\nOriginal-Rcpt-To: <u@example.com>\r\nX-Fold: a\r\n${' b\r\n'.repeat(n)}\r\n--f\r\nContent-Type: message/rfc822\r\n\r\nFrom: agent@agentpost.example\r\nSubject: hi\r\n\r\nbody\r\n--f--\r\n`,
  );
}

export const GENERATORS: Generator[] = [
  // The header section (bounded by the 102,400-byte limit: 16× the largest size stays under it).
  {
    name: 'header folding',
    kind: 'smtp',
    sizes: headerSizes(4, 1_500),
    message: (n, to) => message(to, `X-Fold: a\r\n${' b\r\n'.repeat(n)}`),
  },
  {
    name: 'folded Subject',
    kind: 'smtp',
    sizes: headerSizes(4, 1_500),
    message: (n, to) => message(to, `Subject: a\r\n${' b\r\n'.repeat(n)}`),
  },
  {
    name: 'many header fields',
    kind: 'smtp',
    sizes: headerSizes(12, 500),
    message: (n, to) => message(to, Array.from({ length: n }, (_, index) => `X-H${index}: v\r\n`).join('')),
  },
  {
    name: 'encoded words',
    kind: 'smtp',
    sizes: headerSizes(21, 250),
    message: (n, to) => message(to, `X-Subject: ${'=?UTF-8?B?w6nDqcOp?= '.repeat(n)}\r\n`),
  },
  {
    name: 'address list',
    kind: 'smtp',
    sizes: headerSizes(22, 250),
    message: (n, to) =>
      message(to, `Cc: ${Array.from({ length: n }, (_, index) => `u${index}@example.com`).join(',\r\n ')}\r\n`),
  },
  {
    name: 'References chain',
    kind: 'smtp',
    sizes: headerSizes(26, 200),
    message: (n, to) =>
      message(
        to,
        `References: ${Array.from({ length: n }, (_, index) => `<id${index}@x.example.com>`).join('\r\n ')}\r\n`,
      ),
  },
  // The body (bounded by the 40 MB message cap).
  {
    name: 'long line',
    kind: 'smtp',
    sizes: { test: 128 * 1024, limit: 2 * 1024 * 1024 },
    message: (n, to) => message(to, '', `${'x'.repeat(n)}\r\n`),
  },
  {
    name: 'MIME nesting',
    kind: 'smtp',
    sizes: { test: 50, limit: 600 },
    message: (n, to) => message(to, 'MIME-Version: 1.0\r\n', '', nested(n)),
  },
  {
    name: 'MIME part count',
    kind: 'smtp',
    sizes: { test: 60, limit: 1_000 },
    message: (n, to) =>
      message(
        to,
        'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="p"\r\n',
        `${Array.from({ length: n }, (_, index) => `--p\r\nContent-Type: text/plain; name=a${index}.txt\r\nContent-Disposition: attachment\r\n\r\npart ${index}\r\n`).join('')}--p--\r\n`,
      ),
  },
  {
    name: 'boundary-like lines',
    kind: 'smtp',
    sizes: { test: 2_000, limit: 100_000 },
    message: (n, to) =>
      message(
        to,
        'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="boundary"\r\n',
        `--boundary\r\nContent-Type: text/plain\r\n\r\n${'--boundar\r\n--boundaryx\r\n'.repeat(n)}--boundary--\r\n`,
      ),
  },
  {
    name: 'HTML nesting and links',
    kind: 'smtp',
    sizes: { test: 1_000, limit: 50_000 },
    message: (n, to) =>
      message(
        to,
        'MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n',
        `<html><body>${'<div><a href="https://example.com/x">link</a>'.repeat(n)}${'</div>'.repeat(n)}</body></html>\r\n`,
      ),
    // Its HTML made text, as messages/clean gives it.
    read: (grantId, messageId) => ({
      method: 'PUT',
      path: `/v3/grants/${grantId}/messages/clean`,
      body: JSON.stringify({ message_id: [messageId] }),
    }),
  },
  {
    name: 'HTML unclosed tags',
    kind: 'smtp',
    sizes: { test: 2_000, limit: 100_000 },
    message: (n, to) =>
      message(
        to,
        'MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n',
        `${'<div <p <!-- <a <br '.repeat(n)}From: x ${'\n'.repeat(n)}\r\n`,
      ),
    // 160 KB of unclosed tags held the event loop for 44 s in messages/clean (its tag patterns were quadratic).
    read: (grantId, messageId) => ({
      method: 'PUT',
      path: `/v3/grants/${grantId}/messages/clean`,
      body: JSON.stringify({ message_id: [messageId], html_as_markdown: true }),
    }),
  },
  {
    name: 'iCalendar attendees',
    kind: 'smtp',
    sizes: { test: 50, limit: 2_000 },
    message: (n, to) => {
      const ics = [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'PRODID:-//Scaling//EN',
        'METHOD:REQUEST',
        'BEGIN:VEVENT',
        `UID:scaling-${n}-${Math.random().toString(36).slice(2)}@example.com`,
        'DTSTAMP:20261101T000000Z',
        'DTSTART:20261201T100000Z',
        'DTEND:20261201T110000Z',
        'SUMMARY:Scaling',
        'ORGANIZER:mailto:organizer@example.com',
        `ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:${to}`,
        ...Array.from(
          { length: n },
          (_, index) => `ATTENDEE;CN=Person ${index};PARTSTAT=NEEDS-ACTION:mailto:p${index}@example.com`,
        ),
        'END:VEVENT',
        'END:VCALENDAR',
      ].join('\r\n');
      return message(
        to,
        'MIME-Version: 1.0\r\nContent-Type: text/calendar; method=REQUEST; charset=utf-8\r\n',
        `${ics}\r\n`,
      );
    },
  },
  // Attachments read as text (read_attachment): the extraction runs on the reader's threads under a deadline; what
  // is measured is the service's event loop (ingest, the blob read, the answer), and the answer must be below 500.
  attachmentRead('PDF attachment cut short', { test: 8, limit: 120 }, 'invoice.pdf', 'application/pdf', pdfCutShort),
  attachmentRead('DOCX attachment zip bomb', { test: 100, limit: 600 }, 'contract.docx', DOCX_TYPE, docxBomb),
  attachmentRead('XLSX attachment malformed', { test: 500, limit: 20_000 }, 'budget.xlsx', XLSX_TYPE, xlsxMalformed),
  // The API (JSON bodies up to 3 MB, URLs up to Node's 16 KB header limit).
  {
    name: 'JSON body: recipients',
    kind: 'http',
    sizes: { test: 100, limit: 2_000 },
    request: (n, grantId) => ({
      method: 'POST',
      path: `/v3/grants/${grantId}/drafts`,
      body: JSON.stringify({
        subject: 'x',
        body: 'y',
        to: Array.from({ length: n }, (_, index) => ({ email: `u${index}@example.com`, name: `U ${index}` })),
      }),
    }),
  },
  {
    name: 'JSON body: metadata and long strings',
    kind: 'http',
    sizes: { test: 10_000, limit: 150_000 },
    request: (n, grantId) => ({
      method: 'POST',
      path: `/v3/grants/${grantId}/drafts`,
      body: JSON.stringify({
        subject: 's'.repeat(Math.min(n, 900)),
        body: `<p>${'word '.repeat(n)}</p>`,
        to: [{ email: 'u@example.com' }],
      }),
    }),
  },
  {
    name: 'query string',
    kind: 'http',
    sizes: { test: 20, limit: 900 },
    request: (n, grantId) => ({
      method: 'GET',
      path: `/v3/grants/${grantId}/messages?limit=5&${Array.from({ length: n }, (_, index) => `x${index}=v`).join('&')}`,
    }),
  },
  {
    name: 'search syntax',
    kind: 'http',
    sizes: { test: 4, limit: 60 },
    request: (n, grantId) => ({
      method: 'GET',
      path: `/v3/grants/${grantId}/messages?limit=5&search_query_native=${encodeURIComponent(
        Array.from({ length: n }, (_, index) => `(from:a${index} OR "b c${index}" OR d*)`)
          .join(' ')
          .slice(0, 1000),
      )}`,
    }),
  },
  // Report readers (on the event loop when a report arrives at a return path or the DMARC address).
  {
    name: 'DSN report',
    kind: 'parser',
    sizes: { test: 100, limit: 2_000 },
    run: async (n) => parseReport(bounceOf(n)),
  },
  {
    name: 'ARF report',
    kind: 'parser',
    sizes: { test: 500, limit: 8_000 },
    run: async (n) => parseReport(complaintOf(n)),
  },
  {
    name: 'DMARC XML',
    kind: 'parser',
    sizes: { test: 20, limit: 300 },
    run: async (n) => {
      const xml = aggregateXml({
        domain: 'example.com',
        reportId: `r${n}`,
        records: Array.from({ length: n }, (_, index) => ({ ip: `192.0.2.${index % 250}`, count: index + 1 })),
      });
      const email = reportEmail({
        to: 'dmarc-reports@example.com',
        file: zipOf('report.xml', Buffer.from(xml)),
        filename: 'report.zip',
        contentType: 'application/zip',
      });
      return readAggregateReport(email);
    },
  },
];
