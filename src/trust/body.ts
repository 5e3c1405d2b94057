/**
 * @module trust/body
 * What the trust checks read of a body, from src/reading's HTML reader in one pass: the visible text (as a model reads
 * it, links written `text (url)`), the hidden text apart, how much was hidden, and the visible links.
 */
import { htmlToMarkdown, removeInvisibleCharacters } from '../reading/index.js';
import type { TrustInput } from './contracts.js';
import { MAX_INJECTION_SCAN, MAX_TRUST_HTML } from './contracts.js';

/** The parts of a {@link TrustInput} that come from the body. */
export type TrustBody = Required<Pick<TrustInput, 'text' | 'hiddenText' | 'hiddenTextRemoved'>> & {
  links: NonNullable<TrustInput['links']>;
};

/**
 * Reads an HTML body (or, with `text` only, a text/plain one) for the trust checks. Linear in the body, of which at most
 * {@link MAX_TRUST_HTML} characters are read; the text kept is bounded to what the injection scan reads
 * ({@link MAX_INJECTION_SCAN}).
 */
export function readTrustBody(html: string | null | undefined, text?: string | null): TrustBody {
  if (html) {
    const read = htmlToMarkdown(html, {
      flavour: 'text',
      maxChars: MAX_INJECTION_SCAN,
      maxInputChars: MAX_TRUST_HTML,
    });
    return {
      text: read.markdown,
      hiddenText: read.hiddenText,
      hiddenTextRemoved: read.hiddenTextRemoved,
      links: read.links,
    };
  }
  const plain = removeInvisibleCharacters((text ?? '').slice(0, MAX_INJECTION_SCAN));
  return { text: plain.text, hiddenText: '', hiddenTextRemoved: plain.removed, links: [] };
}
