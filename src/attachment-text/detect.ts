/**
 * @module attachment-text/detect
 * What an attachment is: its bytes' signature first (a PDF named `.docx` is a PDF), then its declared type, then
 * its file name's extension, then a look at its first bytes for text. Zip containers are told apart by their
 * declared type or extension here, and by their entries in the worker (office.ts) when neither says. Reads at
 * most the first 4 KB.
 */
import type { AttachmentKind } from './contracts.js';

/** A zip whose kind is settled by its entries. */
export type DetectedKind = AttachmentKind | 'zip' | 'ole';

/** The kind, and the content type reported for it. */
export interface Detection {
  kind: DetectedKind;
  contentType: string;
}

const TYPES: Record<string, AttachmentKind> = {
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-word.document.macroenabled.12': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.ms-excel.sheet.macroenabled.12': 'xlsx',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.ms-powerpoint.presentation.macroenabled.12': 'pptx',
  'text/csv': 'csv',
  'text/comma-separated-values': 'csv',
  'application/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/calendar': 'calendar',
  'application/ics': 'calendar',
  'text/x-vcalendar': 'calendar',
  'message/rfc822': 'message',
  'message/global': 'message',
  'text/plain': 'text',
  'text/markdown': 'text',
  'text/x-markdown': 'text',
  'application/json': 'text',
  'application/xml': 'text',
  'text/xml': 'text',
  'application/x-yaml': 'text',
  'text/yaml': 'text',
};

const EXTENSIONS: Record<string, AttachmentKind> = {
  pdf: 'pdf',
  docx: 'docx',
  docm: 'docx',
  xlsx: 'xlsx',
  xlsm: 'xlsx',
  ods: 'ods',
  pptx: 'pptx',
  pptm: 'pptx',
  csv: 'csv',
  tsv: 'csv',
  htm: 'html',
  html: 'html',
  xhtml: 'html',
  ics: 'calendar',
  ical: 'calendar',
  ifb: 'calendar',
  eml: 'message',
  txt: 'text',
  text: 'text',
  md: 'text',
  markdown: 'text',
  log: 'text',
  json: 'text',
  xml: 'text',
  yaml: 'text',
  yml: 'text',
};

/** The canonical content type of each kind, when the declared one is generic or wrong. */
export const CANONICAL_TYPES: Record<AttachmentKind, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  csv: 'text/csv',
  html: 'text/html',
  text: 'text/plain',
  calendar: 'text/calendar',
  message: 'message/rfc822',
  image: 'image/*',
  unknown: 'application/octet-stream',
};

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** A file name's extension, lower case, without the dot. */
export function extensionOf(filename: string | undefined): string {
  if (!filename) return '';
  const dot = filename.lastIndexOf('.');
  return dot < 0 ? '' : filename.slice(dot + 1, dot + 12).toLowerCase();
}

const startsWith = (bytes: Uint8Array, signature: readonly number[], at = 0) =>
  bytes.length >= at + signature.length && signature.every((byte, index) => bytes[at + index] === byte);

/** The image format of a signature, if the bytes are an image. */
export function imageFormat(bytes: Uint8Array): string | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return 'gif';
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return 'webp';
  if (startsWith(bytes, [0x42, 0x4d])) return 'bmp';
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  if (startsWith(bytes, [0x66, 0x74, 0x79, 0x70], 4)) {
    const brand = Buffer.from(bytes.subarray(8, 12)).toString('latin1');
    if (['heic', 'heix', 'mif1', 'msf1', 'avif'].includes(brand)) return brand === 'avif' ? 'avif' : 'heic';
  }
  return undefined;
}

/** Whether the first 4 KB look like text: no NUL byte, and few other control bytes. */
function looksLikeText(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, 4096);
  if (head.length === 0) return true;
  let control = 0;
  for (const byte of head) {
    if (byte === 0) return false;
    if (byte < 9 || (byte > 13 && byte < 32)) control++;
  }
  return control / head.length < 0.02;
}

/** What `bytes` are, from their signature, declared type and name. */
export function detect(bytes: Uint8Array, contentType?: string, filename?: string): Detection {
  const declared = mediaType(contentType);
  const extension = extensionOf(filename);
  const byName = TYPES[declared] ?? EXTENSIONS[extension];
  const result = (kind: DetectedKind, type?: string): Detection => ({
    kind,
    contentType:
      type ?? (kind === 'zip' || kind === 'ole' ? declared || 'application/octet-stream' : CANONICAL_TYPES[kind]),
  });

  // %PDF- may follow some junk (the format allows up to 1 KB).
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024));
  if (head.indexOf('%PDF-') >= 0) return result('pdf');
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06])) {
    if (byName === 'docx' || byName === 'xlsx' || byName === 'pptx' || byName === 'ods') return result(byName);
    return result('zip');
  }
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return result('ole');
  const image = imageFormat(bytes);
  if (image) return result('image', `image/${image}`);
  if (declared.startsWith('image/')) return result('image', declared);

  if (byName && byName !== 'pdf' && byName !== 'docx' && byName !== 'xlsx' && byName !== 'pptx' && byName !== 'ods') {
    if (looksLikeText(bytes) || byName === 'message') return result(byName);
    return result('unknown', declared || undefined);
  }
  if (!looksLikeText(bytes)) return result('unknown', declared || undefined);
  // Text without a telling type: a calendar, HTML or a message by its first line, else plain text.
  const start = head.toString('latin1').trimStart().slice(0, 200).toLowerCase();
  if (start.startsWith('begin:vcalendar')) return result('calendar');
  if (start.startsWith('<!doctype html') || start.startsWith('<html')) return result('html');
  return result('text');
}
