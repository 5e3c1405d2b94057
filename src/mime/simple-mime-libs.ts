/**
 * @module mail/simple-mime-libs
 * The libraries the fast-path parser (./simple-mime.ts) shares with mailparser, loaded from where mailparser loads
 * them, so both read mail alike.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/**
 * libmime (no type declarations of its own): a direct dependency pinned to the version mailparser pins, so it is the
 * one copy mailparser and mailsplit load too (test/src/mail/simple-mime.test.ts checks that).
 */
export const libmime = require('libmime') as {
  decodeHeader(line: string): { key: string; value: string };
  decodeWords(text: string): string;
  parseHeaderValue(text: string): { value: string | false; params: Record<string, string> };
  normalizeCharset(charset: string): string;
  decodeFlowed(text: string, delSp?: boolean): string;
};
/** libmime's charset decoding (iconv-lite for anything but UTF-8 / ASCII). */
export const libcharset = require('libmime/lib/charset.js') as { decode(bytes: Buffer, charset: string): string };
// mailparser 3.9.30 pins nodemailer 10.0.12 (its nested copy under node_modules/mailparser/node_modules), whose
// addressparser gives other results than the one of our own nodemailer (10.6: domain literals, comments in
// angle-addrs, whitespace around '@'...). Both helpers are therefore loaded from mailparser's own location, so
// this file always uses exactly the copies mailparser uses.
const requireFromMailparser = createRequire(require.resolve('mailparser'));
export const addressparser = requireFromMailparser('nodemailer/lib/addressparser') as (value: string) => AddressEntry[];
export const punycode = requireFromMailparser('punycode.js') as { toUnicode(domain: string): string };

/** An address as addressparser gives it (and mailparser's `value` lists hold): a mailbox, or a group of them. */
export interface AddressEntry {
  name: string;
  address?: string | undefined;
  group?: AddressEntry[] | undefined;
}
