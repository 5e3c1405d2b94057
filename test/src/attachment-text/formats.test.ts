/**
 * Every format of the corpus (test/fixtures/agent/attachments, built by make-attachments.ts) read as text: what an
 * agent needs of each is there, in reading order, with the metadata that goes with it.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAttachmentTextReader,
  type AttachmentText,
  type AttachmentTextOptions,
  type AttachmentTextReader,
} from '../../../src/attachment-text/index.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/agent/attachments/${name}`, import.meta.url));

let reader: AttachmentTextReader;
beforeAll(async () => {
  reader = createAttachmentTextReader({ workers: 1 });
  await reader.warmUp();
}, 60_000);
afterAll(() => reader.close());

function read(name: string, options: AttachmentTextOptions = {}): Promise<AttachmentText> {
  return reader.extract(fixture(name), { filename: name, maxTokens: 50_000, ...options });
}

describe('documents', () => {
  it('reads the PDF invoice page by page, with its line items, totals and metadata', async () => {
    const result = await read('invoice.pdf', { contentType: 'application/pdf' });
    expect(result.format).toBe('text');
    expect(result.text).toContain('--- Page 1 of 2 ---');
    expect(result.text).toContain('Invoice number: INV-2025-0417');
    expect(result.text).toContain('Northwind Traders GmbH, Speicherstraße 12, 20457 Hamburg, Germany');
    expect(result.text).toMatch(/Espresso beans, 1 kg bags 40 18\.50 740\.00/);
    expect(result.text).toMatch(/Total due 1,905\.00 EUR/);
    expect(result.text.indexOf('Terms and conditions')).toBeGreaterThan(result.text.indexOf('--- Page 2 of 2 ---'));
    expect(result.metadata).toMatchObject({
      kind: 'pdf',
      pages: 2,
      pagesRead: 2,
      title: 'Invoice INV-2025-0417',
      author: 'Northwind Traders GmbH',
      textReadable: true,
    });
    expect(result.truncated).toBeUndefined();
    expect(result.metadata.tokens).toBeGreaterThan(300);
  });

  it('reads the DOCX contract as Markdown: headings, list, table, bold, link', async () => {
    const { text, format, metadata } = await read('contract.docx');
    expect(format).toBe('markdown');
    expect(text.startsWith('# Master Services Agreement\n\n')).toBe(true);
    expect(text).toContain('# 1. Services');
    expect(text).toContain('## 1.1 Service levels');
    expect(text).toContain('between **Agentpost Hosting B.V.**, Keizersgracht 221');
    expect(text).toContain('- hosted mailboxes for up to 250 users;\n- shared calendars with free/busy lookup;');
    expect(text).toContain(
      '| Service | Availability | Response time | Monthly fee |\n| --- | --- | --- | --- |\n| Managed mail hosting | 99.9% | 4 hours | EUR 1,200 |',
    );
    expect(text).toContain('[the price list](https://agentpost.example/pricing?plan=business)');
    expect(text).toContain('three months’ written notice');
    expect(metadata).toMatchObject({
      kind: 'docx',
      title: 'Master Services Agreement - Contoso',
      author: 'Maarten de Vries',
    });
  });

  it('reads the PPTX in presentation order, with titles, bullets and speaker notes', async () => {
    const { text, metadata } = await read('roadmap.pptx');
    const first = text.indexOf('## Slide 1 of 3: Agentpost roadmap 2025');
    const second = text.indexOf('## Slide 2 of 3: Q2: attachments agents can read');
    const third = text.indexOf('## Slide 3 of 3: Q3: calendars everywhere');
    expect(first).toBe(0);
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
    expect(text).toContain('- Zip bombs refused before inflating');
    expect(text).toContain('Notes: Open with the customer numbers: 41 tenants, 3,200 mailboxes.');
    expect(metadata.slides).toBe(3);
  });
});

describe('spreadsheets', () => {
  const SUMMARY =
    '| Cost centre | Budget 2025 | Spent Q1 | Remaining |\n| --- | --- | --- | --- |\n| Engineering | 480000 | 112350.5 | 367649.5 |';
  const EXPENSES = '| 2025-01-10 | Hetzner Online GmbH | Hosting | 1840.2 | TRUE |';

  it('reads every sheet of the XLSX: shared and inline strings, dates, booleans, cached formula values', async () => {
    const { text, metadata } = await read('budget.xlsx');
    expect(text).toContain('## Sheet 1 of 3: Summary');
    expect(text).toContain(SUMMARY);
    expect(text).toContain('| Total | 885000 | 223425.75 |  |');
    expect(text).toContain('## Sheet 2 of 3: Q1 Expenses');
    expect(text).toContain(EXPENSES);
    expect(text).toContain('| 2025-02-24 | Figma, Inc. | Software \\| design | 540 | FALSE |');
    expect(text).toContain('| Platform | 12 | 12 | 13 |');
    expect(metadata.sheets?.map((sheet) => sheet.name)).toEqual(['Summary', 'Q1 Expenses', 'Headcount']);
  });

  it('reads the ODS the same way, its million repeated empty rows costing nothing', async () => {
    const started = performance.now();
    const { text, metadata } = await read('budget.ods');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(text).toContain(SUMMARY);
    expect(text).toContain(EXPENSES);
    expect(metadata).toMatchObject({ kind: 'ods', title: 'Budget 2025', author: 'Lena Fischer' });
    expect(metadata.sheets?.[0]).toMatchObject({ name: 'Summary', rows: 5, columns: 4 });
  });

  it('reads the 5,000-row CSV export as one table, quoted commas, quotes and line breaks kept in their cells', async () => {
    const { text, metadata } = await read('orders-export.csv', { maxTokens: 1_000_000 });
    const lines = text.split('\n');
    expect(lines[0]).toBe('| order_id | order_date | customer | email | amount_eur | status | notes |');
    expect(text).toContain('| SO-100001 | 2025-01-02 | Fabrikam, Inc. | orders+1@fabrikam.example | 79.19 | open |  |');
    expect(text).toContain('| Adventure Works "AW" |');
    expect(text).toContain('Split delivery; second part <br> shipped separately');
    expect(text).toContain('| SO-105000 |');
    expect(metadata.sheets?.[0]).toMatchObject({ rows: 5001, columns: 7, rowsShown: 5001 });
  });

  it('bounds rows and columns, and says what it left out', async () => {
    const { text, metadata } = await read('orders-export.csv', { maxRows: 100, maxColumns: 3 });
    expect(text).toContain('| order_id | order_date | customer |\n');
    expect(text).not.toContain('SO-100100 |');
    expect(text).toContain('rows 101–5,001 not shown (limit 100 rows)');
    expect(text).toContain('columns D–G not shown (limit 3 columns)');
    expect(metadata.omitted).toHaveLength(2);
  });
});

describe('mail formats', () => {
  it('summarises the .ics invitation with the calendar area’s parser, in the event’s zone', async () => {
    const { text, metadata } = await read('supplier-review.ics', { contentType: 'text/calendar; method=REQUEST' });
    expect(text).toContain('# Calendar invitation: 1 event');
    expect(text).toContain('## Quarterly supplier review - Northwind / Contoso');
    expect(text).toContain('- When: 2025-05-12 14:00 – 15:30 (Europe/Berlin)');
    expect(text).toContain('- Where: Meeting room Elbe (3rd floor), Speicherstraße 12, Hamburg');
    expect(text).toContain('- Organizer: Lena Fischer <lena.fischer@northwind-traders.example>');
    expect(text).toContain('Agent Smith <agent@agentpost.example> (no answer yet)');
    expect(text).toContain('3. Delivery schedule for May');
    expect(metadata).toMatchObject({ kind: 'calendar', events: 1 });
  });

  it('reads a calendar the parser refuses line by line (an .ics over its 1 MB limit)', async () => {
    const ics = fixture('supplier-review.ics').toString('utf8');
    const events = ics.slice(ics.indexOf('BEGIN:VEVENT'), ics.indexOf('END:VCALENDAR'));
    const big = `BEGIN:VCALENDAR\r\nVERSION:2.0\r\n${events.repeat(1000)}END:VCALENDAR\r\n`;
    expect(big.length).toBeGreaterThan(1_000_000);
    const { text, metadata } = await reader.extract(Buffer.from(big), { filename: 'big.ics', maxTokens: 2_000 });
    expect(metadata.events).toBe(1000);
    expect(text).toContain('## Quarterly supplier review - Northwind / Contoso');
    expect(text).toContain(
      '- When: 2025-05-12 14:00 (W. Europe Standard Time) – 2025-05-12 15:30 (W. Europe Standard Time)',
    );
  });

  it('reads the forwarded .eml: header fields, the text body, its own attachments listed', async () => {
    const { text, metadata } = await read('vat-question.eml', { contentType: 'message/rfc822' });
    expect(text).toContain('From: Aoife Byrne <aoife.byrne@contoso.example>');
    expect(text).toContain('Cc: Kelly, Sean <sean.kelly@contoso.example>');
    expect(text).toContain('Subject: Re: Invoice INV-2025-0417 – question about VAT');
    expect(text).toContain('Our VAT number is **IE6388047V**; could you confirm');
    expect(text).toContain('- PO-88213.pdf (application/pdf, 38 bytes)');
    expect(metadata.attachments).toEqual([{ filename: 'PO-88213.pdf', contentType: 'application/pdf', bytes: 38 }]);
  });

  it('converts HTML with the built-in fallback: links, lists, tables, alt text, no scripts or styles', async () => {
    const { text, format } = await read('newsletter.html');
    expect(format).toBe('markdown');
    expect(text).toContain('# April at Northwind Traders');
    expect(text).toContain('[single-origin Ethiopian beans](https://northwind-traders.example/coffee/ethiopia-guji)');
    expect(text).toContain('- Orders placed before 14:00 ship the same day.');
    expect(text).toContain('| Espresso beans 1 kg | EUR 18.50 |');
    expect(text).toContain('Spring banner: coffee cups on a table');
    expect(text).not.toContain('dataLayer');
    expect(text).not.toContain('font-family');
  });

  it('hands HTML to the caller’s converter when given one (the seam for src/reading), and caches per converter', async () => {
    const seen: string[] = [];
    const convert = (html: string) => {
      seen.push(html);
      return `converted ${html.length}`;
    };
    const first = await read('newsletter.html', { htmlToMarkdown: convert });
    const again = await read('newsletter.html', { htmlToMarkdown: convert });
    expect(first.text).toBe(`converted ${fixture('newsletter.html').toString('utf8').length}`);
    expect(again.text).toBe(first.text);
    expect(seen).toHaveLength(1);
    const fallback = await read('newsletter.html');
    expect(fallback.text).toContain('# April at Northwind Traders');
  });

  it('reads plain text as it is', async () => {
    const { text, format } = await read('meeting-notes.txt', { contentType: 'text/plain; charset=utf-8' });
    expect(format).toBe('text');
    expect(text).toBe(fixture('meeting-notes.txt').toString('utf8'));
  });

  it('reads windows-1252 text that is not UTF-8', async () => {
    const bytes = Buffer.from('Gr\xfc\xdfe aus K\xf6ln \x80 50\n', 'latin1');
    const { text } = await reader.extract(bytes, { filename: 'note.txt' });
    expect(text).toBe('Grüße aus Köln € 50\n');
  });
});

describe('no text', () => {
  it('answers an image with its metadata and says no text can be read', async () => {
    const result = await read('logo.png', { contentType: 'image/png' });
    expect(result.text).toBe('');
    expect(result.metadata).toMatchObject({
      kind: 'image',
      contentType: 'image/png',
      textReadable: false,
      image: { format: 'png', width: 64, height: 32 },
    });
    expect(result.metadata.note).toContain('No text can be read from an image (png, 64×32)');
  });

  it('answers an unknown binary type with its metadata', async () => {
    const bytes = Buffer.from([0x00, 0x01, 0x02, 0xfe, 0xff, 0x00, 0x10, 0x20]);
    const result = await reader.extract(bytes, { contentType: 'application/x-msdownload', filename: 'setup.exe' });
    expect(result.text).toBe('');
    expect(result.metadata).toMatchObject({
      kind: 'unknown',
      contentType: 'application/x-msdownload',
      textReadable: false,
    });
    expect(result.metadata.note).toContain('No text can be read from this type (application/x-msdownload)');
  });

  it('trusts the bytes over the declared type (a PDF sent as application/octet-stream named .bin)', async () => {
    const result = await reader.extract(fixture('invoice.pdf'), {
      contentType: 'application/octet-stream',
      filename: 'scan.bin',
    });
    expect(result.metadata.kind).toBe('pdf');
    expect(result.text).toContain('INV-2025-0417');
  });
});
