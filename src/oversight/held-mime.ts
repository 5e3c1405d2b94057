/**
 * @module oversight/held-mime
 * The exact message a person approves (issue 37): the composed MIME of a send that waits, hashed without the headers
 * set again when it leaves ({@link EXCEPTED_HEADERS}: its `Date`, and the DKIM signature that covers it), and that
 * MIME dated again at release. Pure, linear in the header block.
 */
import { createHash } from 'node:crypto';

/** Headers set again when an approved message leaves; everything else is what the reviewer approved. */
export const EXCEPTED_HEADERS = ['Date', 'DKIM-Signature'] as const;

const EXCEPTED = new Set(EXCEPTED_HEADERS.map((name) => name.toLowerCase()));

/** Where the header block ends (the index of the empty line's first byte), or the length when there is none. */
function headerEnd(raw: Buffer): number {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf === -1) return lf === -1 ? raw.length : lf;
  return lf === -1 ? crlf : Math.min(crlf, lf);
}

/** The header fields of a block, each with its folded continuation lines, in order. */
function fields(block: string): string[] {
  const lines = block.split(/\r?\n/);
  const out: string[] = [];
  for (const line of lines) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && out.length > 0) out[out.length - 1] += `\r\n${line}`;
    else out.push(line);
  }
  return out;
}

function nameOf(field: string): string {
  const colon = field.indexOf(':');
  return (colon === -1 ? field : field.slice(0, colon)).trim().toLowerCase();
}

/** The MIME without the excepted headers: the bytes the approval's hash covers. */
export function withoutExcepted(raw: Buffer): Buffer {
  const end = headerEnd(raw);
  const kept = fields(raw.subarray(0, end).toString('latin1')).filter((field) => !EXCEPTED.has(nameOf(field)));
  return Buffer.concat([Buffer.from(kept.join('\r\n'), 'latin1'), raw.subarray(end)]);
}

/** SHA-256 (hex) of what the reviewer approves. */
export function heldSha256(raw: Buffer): string {
  return createHash('sha256').update(withoutExcepted(raw)).digest('hex');
}

/** The held MIME dated `date` (RFC 5322 form), its old Date and DKIM signature taken out: ready to sign and send. */
export function restamp(raw: Buffer, date: Date): Buffer {
  const bare = withoutExcepted(raw);
  return Buffer.concat([Buffer.from(`Date: ${date.toUTCString().replace(/GMT$/, '+0000')}\r\n`, 'latin1'), bare]);
}
