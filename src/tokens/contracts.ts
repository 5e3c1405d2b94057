/**
 * @module tokens/contracts
 * The tokenizer's functions as the project uses them (gpt-tokenizer's encoding module).
 */

/** gpt-tokenizer's encoding functions. */
export interface Tokenizer {
  encode(text: string, options?: { disallowedSpecial?: Set<string> }): number[];
  decode(tokens: Iterable<number>): string;
  isWithinTokenLimit(text: string, limit: number, options?: { disallowedSpecial?: Set<string> }): false | number;
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
}
