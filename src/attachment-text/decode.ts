/**
 * @module attachment-text/decode
 * Bytes of a text attachment (plain text, CSV, HTML, iCalendar) as a string: a byte order mark wins, then the
 * declared charset (the Content-Type parameter, or an HTML meta charset in the first KB), then UTF-8 when the bytes
 * are valid UTF-8, else windows-1252 (what "latin-1" text really is). One pass of TextDecoder.
 */

/** The charset parameter of a Content-Type value, lower case. */
export function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const at = contentType.toLowerCase().indexOf('charset=');
  if (at < 0) return undefined;
  const value = contentType
    .slice(at + 8, at + 48)
    .split(';')[0]!
    .trim()
    .replace(/^"|"$/g, '');
  return value || undefined;
}

/** The charset an HTML document declares in its first KB (`<meta charset>` or `http-equiv` content). */
export function htmlMetaCharset(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024))
    .toString('latin1')
    .toLowerCase();
  const at = head.indexOf('charset=');
  if (at < 0) return undefined;
  const match = /^["']?([a-z0-9_.:-]{1,40})/.exec(head.slice(at + 8, at + 50));
  return match?.[1];
}

function decoderFor(label: string): InstanceType<typeof TextDecoder> | undefined {
  try {
    return new TextDecoder(label);
  } catch {
    return undefined;
  }
}

/** windows-1252's characters for 0x80–0x9F (the rest is latin-1; the five unassigned bytes stay as they are). */
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/**
 * windows-1252 by hand: Node's TextDecoder decodes that label as latin-1 (0x80 stays U+0080 instead of €).
 */
export function decodeWindows1252(bytes: Uint8Array): string {
  const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return latin1.replace(/[\u0080-\u009f]/g, (char) => CP1252_HIGH[char.charCodeAt(0) - 0x80]!);
}

/** The text of `bytes`. `charset`: the declared one, if any (ignored when unknown to the platform). */
export function decodeText(bytes: Uint8Array, charset?: string): string {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return new TextDecoder('utf-8').decode(bytes.subarray(3));
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe)
    return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff)
    return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const declared = charset ? decoderFor(charset) : undefined;
  if (declared?.encoding === 'windows-1252') return decodeWindows1252(bytes);
  if (declared && declared.encoding !== 'utf-8') return declared.decode(bytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return decodeWindows1252(bytes);
  }
}
