/**
 * @module mail/header-section
 * The limits a mail server puts on a message's header section, as Postfix has them, and the linear scans that apply
 * them. Every reader of a header section of untrusted mail (inbound SMTP and local delivery, a connected account's
 * sync, the reports of bounces, complaints and DMARC) goes through these before anything parses the header, so what
 * a parser sees is bounded by construction.
 *
 * - `maxHeaderBytes` (Postfix `header_size_limit`, 102,400 bytes): mail received over SMTP or delivered locally with
 *   a larger header section is refused (`552 5.3.4`, as Gmail refuses it); a message fetched from a connected
 *   account's server, which exists already and cannot be refused, is kept with the excess fields discarded (as
 *   Postfix's cleanup discards them) and the message says how many bytes went.
 *
 * The other limits of that kind are the parsers' own, each linear and bounded, and measured by the scaling watchdog
 * (test/fuzz/scaling.test.ts): MIME nesting and part counts (mailparser on the parser pool, under a deadline), address
 * lists (500 kept), References (100 kept), long lines (kept whole in the stored message; bounded prefixes read).
 */

/** The header-section limits (setting `AGENTPOST_MAX_HEADER_BYTES`). */
export interface HeaderLimits {
  /** Bytes of a header section, its blank line excepted. */
  maxHeaderBytes: number;
}

/** Postfix's default (postconf(5): `header_size_limit`). */
export const DEFAULT_HEADER_LIMITS: HeaderLimits = { maxHeaderBytes: 102_400 };

const LF = 0x0a;
const CR = 0x0d;

/**
 * Where the header section of `raw` (from `start`) ends: the index of the line break that ends its last field (the
 * empty line follows), or -1 when no empty line ends it (the whole rest is header). Linear: one `indexOf` pass.
 */
export function headerSectionEnd(raw: Uint8Array, start = 0): number {
  // A message that starts with an empty line has an empty header section.
  if (raw[start] === LF || (raw[start] === CR && raw[start + 1] === LF)) return start;
  let at = start;
  for (;;) {
    const lf = raw.indexOf(LF, at);
    if (lf < 0) return -1;
    const next = lf + 1;
    if (raw[next] === LF) return lf;
    if (raw[next] === CR && raw[next + 1] === LF) return lf;
    at = next;
  }
}

/** The size in bytes of the header section of `raw` (the whole message when no empty line ends it). */
export function headerSectionBytes(raw: Uint8Array): number {
  const end = headerSectionEnd(raw);
  if (end < 0) return raw.length;
  return end > 0 && raw[end - 1] === CR ? end - 1 : end;
}

/**
 * Whether the header section of `raw` is larger than `maxBytes`. Reads at most the first `maxBytes` + 4 bytes, so it
 * costs the same whatever the message's size.
 */
export function headerSectionTooLarge(raw: Buffer, maxBytes: number): boolean {
  if (raw.length <= maxBytes) return false;
  const end = headerSectionEnd(raw.subarray(0, maxBytes + 4));
  if (end < 0) return true;
  return (end > 0 && raw[end - 1] === CR ? end - 1 : end) > maxBytes;
}

/**
 * `raw` with its header section cut to at most `maxBytes`: the fields that end within the limit are kept whole, the
 * rest of the header section is discarded (as Postfix's cleanup does), and the body is kept as it is. Returns `raw`
 * itself when it is within the limit. Linear.
 */
export function limitHeaderSection(raw: Buffer, maxBytes: number): { raw: Buffer; discardedBytes: number } {
  if (!headerSectionTooLarge(raw, maxBytes)) return { raw, discardedBytes: 0 };
  const end = headerSectionEnd(raw);
  const headerEnd = end < 0 ? raw.length : end + 1;
  // The last field that ends within the limit: the last line break before it that is not followed by a continuation.
  let cut = raw.lastIndexOf(LF, maxBytes - 1);
  while (cut >= 0 && (raw[cut + 1] === 0x20 || raw[cut + 1] === 0x09))
    cut = cut === 0 ? -1 : raw.lastIndexOf(LF, cut - 1);
  const keep = cut < 0 ? 0 : cut + 1;
  // The empty line that ends the section, and the body after it.
  const body = end < 0 ? Buffer.from('\r\n') : raw.subarray(end + 1);
  return { raw: Buffer.concat([raw.subarray(0, keep), body]), discardedBytes: headerEnd - keep };
}
