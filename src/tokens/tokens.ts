/**
 * @module tokens/tokens
 * Token counts with a real tokenizer: `gpt-tokenizer`'s `o200k_base` encoding (OpenAI's GPT-4o family), whose tables
 * ship in the package (no download). Smart Compose's prompt limit, the budgets of agent reads and the pages of
 * attachment text all count with it. It is loaded on first use (the tables take about half a second to load).
 * Other providers count their own tokens a little differently; limits quote this encoding's name.
 *
 * Text here comes from outside (mail, attachments), so special-token strings such as `<|endoftext|>` are counted as
 * the plain text they are (the library's default throws on them).
 */
import type { Tokenizer } from './contracts.js';

/** The encoding's name, quoted in messages about counts. */
export const TOKEN_ENCODING = 'o200k_base';

/** Special tokens are plain text in what is counted here. */
export const ENCODE_OPTIONS = { disallowedSpecial: new Set<string>() };

let loading: Promise<Tokenizer> | undefined;

/**
 * The encoding, loaded once per thread. Loading holds the event loop for about half a second: services that count
 * call it at start-up so that no request waits for it.
 */
export function loadTokenizer(): Promise<Tokenizer> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base');
  return loading;
}

/** The number of tokens of `text`. */
export async function countTokens(text: string): Promise<number> {
  return (await loadTokenizer()).countTokens(text, ENCODE_OPTIONS);
}

/**
 * Characters looked at per token of a budget when cutting: tokens of this encoding average about four characters of
 * English; the margin covers long ones (runs of spaces, long words), and a prefix that still holds too few tokens is
 * never cut from (the whole text is encoded instead).
 */
export const CHARACTERS_PER_TOKEN_LOOKED_AT = 16;

/**
 * The longest start of `text` within `budget` tokens, and whether anything was cut. The cut falls on a token
 * boundary; a character split by it (an emoji of several tokens) is dropped rather than left broken. Only a prefix
 * of a long text is encoded, so the cost follows the budget, not the text.
 */
export async function truncateToTokens(text: string, budget: number): Promise<{ text: string; truncated: boolean }> {
  const tokenizer = await loadTokenizer();
  if (tokenizer.isWithinTokenLimit(text, budget, ENCODE_OPTIONS) !== false) return { text, truncated: false };
  let tokens = tokenizer.encode(text.slice(0, Math.max(1, budget) * CHARACTERS_PER_TOKEN_LOOKED_AT), ENCODE_OPTIONS);
  // The prefix's last token may be cut short by the slice: keep it only when the prefix is the whole text.
  if (tokens.length <= budget) tokens = tokenizer.encode(text, ENCODE_OPTIONS);
  const kept = tokenizer.decode(tokens.slice(0, Math.max(0, budget))).replace(/\uFFFD+$/, '');
  return { text: kept, truncated: true };
}
