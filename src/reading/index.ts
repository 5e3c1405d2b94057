/**
 * @module reading
 * The front door of src/reading/: bodies as a model should read them. HTML mail becomes Markdown (or text) that keeps
 * every link with where it really leads, with hidden text removed and counted; quoted history, signatures and
 * disclaimers collapse to one line each while answers written between quoted lines are kept. Pure functions.
 */
export type {
  BodyFormat,
  BodySource,
  CollapsedText,
  CollapseMode,
  CollapseOptions,
  HiddenTextCounts,
  HtmlConversion,
  HtmlToMarkdownOptions,
  LinkOptions,
  ReadLink,
  RenderBodyOptions,
  RenderedBody,
} from './contracts.js';
export { DEFAULT_MAX_CHARS, DEFAULT_MAX_INPUT_CHARS, htmlToMarkdown, visibleHtml } from './html-to-markdown.js';
export { removeInvisibleCharacters } from './invisible.js';
export { resolveLink } from './links.js';
export { collapseQuotes } from './quotes.js';
export { looksLikeHtml, readPlainText, renderBody } from './render-body.js';
