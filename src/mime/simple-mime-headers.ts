/**
 * @module mail/simple-mime-headers
 * The header section as the fast-path parser (./simple-mime.ts) reads it: its lines, and the values mailparser's
 * `processHeaders` would give (addresses, ids, subject, date), each step linear.
 */
import { addressparser, libmime, punycode, type AddressEntry } from './simple-mime-libs.js';

/** Keys of `processHeaders` that keep only their last value (the subset read here). */
const SINGLE_KEYS = new Set(['message-id', 'from', 'in-reply-to', 'reply-to', 'subject', 'date']);
/** Header keys the result carries. */
const WANTED_KEYS = new Set([
  'subject',
  'references',
  'date',
  'from',
  'to',
  'cc',
  'bcc',
  'message-id',
  'in-reply-to',
  'reply-to',
]);

/** One header line: its lower-cased key and the whole (unfolded) line. */
export interface HeaderLine {
  key: string;
  line: string;
}

export function hasOwn(object: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/**
 * Header lines as mailsplit's Headers._parseHeaders gives them, from the header section as a binary string.
 * Linear: the trailing line breaks are cut by a loop (`/[\r\n]+$/` is quadratic on a run of CRs).
 */
export function headerLines(section: string): HeaderLine[] | undefined {
  let end = section.length;
  while (end > 0 && (section.charCodeAt(end - 1) === 0x0d || section.charCodeAt(end - 1) === 0x0a)) end--;
  const rawLines = section.slice(0, end).split(/\r?\n/);
  const keyOf = (line: string) => line.substr(0, line.indexOf(':')).toLowerCase().trim();
  const folded = (line: string) => line.charAt(0) === ' ' || line.charAt(0) === '\t';

  let index = 1;
  let first = rawLines[0]!;
  while (index < rawLines.length && folded(rawLines[index]!)) first += '\r\n' + rawLines[index++];
  const lines: HeaderLine[] = [];
  // an mbox "From " or an HTTP "POST " first line is no header
  if (!/^From /i.test(first) && !/^POST /i.test(first)) lines.push({ key: keyOf(first), line: first });
  for (; index < rawLines.length; index++) {
    const current = rawLines[index]!;
    if (folded(current)) {
      const entry = lines[lines.length - 1];
      if (!entry) return undefined; // cannot happen (the loop starts on an unfolded line); be safe
      entry.line += '\r\n' + current;
      if (!entry.key) entry.key = keyOf(entry.line);
    } else {
      lines.push({ key: keyOf(current), line: current });
    }
  }
  return lines;
}

/**
 * `Headers.getFirst` of mailsplit for a line already found: the line as UTF-8 when it is valid UTF-8, unfolded,
 * the value after the colon.
 */
export function firstValue(line: HeaderLine | undefined): string {
  if (!line) return '';
  let text = line.line;
  if (text) {
    const utf8 = Buffer.from(text, 'latin1').toString('utf8');
    if (!utf8.includes('\uFFFD')) text = utf8;
  }
  return ((libmime.decodeHeader(text) || {}).value || '').toString().trim();
}

/**
 * mime-node.js stripComments: everything from the first `(` to the last `)` of each line removed.
 */
export function stripComments(value: string): string {
  if (value.indexOf('(') < 0) return value;
  return value
    .split(/([\n\r\u2028\u2029])/)
    .map((part) => {
      const start = part.indexOf('(');
      if (start < 0) return part;
      const end = part.lastIndexOf(')');
      return end > start ? part.slice(0, start) + part.slice(end + 1) : part;
    })
    .join('');
}

/**
 * The subset of mail-parser.js `processHeaders` for the keys the result carries, with its accumulation: a
 * value is kept only when truthy, single keys keep their last value, other keys a list (unwrapped when one).
 */
export function processHeaders(lines: HeaderLine[]): Map<string, unknown> {
  const collected = new Map<string, unknown[]>();
  for (const line of lines) {
    const key = line.key;
    if (!WANTED_KEYS.has(key)) continue;
    const text = Buffer.from(
      ((libmime.decodeHeader(line.line) || {}).value || '').toString().trim(),
      'latin1',
    ).toString();
    let value: unknown;
    switch (key) {
      case 'date': {
        let date = new Date(text);
        // mailparser takes the current time for a Date header that does not parse
        if (isNaN(date.getTime())) date = new Date();
        value = date;
        break;
      }
      case 'subject':
        value = decodeWords(text);
        break;
      case 'references':
        value = decodeWords(text)
          .split(/\s+/)
          .map(ensureMessageIdFormat)
          .filter((id: string | false) => id);
        break;
      case 'message-id':
      case 'in-reply-to':
        value = ensureMessageIdFormat(decodeWords(text));
        break;
      default: {
        // from, to, cc, bcc, reply-to
        const list = addressparser(text);
        decodeAddresses(list);
        value = { value: list };
      }
    }
    if (value) {
      const previous = collected.get(key);
      if (!previous) collected.set(key, ([] as unknown[]).concat(value));
      else if (Array.isArray(value)) collected.set(key, previous.concat(value));
      else previous.push(value);
    }
  }
  const headers = new Map<string, unknown>();
  for (const [key, values] of collected) {
    if (SINGLE_KEYS.has(key) && values.length) headers.set(key, values[values.length - 1]);
    else if (values.length === 1) headers.set(key, values[0]);
    else headers.set(key, values);
  }
  return headers;
}

/** libmime.decodeWords, or the text as it is when that throws (mailparser's try around each call). */
function decodeWords(text: string): string {
  try {
    return libmime.decodeWords(text);
  } catch {
    return text;
  }
}

function ensureMessageIdFormat(value: string): string | false {
  if (!value.length) return false;
  if (value.charAt(0) !== '<') value = '<' + value;
  if (value.charAt(value.length - 1) !== '>') value += '>';
  return value;
}

/**
 * Linear equivalent of `/<[^<>]+@[^<>]+>/.test(str)` (mail-parser.js hasBracketedAddress).
 */
function hasBracketedAddress(str: string): boolean {
  let start = -1;
  let at = -1;
  for (let i = 0, len = str.length; i < len; i++) {
    const chr = str.charAt(i);
    if (chr === '<') {
      start = i;
      at = -1;
    } else if (chr === '>') {
      if (start >= 0 && at >= 0 && at < i - 1) return true;
      start = -1;
      at = -1;
    } else if (chr === '@' && start >= 0 && at < 0 && i > start + 1) {
      at = i;
    }
  }
  return false;
}

/**
 * mail-parser.js decodeAddresses, statement for statement: encoded-word display names, an address list hidden in
 * a B-encoded name, encoded words in an address, punycode domains, groups.
 */
export function decodeAddresses(addresses: AddressEntry[]): void {
  const processedAddress = new WeakSet<AddressEntry>();
  for (let i = 0; i < addresses.length; i++) {
    const address = addresses[i]!;
    address.name = (address.name || '').toString().trim();

    if (
      !address.address &&
      /^(=\?([^?]+)\?[Bb]\?[^?]*\?=)(\s*=\?([^?]+)\?[Bb]\?[^?]*\?=)*$/.test(address.name) &&
      !processedAddress.has(address)
    ) {
      const decoded = libmime.decodeWords(address.name);
      if (hasBracketedAddress(decoded)) {
        const parsed = addressparser(decoded);
        if (parsed.length) {
          parsed.forEach((entry) => {
            processedAddress.add(entry);
            addresses.push(entry);
          });
        }
        addresses.splice(i, 1);
        i--;
        continue;
      } else {
        address.name = decoded;
        continue;
      }
    }

    if (address.name) {
      try {
        address.name = libmime.decodeWords(address.name);
      } catch {
        // kept as is
      }
    }
    if (address.address && /[=]\?[^?]+\?[BbQq]\?[^?]*\?[=]/.test(address.address)) {
      try {
        const decodedAddr = libmime.decodeWords(address.address);
        if (/^[^\s@]+@[^\s@]+$/.test(decodedAddr) && !/[=]\?/.test(decodedAddr)) {
          address.address = decodedAddr;
        } else {
          address.address = '';
        }
      } catch {
        address.address = '';
      }
    }
    if (address.address !== undefined && /@xn--/.test(address.address)) {
      try {
        address.address =
          address.address.substr(0, address.address.lastIndexOf('@') + 1) +
          punycode.toUnicode(address.address.substr(address.address.lastIndexOf('@') + 1));
      } catch {
        // not valid punycode, kept as is
      }
    }
    if (address.group) decodeAddresses(address.group);
  }
}
