/**
 * @module attachment-text/pdf
 * A PDF's text, page by page, with PDF.js (Mozilla, through unpdf's serverless build: no canvas, no worker of its
 * own, no eval: `isEvalSupported: false`, no font loading). Text items are joined in content order: a line break
 * where PDF.js marks one or the baseline moves, a space where a gap separates two items on one line. A page marker
 * (`--- Page 2 of 5 ---`) precedes each page. A PDF that needs a password answers `encrypted`; one PDF.js cannot
 * open (cut short, not a PDF) `unreadable`. Pages beyond `maxPages` are counted, not read.
 */
import { AttachmentTextError } from './errors.js';
import type { Extracted } from './extracted.js';
import type { Limits } from './limits.js';
import { count } from './markdown-table.js';

interface TextItem {
  str: string;
  hasEOL?: boolean;
  transform?: number[];
  width?: number;
  height?: number;
}

/** A PDF date (`D:20250417093000+02'00'`) as ISO 8601, when it is one. */
export function pdfDate(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+-])?(\d{2})?'?(\d{2})?/.exec(
    value.slice(0, 40),
  );
  if (!match) return undefined;
  const [, year, month = '01', day = '01', hour = '00', minute = '00', second = '00', sign, offsetHour, offsetMinute] =
    match;
  const zone = !sign || sign === 'Z' || sign === 'z' ? 'Z' : `${sign}${offsetHour ?? '00'}:${offsetMinute ?? '00'}`;
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}${zone}`);
  return Number.isFinite(date.getTime()) ? date.toISOString() : undefined;
}

/** The text of one page's items. */
export function joinItems(items: readonly TextItem[]): string {
  let out = '';
  let lastY: number | undefined;
  let lastEnd: number | undefined;
  let lastHeight = 0;
  for (const item of items) {
    const x = item.transform?.[4];
    const y = item.transform?.[5];
    if (
      y !== undefined &&
      lastY !== undefined &&
      Math.abs(y - lastY) > Math.max(1, lastHeight * 0.5) &&
      !out.endsWith('\n')
    )
      out += '\n';
    else if (
      x !== undefined &&
      lastEnd !== undefined &&
      x - lastEnd > Math.max(1, (item.height ?? lastHeight) * 0.15) &&
      item.str &&
      !out.endsWith(' ') &&
      !out.endsWith('\n') &&
      !item.str.startsWith(' ')
    )
      out += ' ';
    out += item.str;
    if (item.hasEOL) out += '\n';
    if (item.str) {
      lastY = y;
      lastEnd = x !== undefined ? x + (item.width ?? 0) : undefined;
      lastHeight = item.height ?? lastHeight;
    }
  }
  return out
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

type PdfModule = typeof import('unpdf');
let unpdf: Promise<PdfModule> | undefined;

/** Reads a PDF's text. */
export async function readPdf(bytes: Uint8Array, limits: Limits): Promise<Extracted> {
  const { getDocumentProxy } = await (unpdf ??= import('unpdf'));
  let document: Awaited<ReturnType<PdfModule['getDocumentProxy']>>;
  try {
    // PDF.js takes the buffer over (it may detach it): a copy of its own.
    document = await getDocumentProxy(new Uint8Array(bytes), {
      isEvalSupported: false,
      useSystemFonts: false,
      disableFontFace: true,
      verbosity: 0,
    });
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === 'PasswordException')
      throw new AttachmentTextError('encrypted', 'The PDF is encrypted: it needs a password to be read.');
    throw new AttachmentTextError('unreadable', `The PDF cannot be read (${describe(error)}).`);
  }
  try {
    const pages = document.numPages;
    const read = Math.min(pages, limits.maxPages);
    const parts: string[] = [];
    const omitted: string[] = [];
    let size = 0;
    let pagesRead = 0;
    for (let number = 1; number <= read; number++) {
      if (size > limits.maxCharacters) {
        omitted.push(`Pages ${number}–${pages} not shown (over ${count(limits.maxCharacters)} characters).`);
        break;
      }
      const page = await document.getPage(number);
      const content = await page.getTextContent();
      const text = joinItems(content.items as TextItem[]);
      page.cleanup();
      const part = `--- Page ${number} of ${pages} ---\n\n${text}`;
      size += part.length + 2;
      parts.push(part);
      pagesRead = number;
    }
    if (pages > read) omitted.push(`Pages ${read + 1}–${pages} not read (limit ${count(limits.maxPages)} pages).`);
    const info = ((await document.getMetadata().catch(() => undefined))?.info ?? {}) as Record<string, unknown>;
    const text = parts.join('\n\n');
    const title = typeof info.Title === 'string' && info.Title.trim() ? info.Title.trim().slice(0, 500) : undefined;
    const author = typeof info.Author === 'string' && info.Author.trim() ? info.Author.trim().slice(0, 500) : undefined;
    const created = pdfDate(info.CreationDate);
    const scanned = pagesRead > 0 && text.replace(/--- Page \d+ of \d+ ---/g, '').trim() === '';
    return {
      text,
      format: 'text',
      metadata: {
        pages,
        pagesRead,
        ...(title ? { title } : {}),
        ...(author ? { author } : {}),
        ...(created ? { created } : {}),
        ...(scanned ? { note: 'The PDF has no text layer (a scan?): no text could be read from its pages.' } : {}),
        ...(omitted.length ? { omitted } : {}),
      },
    };
  } catch (error) {
    if (error instanceof AttachmentTextError) throw error;
    throw new AttachmentTextError('unreadable', `The PDF cannot be read (${describe(error)}).`);
  } finally {
    await document.destroy().catch(() => undefined);
  }
}

function describe(error: unknown): string {
  return String((error as { message?: unknown })?.message ?? error).slice(0, 200);
}
