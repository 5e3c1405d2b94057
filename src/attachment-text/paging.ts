/**
 * @module attachment-text/paging
 * Pages of a text by tokens, and the cursor that continues one. Tokens are counted with `gpt-tokenizer`'s
 * `o200k_base` encoding through the project's one tokenizer (src/tokens/), special-token strings counted as text.
 *
 * A page is the longest start of the rest within the budget, cut on a token boundary, pulled back to the end of a
 * line when one lies in the page's last quarter (a table row stays whole); concatenated pages are the whole text.
 * Only a prefix of the rest is encoded (16 characters per token of budget, more only when that prefix holds too
 * few tokens), so a page costs its budget, not the document.
 */

import {
  CHARACTERS_PER_TOKEN_LOOKED_AT as CHARACTERS_PER_TOKEN,
  ENCODE_OPTIONS,
  type Tokenizer,
} from '../tokens/index.js';

/** Characters of the rest sent to the worker for a page of `maxTokens`: enough for all but pathological text. */
export function pageWindow(maxTokens: number): number {
  return Math.max(1, Math.floor(maxTokens)) * CHARACTERS_PER_TOKEN * 4 + 4096;
}

/**
 * The page at the start of `rest`: its length in characters (at least one code point) and its tokens. `more`: the
 * text goes on after `rest` (a window of it was sent); when the window holds too few tokens to be sure of the cut,
 * the answer is `undefined` and the caller sends the whole rest.
 */
export function cutPage(
  tokenizer: Tokenizer,
  rest: string,
  maxTokens: number,
  more = false,
): { length: number; tokens: number } | undefined {
  const budget = Math.max(1, Math.floor(maxTokens));
  let probe = budget * CHARACTERS_PER_TOKEN + 64;
  for (;;) {
    const slice = rest.length <= probe ? rest : rest.slice(0, probe);
    const within = tokenizer.isWithinTokenLimit(slice, budget, ENCODE_OPTIONS);
    if (within !== false) {
      if (slice.length === rest.length) return more ? undefined : { length: rest.length, tokens: within };
      // The prefix holds too few tokens to be sure of the cut (long tokens: runs of spaces, long words): more.
      probe *= 4;
      continue;
    }
    const tokens = tokenizer.encode(slice, ENCODE_OPTIONS);
    let kept = tokenizer.decode(tokens.slice(0, budget));
    // A token boundary inside a character decodes to a replacement character: drop back to a real prefix.
    while (kept.length > 0 && !slice.startsWith(kept)) kept = kept.slice(0, -1);
    let length = kept.length;
    const newline = kept.lastIndexOf('\n');
    if (newline >= 0 && newline + 1 >= length * 0.75 && newline + 1 < length) {
      const tokensToLine = tokenizer.countTokens(kept.slice(0, newline + 1), ENCODE_OPTIONS);
      if (tokensToLine <= budget) return { length: newline + 1, tokens: tokensToLine };
    }
    if (length === 0) length = (rest.codePointAt(0) ?? 0) > 0xffff ? 2 : 1;
    return { length, tokens: tokenizer.countTokens(rest.slice(0, length), ENCODE_OPTIONS) };
  }
}

/**
 * A cursor: the version, a digest of what is paged (the attachment's hash and the options that shape its text),
 * and the offset where the next page starts, base64url-encoded. Opaque to callers.
 */
export function encodeCursor(digest: string, offset: number): string {
  return Buffer.from(`v1:${digest}:${offset}`, 'utf8').toString('base64url');
}

/** The offset of a cursor made by {@link encodeCursor} for this `digest`, or undefined when it is not one. */
export function decodeCursor(cursor: string, digest: string): number | undefined {
  if (cursor.length > 200) return undefined;
  const [version, made, offset] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  if (version !== 'v1' || made !== digest || !offset || !/^\d{1,10}$/.test(offset)) return undefined;
  return Number(offset);
}
