/**
 * @module reading/html-tree
 * Reads HTML mail into a small tree of what a person sees, in one pass over htmlparser2's tokenizer (its `Parser`
 * keeps open elements with `Array.unshift` and `indexOf`, quadratic on deep unclosed markup: 300 KB of `<div>` took
 * 3.5 s; here the open elements are a stack with O(1) scope checks).
 *
 * While reading it decides what is hidden (see reading/css) and leaves it out of the tree, counting its characters;
 * styles, scripts, the head, templates, noscript and SVG are left out without counting. Elements nested deeper than
 * `MAX_TREE_DEPTH` (./html-elements.ts) still count for hiding and colours but add no node (their content joins the
 * deepest node).
 * Only elements that shape the reading get a node (blocks, lists, tables, links, emphasis, images); the others
 * (`span`, `font`, unknown tags) pass their content to their parent, unless they change the text colour.
 */
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { DEFAULT_BACKGROUND, DEFAULT_COLOUR, emptyStyleRules } from './css.js';
import { MAX_ATTRIBUTE } from './html-elements.js';
import { closeElement, flushText, keepHidden, openElement, popTo, top } from './html-tree-build.js';
import { collapse, type ElementNode, type Frame, type HtmlTree, type TreeBuilder } from './html-tree-state.js';

export type { ElementNode, HtmlTree, TreeNode } from './html-tree-state.js';

/** Reads HTML into the tree of what a person sees (see the module comment). */
export function readHtml(html: string, maxInputChars: number): HtmlTree {
  const truncated = html.length > maxInputChars;
  const source = truncated ? html.slice(0, maxInputChars) : html;
  const root: ElementNode = { name: 'root', children: [], textLength: 0, containsTable: false };
  const rootFrame: Frame = {
    name: '#root',
    node: root,
    ownNode: true,
    depth: 0,
    hidden: false,
    skip: false,
    removedFrom: -1,
    colour: DEFAULT_COLOUR,
    background: DEFAULT_BACKGROUND,
    pre: false,
    foreign: false,
    li: -1,
    list: -1,
    dd: -1,
    dl: -1,
    tr: -1,
    cell: -1,
    table: -1,
    section: -1,
    p: -1,
    pScope: -1,
    a: -1,
    head: -1,
  };
  const b: TreeBuilder = {
    source,
    hidden: { css: 0, sameColour: 0, comments: 0, invisibleCharacters: 0 },
    removedRanges: [],
    rules: emptyStyleRules(),
    styleRead: 0,
    root,
    stack: [rootFrame],
    openCount: new Map(),
    openAt: new Map(),
    tagName: '',
    tagStart: 0,
    attributes: {},
    attributeName: '',
    attributeValue: '',
    textPieces: [],
    textStart: -1,
    textEnd: 0,
    tokenEnd: 0,
    styleText: null,
    hiddenPieces: [],
    hiddenKept: 0,
  };

  const callbacks: TokenizerCallbacks = {
    onattribdata(start, endIndex) {
      if (b.attributeValue.length < MAX_ATTRIBUTE) b.attributeValue += b.source.slice(start, endIndex);
    },
    onattribentity(codepoint) {
      if (b.attributeValue.length < MAX_ATTRIBUTE) b.attributeValue += String.fromCodePoint(codepoint);
    },
    onattribend(_quote, _endIndex) {
      if (!(b.attributeName in b.attributes)) b.attributes[b.attributeName] = b.attributeValue;
      b.attributeValue = '';
    },
    onattribname(start, endIndex) {
      b.attributeName = b.source.slice(start, Math.min(endIndex, start + 64)).toLowerCase();
    },
    oncdata(start, endIndex, offset) {
      // CDATA in HTML is a bogus comment.
      callbacks.oncomment(start, endIndex, offset);
    },
    onclosetag(start, endIndex) {
      flushText(b);
      b.textEnd = b.tokenEnd = endIndex + 1;
      closeElement(b, b.source.slice(start, endIndex).toLowerCase(), endIndex + 1);
    },
    oncomment(start, endIndex, offset) {
      flushText(b);
      const frame = top(b);
      b.tokenEnd = endIndex + 1;
      if (frame.hidden) return;
      b.removedRanges.push([Math.max(0, start - 4), endIndex + 1]);
      if (frame.skip) return;
      const content = b.source.slice(start, endIndex - offset);
      // Outlook's conditional comments repeat what the body shows (for Outlook): removed, not counted as b.hidden.
      if (
        /^\s*\[if\b|<!\[endif\]\s*$|^\s*<!\[endif\]/i.test(content.slice(0, 16)) ||
        content.trimEnd().endsWith('<![endif]')
      )
        return;
      const comment = collapse(content).trim();
      b.hidden.comments += comment.length;
      keepHidden(b, comment);
    },
    ondeclaration(_start, endIndex) {
      flushText(b);
      b.tokenEnd = endIndex + 1;
    },
    onend() {
      flushText(b);
      popTo(b, 1, b.source.length);
    },
    onopentagend(endIndex) {
      b.textEnd = b.tokenEnd = endIndex + 1;
      openElement(b, b.tagName, false);
    },
    onopentagname(start, endIndex) {
      flushText(b);
      b.tagStart = Math.max(0, start - 1);
      b.tagName = b.source.slice(start, endIndex).toLowerCase();
      b.attributes = {};
    },
    onprocessinginstruction(_start, endIndex) {
      flushText(b);
      b.tokenEnd = endIndex + 1;
    },
    onselfclosingtag(endIndex) {
      b.textEnd = b.tokenEnd = endIndex + 1;
      openElement(b, b.tagName, true);
    },
    ontext(start, endIndex) {
      if (b.textStart < 0) b.textStart = start;
      b.textEnd = endIndex;
      b.textPieces.push(b.source.slice(start, endIndex));
    },
    ontextentity(codepoint, endIndex) {
      if (b.textStart < 0) b.textStart = b.tokenEnd;
      b.textEnd = endIndex;
      b.textPieces.push(String.fromCodePoint(codepoint));
    },
  };
  const tokenizer = new Tokenizer({ decodeEntities: true }, callbacks);
  tokenizer.write(b.source);
  tokenizer.end();
  return {
    root,
    hidden: b.hidden,
    removedRanges: b.removedRanges,
    hiddenText: b.hiddenPieces.join('\n'),
    truncated,
  };
}
