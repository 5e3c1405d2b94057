/**
 * @module tokens
 * Front door of token counting (one tokenizer for the whole project: Smart Compose, agent reads, attachment pages).
 */
export type { Tokenizer } from './contracts.js';
export {
  CHARACTERS_PER_TOKEN_LOOKED_AT,
  countTokens,
  ENCODE_OPTIONS,
  loadTokenizer,
  TOKEN_ENCODING,
  truncateToTokens,
} from './tokens.js';
