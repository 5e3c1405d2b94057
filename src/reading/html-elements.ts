/**
 * @module reading/html-elements
 * The element tables of ./html-tree.ts: which elements are skipped, void, kept as nodes, close a paragraph, belong
 * to the head or to a table's structure, and the bounds of what is read.
 */
import type { Colour } from './css.js';

/** Hidden text kept at most (it is counted whole): enough for any instruction, bounded for the scan that reads it. */
export const MAX_HIDDEN_TEXT = 16 * 1024;

/** Nodes nest at most this deep; deeper elements still count for hiding but add no node. */
export const MAX_TREE_DEPTH = 96;
/** At most this many characters of one attribute value are kept. */
export const MAX_ATTRIBUTE = 16 * 1024;
/** At most this many characters of `<style>` are read, in all. */
export const MAX_STYLE = 256 * 1024;

/** Elements that never hold anything to read. */
export const SKIPPED = new Set([
  'style',
  'script',
  'head',
  'template',
  'noscript',
  'svg',
  'math',
  'title',
  'iframe',
  'object',
  'embed',
  'applet',
  'canvas',
  'audio',
  'video',
  'select',
  'textarea',
  'xml',
  'map',
  'frameset',
  'noframes',
]);

/** Skipped elements also cut from the HTML returned as HTML (the rest of what is skipped is presentation). */
export const CUT_FROM_HTML = new Set(['script', 'noscript', 'template', 'iframe', 'object', 'embed', 'applet']);

/** The colour browsers give a link that sets none (it does not inherit its parent's). */
export const LINK_COLOUR: Colour = { r: 0, g: 0, b: 238, a: 1 };

/** Elements with no content and no end tag. */
export const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
  'keygen',
]);

/** Elements that get a node (the rest pass their content to their parent). */
export const KEPT = new Set([
  'a',
  'address',
  'article',
  'aside',
  'b',
  'blockquote',
  'body',
  'caption',
  'center',
  'code',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'em',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'i',
  'kbd',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'strong',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'tt',
  'ul',
  'menu',
  'samp',
]);

/** Elements whose start closes an open `<p>` (HTML's rule, for the blocks mail uses). */
export const CLOSES_P = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'center',
  'details',
  'div',
  'dl',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'main',
  'menu',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'ul',
]);

/** Elements that may stay open inside `<head>`; any other start tag ends the head, as a browser reads it. */
export const HEAD_CONTENT = new Set([
  'meta',
  'link',
  'title',
  'style',
  'script',
  'base',
  'noscript',
  'template',
  'xml',
]);

/** The elements of a table's structure: their close tags close what is open inside them. */
export const TABLE_PARTS = new Set(['table', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th', 'caption']);

/** Elements inside which SVG or MathML markup is read (self-closing tags close there). */
export const FOREIGN = new Set(['svg', 'math']);
