/**
 * @module deliverability/verp
 * VERP return paths (pure): every outbound message of an application leaves with the envelope sender
 * `bounce+<token>@<sending domain>`, one per recipient, so a later delivery status notification, which goes back to
 * that address, names the exact message and recipient without being read.
 *
 * The token is `<outbound id>-<ordinal>-<mac>`, all lower-case base32, because mail systems may fold the case of a
 * local part (RFC 5321 says they should not; some do):
 * - the outbound id (`outbound_messages.id`) is already written in the service's lower-case base32 id alphabet;
 * - the ordinal is the recipient's position among the message's recipients in code-unit order of their lower-cased
 *   addresses ({@link recipientOrdinals}), in base 32 (`toString(32)`): the recipients of a queued message never
 *   change, so it names one for good without a stored column;
 * - the mac is the first {@link VERP_MAC_BYTES} bytes of the installation's HMAC (`signer.mac`, purpose
 *   {@link VERP_PURPOSE}) over the id and ordinal, in RFC 4648 base32, lower-cased (80 bits: beyond guessing).
 * A 26-character id and up to 1,024 recipients make a local part of 7 + 26 + 1 + 2 + 1 + 16 = 53 characters, under
 * the 64 of RFC 5321 4.5.3.1.1.
 */
import type { TokenSigner } from './signing.js';

/** The local part's prefix: a VERP address is `bounce+<token>@domain`. */
export const VERP_PREFIX = 'bounce+';
/** What the mac of a return path signs, besides the id and ordinal: no other token of the service is a return path. */
export const VERP_PURPOSE = 'verp-return-path';
/** Bytes of HMAC kept in a return path (16 base32 characters). */
export const VERP_MAC_BYTES = 10;
/** RFC 5321's limit on a local part. */
const MAX_LOCAL_PART = 64;
/** Ids that can stand in a token as they are: the service's id alphabet (and the `_` of test ids). */
const ID_PATTERN = /^[0-9a-z_]{1,40}$/;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** RFC 4648 base32 without padding, lower-cased. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/** Each recipient's ordinal: its index among the lower-cased addresses in code-unit order. */
export function recipientOrdinals(emails: readonly string[]): Map<string, number> {
  const sorted = [...new Set(emails.map((email) => email.toLowerCase()))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return new Map(sorted.map((email, index) => [email, index]));
}

function macOf(signer: TokenSigner, outboundId: string, ordinal: number): string {
  return base32(signer.mac(VERP_PURPOSE, `${outboundId}\0${ordinal}`, VERP_MAC_BYTES));
}

/**
 * The return path of one recipient of an outbound message, or undefined when the id cannot stand in a token (the
 * message then keeps its plain sender).
 */
export function returnPathFor(
  signer: TokenSigner,
  target: { outboundId: string; ordinal: number; domain: string },
): string | undefined {
  if (!ID_PATTERN.test(target.outboundId) || !Number.isInteger(target.ordinal) || target.ordinal < 0) return undefined;
  const local = `${VERP_PREFIX}${target.outboundId}-${target.ordinal.toString(32)}-${macOf(signer, target.outboundId, target.ordinal)}`;
  if (local.length > MAX_LOCAL_PART) return undefined;
  return `${local}@${target.domain.toLowerCase()}`;
}

/** What an address is, as a return path. */
export type ReturnPath =
  /** Not a VERP address (no `bounce+` prefix): an ordinary mailbox address. */
  | { kind: 'none' }
  /** A `bounce+` address whose token is malformed, altered or made with another key. */
  | { kind: 'forged'; domain: string }
  /** A return path this installation made. */
  | { kind: 'valid'; outboundId: string; ordinal: number; domain: string };

/** Reads an address as a return path (case-insensitive, as a mail system may have folded it). */
export function readReturnPath(signer: TokenSigner, address: string): ReturnPath {
  const normalized = address.trim().toLowerCase();
  const at = normalized.lastIndexOf('@');
  if (at <= 0) return { kind: 'none' };
  const local = normalized.slice(0, at);
  const domain = normalized.slice(at + 1);
  if (!local.startsWith(VERP_PREFIX)) return { kind: 'none' };
  const match = /^([0-9a-z_]{1,40})-([0-9a-v]{1,4})-([a-z2-7]{16})$/.exec(local.slice(VERP_PREFIX.length));
  if (!match || domain === '') return { kind: 'forged', domain };
  const [, outboundId, ordinalText, mac] = match as unknown as [string, string, string, string];
  const ordinal = parseInt(ordinalText, 32);
  // One spelling per token: a leading zero would name the same ordinal with another mac input.
  if (ordinal.toString(32) !== ordinalText) return { kind: 'forged', domain };
  const expected = Buffer.from(macOf(signer, outboundId, ordinal));
  if (!signer.same(Buffer.from(mac), expected)) return { kind: 'forged', domain };
  return { kind: 'valid', outboundId, ordinal, domain };
}
