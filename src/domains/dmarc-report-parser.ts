/**
 * @module domains/dmarc-report-parser
 * Reads a DMARC aggregate report (RFC 7489 section 7.2 and appendix C) out of the email that carried it, under
 * limits, so that a hostile report costs bounded memory and time and never blocks the event loop for long:
 * - the email: at most {@link MAX_EMAIL_BYTES}; its MIME tree {@link MAX_MIME_DEPTH} levels and {@link MAX_MIME_PARTS}
 *   parts deep; the first part that is gzip, zip or XML (by its bytes, not its stated type) is the report;
 * - the report file: at most {@link MAX_COMPRESSED_BYTES} as attached; gzip (RFC 1952) is inflated in libuv's thread
 *   pool (`node:zlib`) with an output cap of {@link MAX_XML_BYTES} or {@link MAX_RATIO} times the compressed size,
 *   whichever is smaller, so a gzip bomb stops at the cap instead of filling memory; a zip (stored or deflated, the
 *   first `.xml` entry, else the first file, of at most {@link MAX_ZIP_ENTRIES}) is read by src/attachment-text's zip
 *   reader (the project's one), its directory checked against the same caps before anything is inflated and each
 *   entry inflated in the thread pool with its declared size as the ceiling; encrypted entries are refused;
 * - the XML: a small reader of elements and text only (no DTD: a `<!DOCTYPE` or `<!ENTITY` refuses the report, so
 *   no entity expansion; the five predefined entities and character references are decoded), nesting at most
 *   {@link MAX_XML_DEPTH}, a value at most {@link MAX_VALUE_CHARS}, at most {@link MAX_RECORDS} `<record>`s. It hands
 *   control back to the event loop every {@link TAGS_PER_TURN} tags.
 * Anything outside those limits, or malformed, is a {@link DmarcReportRejected} naming why.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { isAttachmentTextError, openZip, type ZipLimits } from '../attachment-text/index.js';
import { headerOf, parseContentType, splitEntity, splitMultipart } from '../mime/index.js';
import type { DmarcPolicyPublished, DmarcSourceCounts } from '../../storage/schema/dmarc.js';

/** Largest email read for a report. */
export const MAX_EMAIL_BYTES = 10 * 1024 * 1024;
/** Largest report file as attached (after undoing base64), compressed or not. */
export const MAX_COMPRESSED_BYTES = 5 * 1024 * 1024;
/** Largest XML after decompression. */
export const MAX_XML_BYTES = 20 * 1024 * 1024;
/** Largest decompressed-to-compressed size ratio (real reports compress 5-50 times). */
export const MAX_RATIO = 200;
/** `<record>` elements read; a report with more is refused. */
export const MAX_RECORDS = 5_000;
export const MAX_MIME_DEPTH = 4;
export const MAX_MIME_PARTS = 32;
export const MAX_ZIP_ENTRIES = 16;
export const MAX_XML_DEPTH = 16;
export const MAX_VALUE_CHARS = 1_024;
/** Tags read between two turns of the event loop. */
export const TAGS_PER_TURN = 1_000;

const gunzipAsync = promisify(gunzip) as (buffer: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>;

/** A report that is refused: malformed, too big, or expanding too much. */
export class DmarcReportRejected extends Error {}

/** An aggregate report, summed by source address. */
export interface AggregateReport {
  orgName: string;
  email: string | undefined;
  reportId: string;
  /** Unix seconds. */
  begin: number;
  end: number;
  policy: DmarcPolicyPublished;
  messageCount: number;
  /** Most messages first. */
  sources: DmarcSourceCounts[];
}

const reject = (why: string): never => {
  throw new DmarcReportRejected(why);
};

/** What a file's first bytes say it is. */
function sniff(bytes: Buffer): 'gzip' | 'zip' | 'xml' | undefined {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return 'gzip';
  if (bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50) return 'zip';
  const head = bytes
    .subarray(0, 512)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (head.startsWith('<?xml') || /^<(?:[A-Za-z_][\w.-]*:)?feedback[\s>]/.test(head)) return 'xml';
  return undefined;
}

/** Undoes a transfer encoding; bytes in and out. */
function decodeBody(body: string, encoding: string | undefined): Buffer {
  const kind = (encoding ?? '').trim().toLowerCase();
  if (kind === 'base64') return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (kind === 'quoted-printable') {
    return Buffer.from(
      body
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
      'latin1',
    );
  }
  return Buffer.from(body, 'latin1');
}

/** The report file in an email: the first MIME leaf whose bytes are gzip, zip or XML. */
export function findReportFile(raw: Buffer): Buffer {
  if (raw.length > MAX_EMAIL_BYTES) reject(`the email is larger than ${MAX_EMAIL_BYTES} bytes`);
  const { headers, body } = splitEntity(raw.toString('latin1'));
  let parts = 0;
  const walk = (entityHeaders: typeof headers, entityBody: string, depth: number): Buffer | undefined => {
    if (++parts > MAX_MIME_PARTS) return undefined;
    const { type, params } = parseContentType(headerOf(entityHeaders, 'content-type'));
    if (type.startsWith('multipart/')) {
      if (!params.boundary || depth >= MAX_MIME_DEPTH) return undefined;
      for (const child of splitMultipart(entityBody, params.boundary)) {
        const entity = splitEntity(child);
        const found = walk(entity.headers, entity.body, depth + 1);
        if (found) return found;
      }
      return undefined;
    }
    const bytes = decodeBody(entityBody, headerOf(entityHeaders, 'content-transfer-encoding'));
    return sniff(bytes) ? bytes : undefined;
  };
  return walk(headers, body, 0) ?? reject('no gzip, zip or XML report in the email');
}

/** Inflates gzip with the output capped by size and ratio. */
async function gunzipCapped(data: Buffer): Promise<Buffer> {
  const cap = Math.min(MAX_XML_BYTES, Math.max(1, data.length) * MAX_RATIO);
  try {
    return await gunzipAsync(data, { maxOutputLength: cap });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      return reject(
        `the report expands past ${cap} bytes (at most ${MAX_XML_BYTES} bytes and ${MAX_RATIO} times its compressed size)`,
      );
    }
    return reject(`the gzip data is corrupt (${(error as Error).message})`);
  }
}

/**
 * The zip bounds of a report, for the zip reader of src/attachment-text (the one reader of zip containers): at most
 * {@link MAX_ZIP_ENTRIES} entries, each and all of them at most {@link MAX_XML_BYTES} and {@link MAX_RATIO} times
 * their compressed size, checked on the directory before anything is inflated and again while inflating.
 */
const REPORT_ZIP_LIMITS: ZipLimits = {
  maxEntries: MAX_ZIP_ENTRIES,
  maxEntryBytes: MAX_XML_BYTES,
  maxTotalBytes: MAX_XML_BYTES,
  maxRatio: MAX_RATIO,
  ratioCheckedAbove: 0,
};

/** The XML entry of a zip archive (the first `.xml` entry, else the first file), inflated off the event loop. */
async function unzip(zip: Buffer): Promise<Buffer> {
  try {
    const archive = openZip(zip, REPORT_ZIP_LIMITS);
    const files = [...archive.entries.keys()].filter((name) => !name.endsWith('/'));
    const chosen = files.find((name) => /\.xml$/i.test(name)) ?? files[0];
    if (chosen === undefined) return reject('the zip archive holds no file');
    return (await archive.readAsync(chosen)) ?? reject('the zip archive holds no file');
  } catch (error) {
    if (isAttachmentTextError(error) && error.reason === 'zip_bomb')
      return reject(
        `the report expands past its caps (at most ${MAX_XML_BYTES} bytes and ${MAX_RATIO} times its compressed size): ${error.message}`,
      );
    if (isAttachmentTextError(error)) return reject(error.message);
    throw error;
  }
}

/** The XML of a report file (gzip, zip or plain), decompressed under the limits. */
export async function reportXml(file: Buffer): Promise<string> {
  if (file.length > MAX_COMPRESSED_BYTES) reject(`the report file is larger than ${MAX_COMPRESSED_BYTES} bytes`);
  const kind = sniff(file);
  const xml = kind === 'gzip' ? await gunzipCapped(file) : kind === 'zip' ? await unzip(file) : file;
  if (xml.length > MAX_XML_BYTES) reject(`the report XML is larger than ${MAX_XML_BYTES} bytes`);
  return xml.toString('utf8').replace(/^\uFEFF/, '');
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Decodes the predefined entities and character references; any other entity refuses the report. */
function decodeText(text: string): string {
  if (!text.includes('&')) return text.trim();
  return text
    .replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{1,8});/g, (all, name: string) => {
      if (name.startsWith('#x')) return String.fromCodePoint(Math.min(0x10ffff, parseInt(name.slice(2), 16)));
      if (name.startsWith('#')) return String.fromCodePoint(Math.min(0x10ffff, Number(name.slice(1))));
      return ENTITIES[name] ?? reject(`unknown XML entity ${all}`);
    })
    .trim();
}

/** One `<record>` as read. */
interface RecordFields {
  source_ip?: string;
  count?: string;
  disposition?: string;
  dkim?: string;
  spf?: string;
}

const DISPOSITIONS = new Set(['none', 'quarantine', 'reject']);
const RESULTS = new Set(['pass', 'fail']);

/** Reads the XML of an aggregate report and sums its records by source address. */
export async function readAggregateXml(xml: string): Promise<AggregateReport> {
  const stack: string[] = [];
  /** The path of each open element from the root (`feedback/record/row`), kept beside the stack. */
  const paths: string[] = [];
  let text = '';
  let tags = 0;
  let rootSeen = false;
  const meta: Record<string, string> = {};
  const policy: Record<string, string> = {};
  let record: RecordFields | undefined;
  let records = 0;
  let messageCount = 0;
  const sources = new Map<string, DmarcSourceCounts>();

  const closeRecord = (fields: RecordFields) => {
    const ip = fields.source_ip ?? reject('a record without source_ip');
    if (isIP(ip) === 0) reject(`a record whose source_ip is not an IP address: ${ip.slice(0, 60)}`);
    const count = /^\d{1,10}$/.test(fields.count ?? '')
      ? Number(fields.count)
      : reject(`a record whose count is not a whole number: ${String(fields.count).slice(0, 20)}`);
    const disposition = (fields.disposition ?? '').toLowerCase();
    const dkim = (fields.dkim ?? '').toLowerCase();
    const spf = (fields.spf ?? '').toLowerCase();
    if (!DISPOSITIONS.has(disposition)) reject(`a record with disposition ${JSON.stringify(disposition.slice(0, 20))}`);
    if (!RESULTS.has(dkim) || !RESULTS.has(spf))
      reject('a record whose policy_evaluated dkim or spf is neither pass nor fail');
    const key = ip.toLowerCase();
    let entry = sources.get(key);
    if (!entry) {
      entry = {
        source_ip: key,
        count: 0,
        dkim: { pass: 0, fail: 0 },
        spf: { pass: 0, fail: 0 },
        disposition: { none: 0, quarantine: 0, reject: 0 },
      };
      sources.set(key, entry);
    }
    entry.count += count;
    entry.dkim[dkim as 'pass' | 'fail'] += count;
    entry.spf[spf as 'pass' | 'fail'] += count;
    entry.disposition[disposition as 'none' | 'quarantine' | 'reject'] += count;
    messageCount += count;
  };

  /** An element closes: `path` is its path from the root, its own name last. */
  const close = (path: string, value: string) => {
    if (path.startsWith('feedback/report_metadata/')) {
      const field = path.slice('feedback/report_metadata/'.length);
      if (['org_name', 'email', 'report_id', 'date_range/begin', 'date_range/end'].includes(field)) meta[field] = value;
    } else if (path.startsWith('feedback/policy_published/')) {
      policy[path.slice('feedback/policy_published/'.length)] = value;
    } else if (record && path.startsWith('feedback/record/row/')) {
      const field = path.slice('feedback/record/row/'.length);
      if (field === 'source_ip' || field === 'count') record[field] = value;
      else if (field === 'policy_evaluated/disposition') record.disposition = value;
      else if (field === 'policy_evaluated/dkim') record.dkim = value;
      else if (field === 'policy_evaluated/spf') record.spf = value;
    } else if (path === 'feedback/record' && record) {
      closeRecord(record);
      record = undefined;
    }
  };

  let at = 0;
  while (at < xml.length) {
    if (++tags % TAGS_PER_TURN === 0) await nextTurn();
    const open = xml.indexOf('<', at);
    const until = open < 0 ? xml.length : open;
    if (until > at && !onlySpace(xml, at, until)) {
      if (stack.length === 0) reject('text outside the root element');
      text += xml.slice(at, until);
      if (text.length > MAX_VALUE_CHARS) reject(`a value longer than ${MAX_VALUE_CHARS} characters`);
    }
    if (open < 0) break;
    if (xml.startsWith('<!--', open)) {
      const end = xml.indexOf('-->', open + 4);
      if (end < 0) reject('an unterminated comment');
      at = end + 3;
      continue;
    }
    if (xml.startsWith('<![CDATA[', open)) {
      const end = xml.indexOf(']]>', open + 9);
      if (end < 0 || stack.length === 0) reject('an unterminated or misplaced CDATA section');
      text += xml.slice(open + 9, end).replace(/&/g, '&amp;');
      if (text.length > MAX_VALUE_CHARS) reject(`a value longer than ${MAX_VALUE_CHARS} characters`);
      at = end + 3;
      continue;
    }
    if (xml.startsWith('<?', open)) {
      const end = xml.indexOf('?>', open + 2);
      if (end < 0) reject('an unterminated processing instruction');
      at = end + 2;
      continue;
    }
    if (xml.startsWith('<!', open)) reject('DOCTYPE and entity declarations are not accepted');
    const end = xml.indexOf('>', open + 1);
    if (end < 0 || end - open > 4_096) reject('an unterminated or oversized tag');
    const tag = xml.slice(open + 1, end);
    at = end + 1;
    if (tag.startsWith('/')) {
      const name = localName(tag.slice(1).trim());
      const path = paths.pop()!;
      if (stack.pop() !== name) reject(`a closing tag </${name.slice(0, 40)}> that does not match its opening tag`);
      close(path, decodeText(text));
      text = '';
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const name = localName((selfClosing ? tag.slice(0, -1) : tag).trim().split(/\s/, 1)[0] ?? '');
    if (stack.length === 0) {
      if (rootSeen) reject('more than one root element');
      if (name !== 'feedback') reject(`the root element is <${name.slice(0, 40)}>, not <feedback>`);
      rootSeen = true;
    }
    text = '';
    const path = stack.length === 0 ? name : `${paths[paths.length - 1]}/${name}`;
    stack.push(name);
    paths.push(path);
    if (stack.length > MAX_XML_DEPTH) reject(`elements nested more than ${MAX_XML_DEPTH} deep`);
    if (path === 'feedback/record') {
      if (++records > MAX_RECORDS) reject(`more than ${MAX_RECORDS} records`);
      record = {};
    }
    if (selfClosing) {
      stack.pop();
      paths.pop();
      close(path, '');
    }
  }
  if (!rootSeen) reject('no <feedback> element');
  if (stack.length > 0) reject(`the XML ends inside <${stack[stack.length - 1]}>`);

  const orgName = meta.org_name || reject('report_metadata has no org_name');
  const reportId = meta.report_id || reject('report_metadata has no report_id');
  const begin = /^\d{1,12}$/.test(meta['date_range/begin'] ?? '')
    ? Number(meta['date_range/begin'])
    : reject('report_metadata has no date_range begin');
  const endAt = /^\d{1,12}$/.test(meta['date_range/end'] ?? '')
    ? Number(meta['date_range/end'])
    : reject('report_metadata has no date_range end');
  const domain = (policy.domain ?? '').toLowerCase().replace(/\.$/, '') || reject('policy_published has no domain');
  const pct = /^\d{1,3}$/.test(policy.pct ?? '') ? Number(policy.pct) : undefined;
  return {
    orgName: orgName.slice(0, 256),
    email: meta.email ? meta.email.slice(0, 320) : undefined,
    reportId: reportId.slice(0, 256),
    begin,
    end: endAt,
    policy: {
      domain,
      ...(policy.adkim ? { adkim: policy.adkim.slice(0, 8) } : {}),
      ...(policy.aspf ? { aspf: policy.aspf.slice(0, 8) } : {}),
      ...(policy.p ? { p: policy.p.slice(0, 16) } : {}),
      ...(policy.sp ? { sp: policy.sp.slice(0, 16) } : {}),
      ...(pct !== undefined ? { pct } : {}),
    },
    messageCount,
    sources: [...sources.values()].sort((a, b) => b.count - a.count || (a.source_ip < b.source_ip ? -1 : 1)),
  };
}

/** Whether `text[from, to)` is only XML white space. */
function onlySpace(text: string, from: number, to: number): boolean {
  for (let index = from; index < to; index++) {
    const code = text.charCodeAt(index);
    if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) return false;
  }
  return true;
}

/** An element name without its namespace prefix; a name that is not one refuses the report. */
function localName(qualified: string): string {
  if (!/^[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?$/.test(qualified))
    reject(`a malformed tag name ${JSON.stringify(qualified.slice(0, 40))}`);
  const colon = qualified.indexOf(':');
  return colon < 0 ? qualified : qualified.slice(colon + 1);
}

/** Reads the aggregate report carried by an email (see the module notes for the limits). */
export async function readAggregateReport(raw: Buffer): Promise<AggregateReport> {
  return readAggregateXml(await reportXml(findReportFile(raw)));
}
