/**
 * @module mime/simple-mime
 * A fast path for the commonest inbound messages: a single text/plain or text/html part, a multipart/alternative of
 * such parts (what every mail client sends), or a multipart/mixed of such parts and alternatives (a mailing list's
 * footer), without attachments. `parseSimpleMessage(raw)` returns the fields of mailparser's `simpleParser` result
 * that `normalize()` (normalize.ts) reads, with the values mailparser 3.9.30 (options of parse-worker.ts) gives for
 * the same bytes, or `undefined` when the message is not one it is sure to read the same way, and the caller runs
 * mailparser.
 *
 * It mirrors, step by step, what mailparser does for such a message (file names under node_modules):
 * - header sections: `@zone-eu/mailsplit/lib/message-splitter.js` (HEAD state ends at the first line that is
 *   exactly LF or CRLF) and `@zone-eu/mailsplit/lib/headers.js` `_parseHeaders` (unfolding, keys, mbox / POST
 *   preamble lines);
 * - part types: `@zone-eu/mailsplit/lib/mime-node.js` `parseHeaders` (FIRST Content-Type, Content-Transfer-Encoding,
 *   Content-Disposition, boundary, format=flowed) and `mailparser/lib/mail-parser.js` `createNode` (what becomes an
 *   attachment);
 * - multipart bodies: the delimiter lines of message-splitter.js (`checkBoundary`, `compareBoundary`: the one chunk
 *   simpleParser writes; the line break before a delimiter belongs to it, `trimBodyLineEnd`), taken only in the
 *   forms clients write, see splitMultipart;
 * - header values: `mail-parser.js` `processHeaders` (LAST value of single keys, lists of the others) and
 *   `decodeAddresses`, with the same libmime (the same copy mailparser loads: a direct dependency pinned to the
 *   version mailparser pins) and the same addressparser and punycode (loaded from mailparser's own location);
 * - bodies: libbase64 / libqp stream decoders, FlowedDecoder (format=flowed), the charset step of `processChunk`,
 *   `\r?\n` → `\n`, and `getTextContent` (which parts join `text` and `html`, and the '' that textToHtml /
 *   htmlToText give with `skipTextToHtml` / `skipHtmlToText` on).
 *
 * Address objects carry `value` only (`html` / `text` are mailparser's display forms, which normalize() never
 * reads; so is `textAsHtml`, '' or '<br/>\n' joins with skipTextToHtml). The cost is linear in the message: header
 * sections are bounded (64 KB, 500 lines each), multiparts to 16 parts and one level of nesting, each delimiter
 * search is `indexOf` from where the last one ended, and the one superlinear step of mailparser on a body (libqp's
 * `/[\t ]+$/gm`, quadratic on a long run of blanks) is replaced by a linear equivalent. It never throws: anything
 * unexpected gives `undefined`.
 */
import { isAscii } from 'node:buffer';

import { libcharset, libmime, type AddressEntry } from './simple-mime-libs.js';
import {
  firstValue,
  hasOwn,
  headerLines,
  processHeaders,
  stripComments,
  type HeaderLine,
} from './simple-mime-headers.js';
import { base64Decode, qpDecode, qpDecodeAscii } from './transfer-decoding.js';

/** Largest message taken on the fast path (the inbound path sends nothing larger to the writer thread). */
export const MAX_MESSAGE = 1024 * 1024;
/** The header section must end within this many bytes... */
const MAX_HEADER_BYTES = 64 * 1024;
/** ...and this many lines. */
const MAX_HEADER_LINES = 500;

/** Transfer encodings decoded here (anything else: mailparser). */
const ENCODINGS = new Set(['', '7bit', '8bit', 'binary', 'quoted-printable', 'base64']);
/** Charsets mailparser leaves undecoded (the body bytes are read as UTF-8), keyed as mailparser keys them. */
const UTF8_CHARSETS = new Set(['ascii', 'usascii', 'utf8']);

/** A mailparser address header value. */
export interface AddressObject {
  value: AddressEntry[];
}

/**
 * The subset of a `simpleParser` result that normalize() reads. `undefined` where mailparser leaves the key out.
 * (A type, not an interface, so that it is a `Record<string, unknown>` too.)
 */
export type SimpleMail = {
  subject: string | undefined;
  messageId: string | undefined;
  inReplyTo: string | undefined;
  references: string | string[] | undefined;
  date: Date | undefined;
  from: AddressObject | AddressObject[] | undefined;
  to: AddressObject | AddressObject[] | undefined;
  cc: AddressObject | AddressObject[] | undefined;
  bcc: AddressObject | AddressObject[] | undefined;
  replyTo: AddressObject | AddressObject[] | undefined;
  text: string | undefined;
  html: string | undefined;
  attachments: never[];
};

/**
 * Parses a text message (one text part, or text parts in a multipart/alternative or multipart/mixed) the way
 * mailparser would, or returns `undefined` when the message is not simple enough to be sure of that (the caller then
 * runs mailparser).
 */
export function parseSimpleMessage(raw: Buffer): SimpleMail | undefined {
  try {
    return parse(raw);
  } catch {
    return undefined;
  }
}

function parse(raw: Buffer): SimpleMail | undefined {
  if (!Buffer.isBuffer(raw) || raw.length === 0 || raw.length > MAX_MESSAGE) return undefined;

  // The header section: up to and including the first line that is exactly LF or CRLF (message-splitter.js).
  let bodyStart = headerEnd(raw, 0);
  if (bodyStart === undefined) return undefined;
  if (bodyStart < 0) {
    // No empty line: the splitter reads the whole message as headers (at its end) and the body is empty.
    if (raw.length > MAX_HEADER_BYTES) return undefined;
    bodyStart = raw.length;
  }
  const lines = headerLines(raw.toString('latin1', 0, bodyStart));
  if (!lines) return undefined;
  const root = describePart(lines, ROOT);
  if (!root) return undefined;
  let tree: MimeTree | undefined;
  if ('boundary' in root) {
    tree = readMultipart(raw, bodyStart, root);
  } else {
    const content = decodeText(raw.subarray(bodyStart), root);
    tree = content === undefined ? undefined : { type: root.contentType, content };
  }
  if (!tree) return undefined;
  const { text, html } = textContent(tree);

  const headers = processHeaders(lines);
  return {
    subject: headers.get('subject') as string | undefined,
    messageId: headers.get('message-id') as string | undefined,
    inReplyTo: headers.get('in-reply-to') as string | undefined,
    references: headers.get('references') as string | string[] | undefined,
    date: headers.get('date') as Date | undefined,
    from: headers.get('from') as AddressObject | undefined,
    to: headers.get('to') as AddressObject | AddressObject[] | undefined,
    cc: headers.get('cc') as AddressObject | AddressObject[] | undefined,
    bcc: headers.get('bcc') as AddressObject | AddressObject[] | undefined,
    replyTo: headers.get('reply-to') as AddressObject | undefined,
    text,
    html,
    attachments: [],
  };
}

/**
 * The end of the header section that starts at `start` (just past its empty line), -1 when the bytes end first
 * (within the bounds), `undefined` when it is longer than {@link MAX_HEADER_BYTES} or {@link MAX_HEADER_LINES}.
 */
function headerEnd(raw: Buffer, start: number): number | undefined {
  const limit = Math.min(raw.length, start + MAX_HEADER_BYTES);
  let lineCount = 0;
  for (let lineStart = start; lineStart < limit;) {
    const lf = raw.indexOf(0x0a, lineStart);
    if (lf < 0 || lf >= limit) break;
    if (lf === lineStart || (lf === lineStart + 1 && raw[lineStart] === 0x0d)) return lf + 1;
    if (++lineCount > MAX_HEADER_LINES) return undefined;
    lineStart = lf + 1;
  }
  return lineCount >= MAX_HEADER_LINES ? undefined : -1;
}

/** A text part as mime-node.js and createNode of mail-parser.js see it. */
interface TextPart {
  contentType: 'text/plain' | 'text/html';
  /** Content-Transfer-Encoding, lower case, one of {@link ENCODINGS}. */
  encoding: string;
  charset: string;
  /** The charset is one mailparser leaves undecoded (else it is windows-1252). */
  utf8: boolean;
  /** format=flowed (mailparser's FlowedDecoder), and its delsp=yes. */
  flowed: boolean;
  delSp: boolean;
}

/** A multipart part: its subtype and boundary. */
interface Multipart {
  subtype: 'alternative' | 'mixed';
  boundary: Buffer;
}

/** Where a part is: at the root, or in a multipart of this subtype. */
type Context = 'root' | Multipart['subtype'];
const ROOT: Context = 'root';
/** The multiparts taken in each context: a mixed or alternative root, an alternative in a mixed, nothing deeper. */
const MULTIPARTS: Record<Context, readonly string[]> = {
  root: ['multipart/alternative', 'multipart/mixed'],
  mixed: ['multipart/alternative'],
  alternative: [],
};

/** Boundaries taken here: the RFC 2046 characters but the space, 1 to 70 of them. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=?]{1,70}$/;

/**
 * What a part is, from its header lines (mime-node.js parseHeaders: FIRST Content-Type, Content-Transfer-Encoding,
 * Content-Disposition; then createNode of mail-parser.js: what becomes an attachment), or `undefined` when it is
 * anything but an inline text/plain or text/html part, or a multipart of {@link MULTIPARTS} for its context.
 */
function describePart(lines: HeaderLine[], context: Context): TextPart | Multipart | undefined {
  let contentTypeLine: HeaderLine | undefined;
  let encodingLine: HeaderLine | undefined;
  let dispositionLine: HeaderLine | undefined;
  for (const line of lines) {
    if (line.key === 'content-type') contentTypeLine ??= line;
    else if (line.key === 'content-transfer-encoding') encodingLine ??= line;
    else if (line.key === 'content-disposition') dispositionLine ??= line;
  }
  const parsedDisposition = libmime.parseHeaderValue(firstValue(dispositionLine));
  let contentHeader = 'text/plain';
  if (contentTypeLine) {
    contentHeader = firstValue(contentTypeLine);
  } else if (parsedDisposition.params.filename || /^attachment$/i.test(parsedDisposition.value || '')) {
    // the splitter guesses a type from the file name, or takes application/octet-stream
    return undefined;
  }
  const parsedType = libmime.parseHeaderValue(contentHeader);
  const params = parsedType.params;
  // mailparser defaults a root part with an empty type to text/plain; a child part without one is an attachment
  const contentType = (parsedType.value || '').toLowerCase().trim() || (context === ROOT ? 'text/plain' : '');
  const encoding = stripComments(firstValue(encodingLine)).toLowerCase().trim();
  if (!ENCODINGS.has(encoding)) return undefined;

  if (MULTIPARTS[context].includes(contentType)) {
    // A multipart part is no attachment whatever its disposition, and its body is split, never decoded.
    const boundary = params.boundary;
    if (typeof boundary !== 'string' || !BOUNDARY.test(boundary)) return undefined;
    return { subtype: contentType === 'multipart/mixed' ? 'mixed' : 'alternative', boundary: Buffer.from(boundary) };
  }
  if (contentType !== 'text/plain' && contentType !== 'text/html') return undefined;
  // a boundary parameter makes the splitter look for delimiter lines even in a text part
  if (hasOwn(params, 'boundary')) return undefined;
  const flowed = Boolean(params.format && params.format.toLowerCase().trim() === 'flowed');
  const delSp = flowed && Boolean(params.delsp && params.delsp.toLowerCase().trim() === 'yes');

  let disposition = (parsedDisposition.value || '').toLowerCase().trim();
  if (disposition) {
    try {
      disposition = libmime.decodeWords(disposition);
    } catch {
      // kept as is, as mime-node.js does
    }
  }
  // any disposition but inline makes the part an attachment
  if (disposition && disposition !== 'inline') return undefined;

  const charset = params.charset || 'utf-8';
  let utf8 = true;
  if (!UTF8_CHARSETS.has(charset.toLowerCase().replace(/[^a-z0-9]+/g, ''))) {
    // iso-8859-1, latin1, cp1252... all map to windows-1252 in libmime, a single-byte table: decoding the body
    // at once is what iconv-lite's decode stream gives chunk by chunk. Any other charset: mailparser.
    if (libmime.normalizeCharset(charset) !== 'windows-1252') return undefined;
    utf8 = false;
  }
  return { contentType, encoding, charset, utf8, flowed, delSp };
}

/**
 * A part's `textContent` in mail-parser.js: transfer decoding (libbase64 / libqp), format=flowed (FlowedDecoder:
 * libmime.decodeFlowed over the bytes as a binary string), the charset, then `\r?\n` → `\n`. `undefined` when
 * the body is not one this file decodes the same way.
 */
function decodeText(body: Buffer, part: TextPart): string | undefined {
  let bytes: Buffer;
  if (part.encoding === 'base64') {
    const decoded = base64Decode(body);
    if (!decoded) return undefined;
    bytes = decoded;
  } else if (part.encoding === 'quoted-printable') {
    bytes = (isAscii(body) && qpDecodeAscii(body)) || qpDecode(body.toString());
  } else {
    bytes = body;
  }
  if (part.flowed && bytes.length)
    bytes = Buffer.from(libmime.decodeFlowed(bytes.toString('latin1'), part.delSp), 'latin1');
  const decoded = part.utf8 ? bytes.toString() : libcharset.decode(bytes, part.charset);
  // mailparser's `.replace(/\r?\n/g, '\n')`, the same string without a regular expression match per line
  return decoded.includes('\r') ? decoded.replaceAll('\r\n', '\n') : decoded;
}

/**
 * A child part of a multipart: its header section (`start`..`headerEnd`), the body bytes the splitter hands on, and
 * where its delimiter line starts (`end`: a multipart child's own preamble, parts and epilogue lie before it).
 */
interface RawPart {
  start: number;
  headerEnd: number;
  body: Buffer;
  end: number;
}

/** A message as the part tree mail-parser.js builds: text leaves with their `textContent`, multiparts. */
type MimeTree =
  { type: TextPart['contentType']; content: string } | { subtype: Multipart['subtype']; children: MimeTree[] };

/**
 * The children of the multipart whose body starts at `bodyStart` in `raw` (a view that ends where the multipart
 * does), read as a tree, or `undefined`.
 */
function readMultipart(raw: Buffer, bodyStart: number, multipart: Multipart): MimeTree | undefined {
  const parts = splitMultipart(raw, bodyStart, multipart.boundary);
  if (!parts) return undefined;
  const children: MimeTree[] = [];
  for (const part of parts) {
    const lines = headerLines(raw.toString('latin1', part.start, part.headerEnd));
    if (!lines) return undefined;
    const described = describePart(lines, multipart.subtype);
    if (!described) return undefined;
    if ('boundary' in described) {
      // Inside a child of the inner multipart the splitter looks for the inner boundary only, between its parts for
      // both: with neither delimiter a prefix of the other, and the inner one closed before the outer delimiter that
      // ends this part (else splitMultipart refuses the part), both read the same lines as delimiters.
      const inner = described.boundary;
      const outer = multipart.boundary;
      if (inner.subarray(0, outer.length).equals(outer) || outer.subarray(0, inner.length).equals(inner))
        return undefined;
      const child = readMultipart(raw.subarray(0, part.end), part.headerEnd, described);
      if (!child) return undefined;
      children.push(child);
    } else {
      const content = decodeText(part.body, described);
      if (content === undefined) return undefined;
      children.push({ type: described.contentType, content });
    }
  }
  return { subtype: multipart.subtype, children };
}

/**
 * getTextContent of mail-parser.js over the tree: a text/plain leaf joins `text` ('\n'), a text/html leaf `html`
 * ('<br/>\n'), empty leaves nothing; outside a multipart/alternative a text/plain leaf also adds textToHtml's '' to
 * `html` when the message has an HTML part, and a text/html leaf adds htmlToText's '' (skipHtmlToText) to `text`
 * when it has a plain one, or when it is the root. `hasText` / `hasHtml`: any inline part of the type, empty or not.
 */
function textContent(tree: MimeTree): { text: string | undefined; html: string | undefined } {
  let hasText = false;
  let hasHtml = false;
  const flag = (node: MimeTree) => {
    if ('children' in node) node.children.forEach(flag);
    else if (node.type === 'text/plain') hasText = true;
    else hasHtml = true;
  };
  flag(tree);
  const texts: string[] = [];
  const htmls: string[] = [];
  const visit = (node: MimeTree, alternative: boolean, root: boolean) => {
    if ('children' in node) {
      for (const child of node.children) visit(child, alternative || node.subtype === 'alternative', false);
    } else if (node.content && node.type === 'text/plain') {
      texts.push(node.content);
      if (!alternative && hasHtml) htmls.push('');
    } else if (node.content) {
      if ((!alternative && hasText) || (root && !hasText)) texts.push('');
      htmls.push(node.content);
    }
  };
  visit(tree, false, true);
  return { text: texts.length ? texts.join('\n') : undefined, html: htmls.length ? htmls.join('<br/>\n') : undefined };
}

/** Parts of one multipart taken on the fast path. */
const MAX_PARTS = 16;
const DASHES = Buffer.from('--');

/**
 * The children of a multipart whose body starts at `bodyStart`, as message-splitter.js splits them (one chunk, as
 * simpleParser writes a Buffer), or `undefined` for anything it is not sure to split the same way.
 *
 * A delimiter line is `--boundary` at the start of a line, then CRLF or LF (next part) or `--` then CRLF, LF or the
 * end of the message (the close). The splitter accepts more (anything after `--boundary` CR, a lone CR before
 * the dashes, `--boundary-` at the end...): such lines, and any `--boundary` at a line start that is not a
 * delimiter, send the message to mailparser. So do: no delimiter, a close before the first part, a part whose
 * header section does not end in an empty line before the next delimiter, no close (the splitter then runs the last
 * part to the end), and the boundary anywhere after the close (the splitter ignores the epilogue, delimiters
 * included). The preamble (before the first delimiter) and the rest of the epilogue are ignored, as there.
 *
 * A part's body: the bytes between its empty line and the next delimiter line, less the line break that ends the
 * last of them (trimBodyLineEnd: an LF, then a CR before it), which belongs to the delimiter. Except that a body
 * that is a single line break followed by a next-part delimiter keeps it: onLine's flush branch re-slices the group
 * only when something is left after the trim, and otherwise pushes the line as it came.
 */
function splitMultipart(raw: Buffer, bodyStart: number, boundary: Buffer): RawPart[] | undefined {
  const dash = Buffer.concat([DASHES, boundary]);
  let delimiter = nextDelimiter(raw, bodyStart, dash);
  if (!delimiter || delimiter.closing) return undefined;
  const parts: RawPart[] = [];
  while (!delimiter.closing) {
    if (parts.length >= MAX_PARTS) return undefined;
    const start = delimiter.end;
    const end = headerEnd(raw, start);
    if (end === undefined || end < 0) return undefined;
    // the splitter tests header lines for delimiters too: have none there (nor anything like one)
    if (raw.subarray(start, end).includes(dash)) return undefined;
    const next = nextDelimiter(raw, end, dash);
    if (!next) return undefined;
    let bodyEnd = next.start;
    if (bodyEnd > end && raw[bodyEnd - 1] === 0x0a) {
      bodyEnd--;
      if (bodyEnd > end && raw[bodyEnd - 1] === 0x0d) bodyEnd--;
      if (bodyEnd === end && !next.closing) bodyEnd = next.start;
    }
    parts.push({ start, headerEnd: end, body: raw.subarray(end, bodyEnd), end: next.start });
    delimiter = next;
  }
  if (raw.indexOf(dash, delimiter.end) >= 0) return undefined;
  return parts;
}

/**
 * The first delimiter line at or after `from` (a line start): its start, its end (past its line break) and whether
 * it closes the multipart; `undefined` when there is none, or when a line start holds `--boundary` in any other
 * form (or a CR precedes it).
 */
function nextDelimiter(
  raw: Buffer,
  from: number,
  dash: Buffer,
): { start: number; end: number; closing: boolean } | undefined {
  for (let at = raw.indexOf(dash, from); at >= 0; at = raw.indexOf(dash, at + 1)) {
    const before = raw[at - 1];
    if (before === 0x0d) return undefined;
    // not at a line start: content (`from` is always just past an LF)
    if (before !== 0x0a) continue;
    const after = at + dash.length;
    if (raw[after] === 0x0a) return { start: at, end: after + 1, closing: false };
    if (raw[after] === 0x0d && raw[after + 1] === 0x0a) return { start: at, end: after + 2, closing: false };
    if (raw[after] === 0x2d && raw[after + 1] === 0x2d) {
      const tail = after + 2;
      if (tail === raw.length) return { start: at, end: tail, closing: true };
      if (raw[tail] === 0x0a) return { start: at, end: tail + 1, closing: true };
      if (raw[tail] === 0x0d && raw[tail + 1] === 0x0a) return { start: at, end: tail + 2, closing: true };
    }
    return undefined;
  }
  return undefined;
}
