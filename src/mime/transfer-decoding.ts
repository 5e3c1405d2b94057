/**
 * @module mail/transfer-decoding
 * Content-Transfer-Encoding decoders of the fast-path parser (./simple-mime.ts): base64 and quoted-printable, linear.
 */

/**
 * libbase64's Decoder over the whole body: each chunk read as 'ascii' (high bit cleared), everything but the
 * base64 alphabet and '=' dropped, decoded in groups of four. Chunked decoding equals decoding at once only when
 * '=' appears solely as the final padding, so anything else is refused (`undefined`).
 */
export function base64Decode(body: Buffer): Buffer | undefined {
  let b64 = body.toString('ascii');
  if (/[^a-zA-Z0-9+/=]/.test(b64)) b64 = b64.replace(/[^a-zA-Z0-9+/=]/g, '');
  const pad = b64.indexOf('=');
  if (pad >= 0 && (pad < b64.length - 2 || (pad === b64.length - 2 && b64.charCodeAt(pad + 1) !== 0x3d)))
    return undefined;
  return Buffer.from(b64, 'base64');
}

/**
 * libqp.decode (what libqp's Decoder runs on the whole body read as UTF-8), with its first step
 * `/[\t ]+$/gm` → '' (quadratic on a long run of blanks) written as a linear expression: a run is anchored on
 * the character before it, so each run is tried from one position only.
 */
export function qpDecode(input: string): Buffer {
  const str = input
    // blanks at the end of a line (before \n, \r, \u2028, \u2029 or the end)
    .replace(/(^|[^\t ])[\t ]+(?=[\n\r\u2028\u2029]|$)/g, '$1')
    // soft line breaks
    .replace(/=(?:\r?\n|$)/g, '');
  const out = Buffer.allocUnsafe(str.length);
  let length = 0;
  for (let i = 0, len = str.length; i < len; i++) {
    const code = str.charCodeAt(i);
    if (code === 0x3d && i + 2 < len) {
      const high = hexValue(str.charCodeAt(i + 1));
      const low = high < 0 ? -1 : hexValue(str.charCodeAt(i + 2));
      if (low >= 0) {
        out[length++] = high * 16 + low;
        i += 2;
        continue;
      }
    }
    // a typed array keeps the low byte, as libqp's Buffer assignment does
    out[length++] = code & 0xff;
  }
  return out.subarray(0, length);
}

/**
 * {@link qpDecode} of an ASCII body in one pass over its bytes, or `undefined` for a body with an `=` that is
 * neither `=XX` nor a soft line break (the caller then runs {@link qpDecode}). On such a body the two agree: a
 * UTF-8 string of ASCII bytes has one character per byte; blanks before a line break (CR or LF) or the end are
 * dropped; an `=` followed by blanks then CRLF, LF or the end is a soft line break once those blanks are gone; and
 * an `=XX` of the body is one of the string once both replacements ran, where the decoding loop meets it as such.
 */
export function qpDecodeAscii(body: Buffer): Buffer | undefined {
  const length = body.length;
  const out = Buffer.allocUnsafe(length);
  let size = 0;
  for (let index = 0; index < length; index++) {
    const byte = body[index]!;
    if (byte === 0x3d) {
      if (index + 2 < length) {
        const high = hexValue(body[index + 1]!);
        const low = high < 0 ? -1 : hexValue(body[index + 2]!);
        if (low >= 0) {
          out[size++] = high * 16 + low;
          index += 2;
          continue;
        }
      }
      let next = index + 1;
      while (next < length && (body[next] === 0x20 || body[next] === 0x09)) next++;
      if (next === length) break;
      if (body[next] === 0x0a) {
        index = next;
        continue;
      }
      if (body[next] === 0x0d && body[next + 1] === 0x0a) {
        index = next + 1;
        continue;
      }
      return undefined;
    }
    if (byte === 0x20 || byte === 0x09) {
      // a run of blanks: dropped when a line break or the end follows it
      let end = index + 1;
      while (end < length && (body[end] === 0x20 || body[end] === 0x09)) end++;
      if (end < length && body[end] !== 0x0a && body[end] !== 0x0d) {
        for (; index < end; index++) out[size++] = body[index]!;
      }
      index = end - 1;
      continue;
    }
    out[size++] = byte;
  }
  return out.subarray(0, size);
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  return -1;
}
