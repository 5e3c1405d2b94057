/**
 * @module mime/cut-parts
 * Cutting parts out of a raw message (pure): each part to remove is replaced, in place, by a short `text/plain` part
 * (`inline`, Base64) that says what was there; every other byte stays as it was. Used when a policy removed
 * attachments at ingest (src/mail/stages/policy-raw.ts), so the stored raw message no longer holds them.
 *
 * Which part is which: the parser (mailparser, ./parse-inbound.ts) names attachments by their decoded bytes, not their
 * place, so the parts are found by the SHA-256 of their decoded body (base64, quoted-printable or as is), in order. A
 * `message/rfc822` part sent as is is looked into, as mailparser does for an inline one. When a part to cut is not
 * found (a transfer encoding decoded otherwise, a structure read otherwise, deeper than {@link MAX_DEPTH} or past
 * {@link MAX_ENTITIES}), {@link cutParts} says so and the caller keeps none of the body ({@link withBodyReplaced}):
 * the rewrite fails closed.
 *
 * Bounded: each level of nesting scans its own bytes once with `indexOf`, at most {@link MAX_DEPTH} levels, at most
 * {@link MAX_ENTITIES} entities, each decoded and hashed at most once (and only when its decoded size is one of the
 * attachments'): linear in the message, whatever its shape.
 */
import { createHash } from 'node:crypto';
import { unfoldHeaderLines } from './header-lines.js';
import { parseContentType } from './report-mime.js';
import { qpDecode, qpDecodeAscii } from './transfer-decoding.js';

/** Levels of multiparts and attached messages looked into (mail clients write 3 or 4; a forward adds 3). */
export const MAX_DEPTH = 12;
/** Entities read in all (mailparser stops at 1,000 child nodes). */
export const MAX_ENTITIES = 1000;
/** Bytes of one entity's header section that are read. */
const MAX_HEADER_BYTES = 1024 * 1024;
/** Longest boundary followed (RFC 2046 allows 70 characters). */
const MAX_BOUNDARY = 200;

/** One attachment of the parsed message, in the parser's order: its bytes' hash and size, and what to put in its place when it goes. */
export interface PartToCut {
  /** Lower-case hex SHA-256 of the decoded bytes. */
  hash: string;
  size: number;
  /** The text that replaces the part; undefined to keep it. */
  note: string | undefined;
}

const CRLF = Buffer.from('\r\n');

/** Where an entity's header section ends and its body starts (`end` when it has no blank line: all header). */
function headerEnd(raw: Buffer, start: number, end: number): { headerEnd: number; bodyStart: number } {
  if (raw[start] === 0x0a) return { headerEnd: start, bodyStart: start + 1 };
  if (raw[start] === 0x0d && raw[start + 1] === 0x0a) return { headerEnd: start, bodyStart: start + 2 };
  const limit = Math.min(end, start + MAX_HEADER_BYTES);
  let at = raw.indexOf(0x0a, start);
  while (at >= 0 && at < limit) {
    const next = at + 1;
    if (raw[next] === 0x0a) return { headerEnd: next, bodyStart: next + 1 };
    if (raw[next] === 0x0d && raw[next + 1] === 0x0a) return { headerEnd: next, bodyStart: next + 2 };
    at = raw.indexOf(0x0a, next);
  }
  // No blank line within the bound: read as all header (its first MAX_HEADER_BYTES), with no body.
  return { headerEnd: limit, bodyStart: end };
}

/** The header fields of a section as byte ranges (continuation lines with their field) and lower-cased names. */
function headerFields(raw: Buffer, start: number, end: number): { name: string; start: number; end: number }[] {
  const fields: { name: string; start: number; end: number }[] = [];
  let at = start;
  while (at < end) {
    const newline = raw.indexOf(0x0a, at);
    const lineEnd = newline < 0 || newline >= end ? end : newline + 1;
    const first = raw[at];
    if ((first === 0x20 || first === 0x09) && fields.length > 0) fields[fields.length - 1]!.end = lineEnd;
    else {
      const colon = raw.indexOf(0x3a, at);
      const name = colon > at && colon < lineEnd ? raw.toString('latin1', at, colon).trim().toLowerCase() : '';
      fields.push({ name, start: at, end: lineEnd });
    }
    at = lineEnd;
  }
  return fields;
}

/** The note as a part's header fields and body: `text/plain`, inline, Base64 (so no line of it can be a boundary). */
function noteEntity(note: string): Buffer {
  const body = Buffer.from(note, 'utf8').toString('base64');
  const lines: string[] = [];
  for (let at = 0; at < body.length; at += 76) lines.push(body.slice(at, at + 76));
  return Buffer.from(
    'Content-Type: text/plain; charset=utf-8\r\nContent-Disposition: inline\r\nContent-Transfer-Encoding: base64\r\n\r\n' +
      lines.join('\r\n'),
  );
}

/**
 * An entity's replacement: its header fields but the `Content-*` ones (so a message keeps From, Subject, and the
 * `Authentication-Results` of our stage), then the note.
 */
function replacement(raw: Buffer, start: number, end: number, note: string): Buffer[] {
  const { headerEnd: cut } = headerEnd(raw, start, end);
  const kept = headerFields(raw, start, cut)
    .filter((field) => !field.name.startsWith('content-'))
    .map((field) => {
      const bytes = raw.subarray(field.start, field.end);
      return bytes[bytes.length - 1] === 0x0a ? bytes : Buffer.concat([bytes, CRLF]);
    });
  return [...kept, noteEntity(note)];
}

/** Undoes a transfer encoding; undefined for one not read here. */
function decoded(body: Buffer, encoding: string): Buffer | undefined {
  if (encoding === 'base64') return Buffer.from(body.toString('latin1'), 'base64');
  if (encoding === 'quoted-printable') return qpDecodeAscii(body) ?? qpDecode(body.toString('utf8'));
  if (encoding === '' || encoding === '7bit' || encoding === '8bit' || encoding === 'binary') return body;
  return undefined;
}

interface Walk {
  raw: Buffer;
  /** Per hash, the notes of the parsed attachments with those bytes, in order (undefined: kept). */
  queues: Map<string, (string | undefined)[]>;
  /** Hashes only removed attachments have, with their note: any part with those bytes goes. */
  removedOnly: Map<string, string>;
  sizes: Set<number>;
  entities: number;
  /** Notes still to place. */
  pending: number;
  out: Buffer[];
  /** Bytes of `raw` copied to `out` so far. */
  copied: number;
}

/** The note for an entity whose decoded body hashes to `hash`, when it goes. */
function noteFor(walk: Walk, hash: string): string | undefined {
  const queue = walk.queues.get(hash);
  if (queue && queue.length > 0) {
    const note = queue.shift();
    if (note !== undefined) walk.pending--;
    return note;
  }
  return walk.removedOnly.get(hash);
}

/** Replaces the entity [start, end) by its note. */
function cut(walk: Walk, start: number, end: number, note: string): void {
  walk.out.push(walk.raw.subarray(walk.copied, start), ...replacement(walk.raw, start, end, note));
  walk.copied = end;
}

/** The delimiter lines of a multipart body: where each starts and where the line after it starts. */
function delimiters(
  raw: Buffer,
  start: number,
  end: number,
  boundary: Buffer,
): { at: number; next: number; last: boolean }[] {
  const found: { at: number; next: number; last: boolean }[] = [];
  let at = raw.indexOf(boundary, start);
  while (at >= 0 && at < end) {
    const lineStart = at === start || raw[at - 1] === 0x0a;
    let after = at + boundary.length;
    const last = raw[after] === 0x2d && raw[after + 1] === 0x2d;
    if (last) after += 2;
    while (after < end && (raw[after] === 0x20 || raw[after] === 0x09)) after++;
    const lineEnd =
      after >= end
        ? end
        : raw[after] === 0x0a
          ? after + 1
          : raw[after] === 0x0d && raw[after + 1] === 0x0a
            ? after + 2
            : -1;
    if (lineStart && lineEnd >= 0) {
      found.push({ at, next: lineEnd, last });
      if (last || found.length > MAX_ENTITIES) return found;
    }
    at = raw.indexOf(boundary, at + 1);
  }
  return found;
}

/** The end of a part's content: before the line break that belongs to the next delimiter. */
function contentEnd(raw: Buffer, start: number, delimiter: number): number {
  let end = delimiter;
  if (end > start && raw[end - 1] === 0x0a) end--;
  if (end > start && raw[end - 1] === 0x0d) end--;
  return end;
}

/** Walks the entity [start, end): cuts what goes, looks into multiparts and attached messages. */
function walkEntity(walk: Walk, start: number, end: number, depth: number): void {
  if (walk.pending === 0 && walk.removedOnly.size === 0) return;
  if (++walk.entities > MAX_ENTITIES) return;
  const raw = walk.raw;
  const { headerEnd: headEnd, bodyStart } = headerEnd(raw, start, end);
  const headers = unfoldHeaderLines(raw.toString('latin1', start, headEnd), 500);
  const first = (name: string) => headers.find((header) => header.name.toLowerCase() === name)?.value;
  const { type, params } = parseContentType(first('content-type'));
  const boundary = params.boundary;
  if (type.startsWith('multipart/') && boundary && boundary.length <= MAX_BOUNDARY) {
    if (depth >= MAX_DEPTH) return;
    const lines = delimiters(raw, bodyStart, end, Buffer.from(`--${boundary}`, 'latin1'));
    for (let index = 0; index < lines.length; index++) {
      const line = lines[index]!;
      if (line.last) break;
      const following = lines[index + 1];
      const partEnd = following ? contentEnd(raw, line.next, following.at) : end;
      walkEntity(walk, line.next, partEnd, depth + 1);
    }
    return;
  }
  const encoding = (first('content-transfer-encoding') ?? '').trim().toLowerCase();
  const body = raw.subarray(bodyStart, end);
  const bytes = decoded(body, encoding);
  if (bytes && walk.sizes.has(bytes.length)) {
    const note = noteFor(walk, createHash('sha256').update(bytes).digest('hex'));
    if (note !== undefined) return cut(walk, start, end, note);
  }
  const message = type === 'message/rfc822' || type === 'message/global';
  if (message && bytes === body && depth < MAX_DEPTH) walkEntity(walk, bodyStart, end, depth + 1);
}

/**
 * `raw` with each attachment that has a note replaced by it (see the module notes), or undefined when one of them
 * could not be found in `raw` (then nothing of the body should be kept).
 */
export function cutParts(raw: Buffer, attachments: readonly PartToCut[]): Buffer | undefined {
  const queues = new Map<string, (string | undefined)[]>();
  for (const attachment of attachments) {
    const queue = queues.get(attachment.hash);
    if (queue) queue.push(attachment.note);
    else queues.set(attachment.hash, [attachment.note]);
  }
  const removedOnly = new Map<string, string>();
  for (const [hash, notes] of queues) {
    if (notes.every((note) => note !== undefined)) removedOnly.set(hash, notes[0]!);
  }
  const pending = attachments.filter((attachment) => attachment.note !== undefined).length;
  if (pending === 0) return raw;
  const walk: Walk = {
    raw,
    queues,
    removedOnly,
    sizes: new Set(attachments.map((attachment) => attachment.size)),
    entities: 0,
    pending,
    out: [],
    copied: 0,
  };
  walkEntity(walk, 0, raw.length, 0);
  if (walk.pending > 0) return undefined;
  walk.out.push(raw.subarray(walk.copied));
  return Buffer.concat(walk.out);
}

/**
 * `raw` with its body replaced by `note`: the header fields but the `Content-*` ones, then the note as a `text/plain`
 * body. What is stored when the parts to cut could not all be found, or nothing of the body could be checked.
 */
export function withBodyReplaced(raw: Buffer, note: string): Buffer {
  return Buffer.concat([...replacement(raw, 0, raw.length, note), CRLF]);
}
