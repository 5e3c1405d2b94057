/**
 * @module mime/report-mime
 * A small, bounded MIME reader for delivery reports (pure): headers (unfolded, RFC 2047 words left as they are),
 * `Content-Type` parameters, multipart bodies split on their boundary, and transfer encodings (base64,
 * quoted-printable) undone. Reports are small and their interesting parts are plain text, so this reads only the
 * first {@link MAX_REPORT_BYTES} of a message, at most {@link MAX_PARTS} parts, {@link MAX_DEPTH} levels deep: a
 * hostile report costs bounded time and memory, and anything malformed gives fewer parts, never an exception.
 */
import { unfoldHeaderLines } from './header-lines.js';

/** Bytes of a report that are read (the rest, usually the returned message's body, is ignored). */
export const MAX_REPORT_BYTES = 512 * 1024;
/** Parts read in all. */
export const MAX_PARTS = 64;
/** Nesting of multiparts and attached messages. */
export const MAX_DEPTH = 6;
/** Header lines read per entity. */
const MAX_HEADERS = 500;

/** One header, unfolded. */
export interface MimeHeader {
  /** Lower-cased name. */
  name: string;
  value: string;
}

/** A leaf part (or the whole message when it is not multipart). */
export interface MimePart {
  /** Lower-cased media type, e.g. `message/delivery-status` (`text/plain` when absent). */
  type: string;
  /** Lower-cased parameters of Content-Type. */
  params: Record<string, string>;
  headers: MimeHeader[];
  /** The decoded body as text (UTF-8, or Latin-1 when it is not valid UTF-8). */
  text: string;
}

/** A message read as headers and a flat list of its leaf parts, in order. */
export interface MimeReport {
  headers: MimeHeader[];
  /** Lower-cased media type of the top entity. */
  type: string;
  params: Record<string, string>;
  parts: MimePart[];
}

/** Splits an entity into its header lines (unfolded) and its body. */
export function splitEntity(text: string): { headers: MimeHeader[]; body: string } {
  const match = /\r?\n\r?\n/.exec(text);
  const head = match ? text.slice(0, match.index) : text;
  const body = match ? text.slice(match.index + match[0].length) : '';
  const headers: MimeHeader[] = unfoldHeaderLines(head, MAX_HEADERS).map((header) => ({
    name: header.name.toLowerCase(),
    value: header.value,
  }));
  return { headers, body };
}

/** The first value of a header, or undefined. */
export function headerOf(headers: readonly MimeHeader[], name: string): string | undefined {
  return headers.find((header) => header.name === name)?.value;
}

/** Every value of a header. */
export function headersOf(headers: readonly MimeHeader[], name: string): string[] {
  return headers.filter((header) => header.name === name).map((header) => header.value);
}

/** `type/subtype; a=b; c="d"` → lower-cased type and parameters. */
export function parseContentType(value: string | undefined): { type: string; params: Record<string, string> } {
  if (!value) return { type: 'text/plain', params: {} };
  const [typePart = '', ...rest] = value.split(';');
  const params: Record<string, string> = {};
  const pattern = /([a-zA-Z0-9_*.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]+)/g;
  const tail = rest.join(';');
  let found: RegExpExecArray | null;
  while ((found = pattern.exec(tail)) !== null) {
    const raw = found[2]!;
    params[found[1]!.toLowerCase()] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
  }
  const type = typePart.trim().toLowerCase();
  return { type: /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type) ? type : 'text/plain', params };
}

/** Bytes (as a Latin-1 string) to text: UTF-8 when valid, else Latin-1. */
function bytesToText(binary: string): string {
  const bytes = Buffer.from(binary, 'latin1');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return binary;
  }
}

/** Undoes a transfer encoding; the body comes in and goes out as a Latin-1 string of bytes. */
function decodeTransfer(body: string, encoding: string | undefined): string {
  const kind = (encoding ?? '').trim().toLowerCase();
  if (kind === 'base64') return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64').toString('latin1');
  if (kind === 'quoted-printable') {
    return body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  return body;
}

/** Reads a raw report (bounded: see the module notes). Never throws. */
export function readReport(raw: Buffer): MimeReport {
  const text = raw.subarray(0, MAX_REPORT_BYTES).toString('latin1');
  const { headers, body } = splitEntity(text);
  const { type, params } = parseContentType(headerOf(headers, 'content-type'));
  const parts: MimePart[] = [];
  walk(headers, body, 0, parts);
  return { headers, type, params, parts };
}

function walk(headers: MimeHeader[], body: string, depth: number, parts: MimePart[]): void {
  if (parts.length >= MAX_PARTS) return;
  const { type, params } = parseContentType(headerOf(headers, 'content-type'));
  if (type.startsWith('multipart/') && params.boundary && depth < MAX_DEPTH) {
    for (const child of splitMultipart(body, params.boundary)) {
      if (parts.length >= MAX_PARTS) return;
      const entity = splitEntity(child);
      walk(entity.headers, entity.body, depth + 1, parts);
    }
    return;
  }
  const decoded = bytesToText(decodeTransfer(body, headerOf(headers, 'content-transfer-encoding')));
  parts.push({ type, params, headers, text: decoded });
}

/** The bodies between `--boundary` lines (the preamble and epilogue dropped). */
export function splitMultipart(body: string, boundary: string): string[] {
  const delimiter = `--${boundary}`;
  const lines = body.split(/\r?\n/);
  const out: string[] = [];
  let current: string[] | undefined;
  for (const line of lines) {
    const trimmed = line.trimEnd();
    if (trimmed === delimiter || trimmed === `${delimiter}--`) {
      if (current) out.push(current.join('\r\n'));
      if (trimmed === `${delimiter}--` || out.length >= MAX_PARTS) return out;
      current = [];
      continue;
    }
    current?.push(line);
  }
  // A multipart cut short (no closing delimiter, or past the bytes read) keeps what it had.
  if (current && current.length > 0) out.push(current.join('\r\n'));
  return out;
}

/**
 * The header fields of a `message/delivery-status` or `message/feedback-report` body: groups of `Name: value`
 * lines separated by blank lines, each group's fields in order (names lower-cased, folded lines unfolded).
 */
export function fieldGroups(text: string): MimeHeader[][] {
  const groups: MimeHeader[][] = [];
  // Some MTAs (and some fixtures of people) indent the fields, or put a blank line with spaces between groups.
  for (const block of text.split(/\r?\n[ \t]*\r?\n/)) {
    const { headers } = splitEntity(`${block.replace(/^\s+/, '')}\r\n\r\n`);
    if (headers.length > 0) groups.push(headers);
    if (groups.length >= MAX_PARTS * 4) break;
  }
  return groups;
}
