/**
 * @module smart-compose/tokens
 * Token counts for Smart Compose, with a real tokenizer: `gpt-tokenizer`'s `o200k_base` encoding (OpenAI's GPT-4o
 * family), whose tables ship in the package (no download). It is loaded on first use, since the tables take about
 * half a second to load and most processes never compose. Other providers count their own tokens a little
 * differently; the prompt limit is this encoding's count, stated in the error.
 */

/** The encoding's name, quoted in messages about counts. */
export const TOKEN_ENCODING = 'o200k_base';

type Encoding = typeof import('gpt-tokenizer/encoding/o200k_base');

let loading: Promise<Encoding> | undefined;

/** The encoding, loaded once. */
function encoding(): Promise<Encoding> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base');
  return loading;
}

/**
 * Loads the encoding now. Loading holds the event loop for about half a second, once: the Smart Compose service
 * calls this when it is built with a model (at start-up), so that no request, and no SMTP session, waits for it.
 */
export async function loadTokenizer(): Promise<void> {
  await encoding();
}

/** The number of tokens of `text`. */
export async function countTokens(text: string): Promise<number> {
  return (await encoding()).countTokens(text);
}

/**
 * Characters looked at per token of a budget when cutting: tokens of this encoding average about four characters of
 * English; the margin covers long ones (runs of spaces, long words), and a prefix that still holds too few tokens is
 * never cut from (the whole text is encoded instead).
 */
const CHARACTERS_PER_TOKEN_LOOKED_AT = 16;

/**
 * The longest start of `text` within `budget` tokens, and whether anything was cut. The cut falls on a token
 * boundary; a character split by it (an emoji of several tokens) is dropped rather than left broken. Only a prefix
 * of a long text is encoded, so the cost follows the budget, not the text.
 */
export async function truncateToTokens(text: string, budget: number): Promise<{ text: string; truncated: boolean }> {
  const { encode, decode, isWithinTokenLimit } = await encoding();
  if (isWithinTokenLimit(text, budget) !== false) return { text, truncated: false };
  let tokens = encode(text.slice(0, Math.max(1, budget) * CHARACTERS_PER_TOKEN_LOOKED_AT));
  // The prefix's last token may be cut short by the slice: keep it only when the prefix is the whole text.
  if (tokens.length <= budget) tokens = encode(text);
  const kept = decode(tokens.slice(0, Math.max(0, budget))).replace(/\uFFFD+$/, '');
  return { text: kept, truncated: true };
}
