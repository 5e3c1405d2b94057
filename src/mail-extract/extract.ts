/**
 * @module mail-extract/extract
 * Reads a mail for what a sign-up flow needs: its visible text (HTML through src/reading, hidden text removed) for
 * one-time codes, and its links. At most {@link MAX_BODY_CHARS} of the body are read. Pure.
 */
import { htmlToMarkdown, looksLikeHtml, type ReadLink } from '../reading/index.js';
import { extractCodes } from './codes.js';
import type { Extracted, ExtractInput } from './contracts.js';
import { rankLinks, urlsIn } from './links.js';

/** Characters of a body read, at most (hostile mail can be large; codes and links of sign-up mail come early). */
export const MAX_BODY_CHARS = 256 * 1024;
/** Characters of a subject read, at most. */
const MAX_SUBJECT_CHARS = 1_000;

/** The one-time codes and the links of a mail. Pure; linear in the (capped) body. */
export function extractFromMail({ subject, body }: ExtractInput): Extracted {
  const head = subject.slice(0, MAX_SUBJECT_CHARS);
  const capped = body.slice(0, MAX_BODY_CHARS);
  let text = capped;
  let htmlLinks: ReadLink[] = [];
  if (looksLikeHtml(capped)) {
    const read = htmlToMarkdown(capped, {
      flavour: 'text',
      images: 'drop',
      tables: 'flatten',
      maxInputChars: MAX_BODY_CHARS,
      maxChars: MAX_BODY_CHARS,
    });
    text = read.markdown;
    htmlLinks = read.links;
  }
  return {
    codes: extractCodes(head, text),
    links: rankLinks(htmlLinks, [...urlsIn(head, 'subject'), ...urlsIn(text, 'body')]),
  };
}
