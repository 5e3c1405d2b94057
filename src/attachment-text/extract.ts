/**
 * @module attachment-text/extract
 * The work done in the worker thread (extract-worker.ts): the bytes of one attachment, of a kind detect.ts found,
 * read by the reader of its format. Zip containers are opened and checked (zip.ts) before any format reader sees
 * them. Everything here may be slow or hostile; the thread's deadline and heap cap bound it.
 */
import { readCalendarLines } from './calendar-text.js';
import type { AttachmentKind } from './contracts.js';
import { readCsv } from './csv.js';
import { charsetOf, decodeText, htmlMetaCharset } from './decode.js';
import type { DetectedKind } from './detect.js';
import { readDocx } from './docx.js';
import type { Extracted } from './extracted.js';
import { htmlToMarkdownFallback } from './html.js';
import { imageInfo } from './image.js';
import type { Limits } from './limits.js';
import { count } from './markdown-table.js';
import { readOds } from './ods.js';
import { refuseOle, zipKind } from './office.js';
import { readPdf } from './pdf.js';
import { readPptx } from './pptx.js';
import { readXlsx } from './xlsx.js';
import { openZip } from './zip.js';

/** One extraction: the bytes, their detected kind, and what shapes the text. */
export interface ExtractJob {
  kind: DetectedKind | 'calendar-lines';
  bytes: Uint8Array;
  contentType: string;
  filename: string;
  limits: Limits;
}

/** What the worker answers: the kind read (a zip resolved to its Office format) and the text. */
export interface ExtractResult extends Extracted {
  kind: AttachmentKind;
  /** The text's tokens, when counted (the worker counts them before answering). */
  tokens?: number;
}

/** Cuts `text` at `maxCharacters`, saying so. */
function bounded(result: ExtractResult, limits: Limits): ExtractResult {
  if (result.text.length <= limits.maxCharacters) return result;
  const note = `The text is longer than ${count(limits.maxCharacters)} characters; the rest is not shown.`;
  return {
    ...result,
    text: result.text.slice(0, limits.maxCharacters),
    metadata: { ...result.metadata, omitted: [...(result.metadata.omitted ?? []), note] },
  };
}

/** Reads one attachment. Throws an AttachmentTextError when it cannot. */
export async function extract(job: ExtractJob): Promise<ExtractResult> {
  const { bytes, limits } = job;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (job.kind) {
    case 'pdf':
      return bounded({ kind: 'pdf', ...(await readPdf(bytes, limits)) }, limits);
    case 'docx':
    case 'xlsx':
    case 'pptx':
    case 'ods':
    case 'zip': {
      const archive = openZip(buffer);
      // The entries decide (a workbook named .docx is a workbook); the declared kind only when they do not tell.
      const kind = zipKind(archive) ?? (job.kind === 'zip' ? undefined : job.kind);
      switch (kind) {
        case 'docx':
          return bounded({ kind, ...readDocx(archive, limits) }, limits);
        case 'xlsx':
          return bounded({ kind, ...readXlsx(archive, limits) }, limits);
        case 'pptx':
          return bounded({ kind, ...readPptx(archive, limits) }, limits);
        case 'ods':
          return bounded({ kind, ...readOds(archive, limits) }, limits);
        default:
          return {
            kind: 'unknown',
            text: '',
            format: 'text',
            metadata: {
              textReadable: false,
              note: `A zip archive of ${count(archive.entries.size)} files: the files inside an archive are not read.`,
            },
          };
      }
    }
    case 'ole':
      return refuseOle(bytes);
    case 'csv': {
      const text = decodeText(bytes, charsetOf(job.contentType));
      const delimiter =
        job.filename.toLowerCase().endsWith('.tsv') || job.contentType.includes('tab-separated') ? '\t' : undefined;
      return bounded({ kind: 'csv', ...readCsv(text, job.filename, limits, delimiter) }, limits);
    }
    case 'html': {
      const html = decodeText(bytes, charsetOf(job.contentType) ?? htmlMetaCharset(bytes));
      return {
        kind: 'html',
        text: htmlToMarkdownFallback(html, limits.maxCharacters),
        format: 'markdown',
        metadata: {},
      };
    }
    case 'calendar-lines':
      return bounded({ kind: 'calendar', ...readCalendarLines(decodeText(bytes, charsetOf(job.contentType))) }, limits);
    case 'text':
    case 'calendar':
    case 'message': {
      // Calendars and messages are parsed by their areas before the worker is asked; here they are text.
      const text = decodeText(bytes, charsetOf(job.contentType)).replace(/\r\n?/g, '\n');
      return bounded({ kind: 'text', text, format: 'text', metadata: {} }, limits);
    }
    case 'image':
      return {
        kind: 'image',
        text: '',
        format: 'text',
        metadata: { textReadable: false, image: imageInfo(bytes) },
      };
    case 'unknown':
      return { kind: 'unknown', text: '', format: 'text', metadata: { textReadable: false } };
  }
}
