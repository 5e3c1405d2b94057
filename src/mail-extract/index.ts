/**
 * @module mail-extract
 * The front door of src/mail-extract/: the one-time codes and the links of a sign-up or sign-in mail, ranked, each
 * with where it was found (wait_for_message, issue 40). Pure functions, bounded for hostile mail.
 */
export type { Extracted, ExtractedCode, ExtractedLink, ExtractedWhere, ExtractInput } from './contracts.js';
export { MAX_CODES, extractCodes } from './codes.js';
export { MAX_LINKS, rankLinks } from './links.js';
export { MAX_BODY_CHARS, extractFromMail } from './extract.js';
