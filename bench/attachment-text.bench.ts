/**
 * `npm run bench -- attachment-text`: throughput of src/attachment-text (MB/s of attachment bytes, first page of
 * 5,000 tokens, through the worker thread, the cache bypassed) per format, beside the library alone on the same
 * file in the same run: PDF.js (unpdf) text extraction; zlib inflate plus an htmlparser2 XML pass over every part
 * for DOCX, XLSX, PPTX and ODS; Papa Parse for CSV; htmlparser2 for HTML; ical.js for iCalendar; mailparser for
 * message/rfc822. Inputs: the corpus of test/fixtures/agent (built by make-attachments.ts), scaled where a file is
 * too small to measure (a 200-page invoice, a contract of 200 copies, a 20,000-row sheet).
 */
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';
import { strToU8, zipSync } from 'fflate';
import { Parser } from 'htmlparser2';
import ICAL from 'ical.js';
import { simpleParser } from 'mailparser';
import Papa from 'papaparse';
import { extractText, getDocumentProxy } from 'unpdf';
import { createAttachmentTextReader } from '../src/attachment-text/index.js';
import { buildDocx, buildPdf, INVOICE_PAGES } from '../test/fixtures/agent/make-attachments.js';

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

/** zlib + htmlparser2 over every entry of a zip: the libraries alone, without reading anything out. */
function inflateAndParse(bytes: Uint8Array): void {
  const view = Buffer.from(bytes);
  for (let at = 0; at + 30 < view.length;) {
    if (view.readUInt32LE(at) !== 0x04034b50) break;
    const method = view.readUInt16LE(at + 8);
    const size = view.readUInt32LE(at + 18);
    const start = at + 30 + view.readUInt16LE(at + 26) + view.readUInt16LE(at + 28);
    const data = view.subarray(start, start + size);
    const xml = (method === 8 ? inflateRawSync(data) : data).toString('utf8');
    const parser = new Parser({}, { xmlMode: true });
    parser.write(xml);
    parser.end();
    at = start + size;
  }
}

interface Case {
  name: string;
  filename: string;
  bytes: Uint8Array;
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

export async function run(): Promise<Record<string, number | string>> {
  const invoicePages = Array.from({ length: 100 }, () => INVOICE_PAGES).flat();
  const cases: Case[] = [
    {
      name: 'pdf (200 pages)',
      filename: 'invoice.pdf',
      bytes: buildPdf(invoicePages, { Title: 'Invoice' }),
      library: async (bytes) => extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true }),
    },
    { name: 'docx (contract × 200)', filename: 'contract.docx', bytes: buildDocx(200), library: inflateAndParse },
    { name: 'xlsx (20,000 rows)', filename: 'data.xlsx', bytes: bigXlsx(20_000), library: inflateAndParse },
    { name: 'ods', filename: 'budget.ods', bytes: fixture('budget.ods'), library: inflateAndParse },
    { name: 'pptx', filename: 'roadmap.pptx', bytes: fixture('roadmap.pptx'), library: inflateAndParse },
    {
      name: 'csv (5,000 rows)',
      filename: 'orders-export.csv',
      bytes: fixture('orders-export.csv'),
      library: (bytes) => Papa.parse(Buffer.from(bytes).toString('utf8'), { skipEmptyLines: 'greedy' }),
    },
    {
      name: 'html',
      filename: 'newsletter.html',
      bytes: fixture('newsletter.html'),
      library: (bytes) => {
        const parser = new Parser({});
        parser.write(Buffer.from(bytes).toString('utf8'));
        parser.end();
      },
    },
    {
      name: 'ics',
      filename: 'supplier-review.ics',
      bytes: fixture('supplier-review.ics'),
      library: (bytes) => ICAL.parse(Buffer.from(bytes).toString('utf8')),
    },
    {
      name: 'eml',
      filename: 'vat-question.eml',
      bytes: fixture('vat-question.eml'),
      library: (bytes) => simpleParser(Buffer.from(bytes)),
    },
  ];

  const reader = createAttachmentTextReader({ workers: 1, cacheEntries: 1 });
  await reader.warmUp();
  const figures: Record<string, number | string> = {};
  try {
    for (const item of cases) {
      const megabytes = item.bytes.length / 1e6;
      const runs = megabytes > 0.1 ? 5 : 20;
      // Warm both paths once (modules, JIT), then measure; a different maxCharacters each run bypasses the cache.
      await reader.extract(item.bytes, { filename: item.filename, maxCharacters: 3_000_000 });
      await item.library(item.bytes);
      const ours = await median(runs, (index) =>
        reader.extract(item.bytes, { filename: item.filename, maxTokens: 5_000, maxCharacters: 2_000_000 - index }),
      );
      const library = await median(runs, () => item.library(item.bytes));
      figures[`${item.name}: input KB`] = Math.round(item.bytes.length / 1024);
      figures[`${item.name}: attachment-text MB/s`] = megabytes / ours;
      figures[`${item.name}: library alone MB/s (reference)`] = megabytes / library;
      figures[`${item.name}: attachment-text ms`] = ours * 1000;
    }
  } finally {
    await reader.close();
  }
  return figures;
}
