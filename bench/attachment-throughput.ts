/**
 * Attachment text throughput, a part of `npm run bench -- agent-reads`: MB/s of attachment bytes through
 * `extractAttachmentText` (src/attachment-text: first page of 5,000 tokens, through the worker thread, the cache
 * bypassed by a different `maxCharacters` each run) per format, beside the library alone on the same bytes in the
 * same run: PDF.js (unpdf) text extraction; the bounded zip reader (`openZip`) and the XML walk (`walkXml`, htmlparser2)
 * over every part for DOCX, XLSX, PPTX and ODS; Papa Parse for CSV; htmlparser2 for HTML; ical.js for iCalendar;
 * mailparser for message/rfc822. Inputs are the corpus of test/fixtures/agent grown in memory (its builders'
 * `copies`, rows repeated), with the row and page bounds raised so the whole file is read.
 */
import { readFileSync } from 'node:fs';
import { strToU8, zipSync } from 'fflate';
import { Parser } from 'htmlparser2';
import ICAL from 'ical.js';
import { simpleParser } from 'mailparser';
import Papa from 'papaparse';
import { extractText, getDocumentProxy } from 'unpdf';
import { extractAttachmentText, openZip, sharedAttachmentTextReader } from '../src/attachment-text/index.js';
import { walkXml } from '../src/attachment-text/xml.js';
import { buildDocx, buildOds, buildPdf, buildPptx, INVOICE_PAGES } from '../test/fixtures/agent/make-attachments.js';

const fixture = (name: string) => readFileSync(new URL(`../test/fixtures/agent/attachments/${name}`, import.meta.url));

/** A one-sheet XLSX of `rows` rows × 8 columns (numbers and inline strings), as exporters write it. */
function bigXlsx(rows: number): Uint8Array {
  const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const sheetRows: string[] = [];
  for (let r = 1; r <= rows; r++)
    sheetRows.push(
      `<row r="${r}">${Array.from({ length: 8 }, (_, c) =>
        c % 2
          ? `<c r="${String.fromCharCode(65 + c)}${r}"><v>${(r * 31 + c) % 10007}.25</v></c>`
          : `<c r="${String.fromCharCode(65 + c)}${r}" t="inlineStr"><is><t>item ${r}-${c}</t></is></c>`,
      ).join('')}</row>`,
    );
  return zipSync({
    '[Content_Types].xml': strToU8('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
    'xl/workbook.xml': strToU8(
      `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${R}"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ),
    'xl/_rels/workbook.xml.rels': strToU8(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
    ),
    'xl/worksheets/sheet1.xml': strToU8(
      `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${sheetRows.join('')}</sheetData></worksheet>`,
    ),
  });
}

/** The CSV export with its 5,000 rows repeated `copies` times under one header. */
function bigCsv(copies: number): Uint8Array {
  const text = fixture('orders-export.csv').toString('utf8');
  const header = text.indexOf('\r\n') + 2;
  return Buffer.from(text.slice(0, header) + text.slice(header).repeat(copies));
}

/** The newsletter attachment with its body repeated `copies` times in one document. */
function bigHtml(copies: number): Uint8Array {
  const text = fixture('newsletter.html').toString('utf8');
  const open = text.indexOf('<body>') + '<body>'.length;
  const close = text.indexOf('</body>');
  return Buffer.from(text.slice(0, open) + text.slice(open, close).repeat(copies) + text.slice(close));
}

/** The bounded zip reader and the XML walk over every XML part, with no handlers: the libraries alone. */
function zipAndXml(bytes: Uint8Array): void {
  const archive = openZip(Buffer.from(bytes));
  for (const name of archive.entries.keys()) if (/\.(xml|rels)$/.test(name)) walkXml(archive.read(name)!, {}, name);
}

/** Inflated megabytes of a zip's entries (what the XML walk reads). */
function inflatedMegabytes(bytes: Uint8Array): number {
  let size = 0;
  for (const entry of openZip(Buffer.from(bytes)).entries.values()) size += entry.size;
  return size / 1e6;
}

const n = (value: number) => Math.round(value).toLocaleString('en-US');

interface Case {
  name: string;
  filename: string;
  bytes: Uint8Array;
  zip?: true;
  library: (bytes: Uint8Array) => unknown;
}

/** Median seconds of `runs` runs of `work`. */
async function median(runs: number, work: (index: number) => unknown): Promise<number> {
  const times: number[] = [];
  for (let index = 0; index < runs; index++) {
    const started = performance.now();
    await work(index);
    times.push((performance.now() - started) / 1000);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

function cases(): Case[] {
  const pdfPages = Array.from({ length: 500 }, () => INVOICE_PAGES).flat();
  return [
    {
      name: `pdf (${pdfPages.length} pages)`,
      filename: 'invoice.pdf',
      bytes: buildPdf(pdfPages, { Title: 'Invoice' }),
      library: async (bytes) => extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true }),
    },
    { name: 'docx (contract × 500)', filename: 'contract.docx', bytes: buildDocx(500), zip: true, library: zipAndXml },
    { name: 'xlsx (30,000 rows)', filename: 'data.xlsx', bytes: bigXlsx(30_000), zip: true, library: zipAndXml },
    {
      name: 'ods (budget rows × 2,000)',
      filename: 'budget.ods',
      bytes: buildOds(2_000),
      zip: true,
      library: zipAndXml,
    },
    { name: 'pptx (roadmap × 700)', filename: 'roadmap.pptx', bytes: buildPptx(700), zip: true, library: zipAndXml },
    {
      name: 'csv (25,000 rows)',
      filename: 'orders-export.csv',
      bytes: bigCsv(5),
      library: (bytes) => Papa.parse(Buffer.from(bytes).toString('utf8'), { skipEmptyLines: 'greedy' }),
    },
    {
      name: 'html (newsletter body × 2,000)',
      filename: 'newsletter.html',
      bytes: bigHtml(2_000),
      library: (bytes) => {
        const parser = new Parser({});
        parser.write(Buffer.from(bytes).toString('utf8'));
        parser.end();
      },
    },
    {
      name: 'ics (as is)',
      filename: 'supplier-review.ics',
      bytes: fixture('supplier-review.ics'),
      library: (bytes) => ICAL.parse(Buffer.from(bytes).toString('utf8')),
    },
    {
      name: 'eml (as is)',
      filename: 'vat-question.eml',
      bytes: fixture('vat-question.eml'),
      library: (bytes) => simpleParser(Buffer.from(bytes)),
    },
  ];
}

/**
 * Bounds raised so a grown file is read whole (the defaults stop at 10,000 rows and 500 pages), and a deadline that a
 * loaded machine does not reach (the default, 15 s, stopped the 1,000-page PDF at a load of 15 on 2 cores).
 */
const WHOLE = { maxRows: 100_000, maxPages: 10_000, timeoutMs: 600_000 } as const;

export async function attachmentThroughput(): Promise<Record<string, number | string>> {
  const reader = sharedAttachmentTextReader();
  await reader.warmUp();
  const figures: Record<string, number | string> = {};
  try {
    for (const item of cases()) {
      const megabytes = item.bytes.length / 1e6;
      const runs = megabytes > 0.1 ? 3 : 20;
      // Warm both paths once (modules, JIT), then measure; a different maxCharacters each run bypasses the cache.
      const first = await extractAttachmentText(item.bytes, {
        filename: item.filename,
        ...WHOLE,
        maxCharacters: 9_999_999,
      });
      await item.library(item.bytes);
      const ours = await median(runs, (index) =>
        extractAttachmentText(item.bytes, {
          filename: item.filename,
          ...WHOLE,
          maxTokens: 5_000,
          maxCharacters: 9_000_000 - index,
        }),
      );
      const library = await median(runs, () => item.library(item.bytes));
      // Zip formats: MB/s of the file and, after the slash, of its inflated parts (what the XML walk reads).
      const inflated = item.zip ? inflatedMegabytes(item.bytes) : undefined;
      const rate = (seconds: number) =>
        inflated === undefined
          ? Number((megabytes / seconds).toFixed(2))
          : `${(megabytes / seconds).toFixed(2)} / ${(inflated / seconds).toFixed(1)}`;
      const per = inflated === undefined ? 'MB/s' : 'MB/s (file / inflated)';
      figures[`${item.name}: input KB${inflated === undefined ? '' : ' (inflated KB)'}`] =
        inflated === undefined
          ? Math.round(item.bytes.length / 1024)
          : `${n(item.bytes.length / 1024)} (${n((inflated * 1e6) / 1024)})`;
      figures[`${item.name}: text characters (${first.metadata.kind})`] = first.metadata.characters;
      figures[`${item.name}: extractAttachmentText ${per}`] = rate(ours);
      figures[`${item.name}: library alone ${per} (reference)`] = rate(library);
    }
  } finally {
    await reader.close();
  }
  return figures;
}
