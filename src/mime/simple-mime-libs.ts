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
export const libmime: {
  decodeHeader(line: string): { key: string; value: string };
  decodeWords(text: string): string;
  parseHeaderValue(text: string): { value: string | false; params: Record<string, string> };
  normalizeCharset(charset: string): string;
  decodeFlowed(text: string, delSp?: boolean): string;
} = require('libmime');
/** libmime's charset decoding (iconv-lite for anything but UTF-8 / ASCII). */
export const libcharset: { decode(bytes: Buffer, charset: string): string } = require('libmime/lib/charset.js');
// mailparser 3.9.30 pins nodemailer 10.0.12 (its nested copy under node_modules/mailparser/node_modules), whose
// addressparser gives other results than the one of our own nodemailer (10.6: domain literals, comments in
// angle-addrs, whitespace around '@'...). Both helpers are therefore loaded from mailparser's own location, so
// this file always uses exactly the copies mailparser uses.
const requireFromMailparser = createRequire(require.resolve('mailparser'));
export const addressparser: (value: string) => any[] = requireFromMailparser('nodemailer/lib/addressparser');
export const punycode: { toUnicode(domain: string): string } = requireFromMailparser('punycode.js');
