/**
 * @module reading/html-tree-state
 * The tree ./html-tree.ts builds, and the state of one reading: the open elements (a stack with the nearest
 * elements that decide implied end tags), the tag and text being read, and what was found hidden.
 */
import type { HiddenTextCounts } from './contracts.js';
import type { Colour, StyleRules } from './css.js';

/** A node of the tree: an element, or a text (whitespace already collapsed, except inside `<pre>`). */
export type TreeNode = ElementNode | string;

/** An element kept in the tree. */
export interface ElementNode {
  name: string;
  children: TreeNode[];
  /** Characters of text inside it (its descendants' included). */
  textLength: number;
  /** Whether a `<table>` is inside it. */
  containsTable: boolean;
  href?: string;
  /** An image's alternative text. */
  alt?: string;
  /** `<ol start>`. */
  start?: number;
  colspan?: number;
  /** `role` of a table (presentation / none mark layout). */
  role?: string;
  /** Whether a table has a `<th>` cell (any depth of its own rows). */
  hasHeaderCell?: boolean;
  /** A table's `border` attribute or CSS border (data tables often have one). */
  bordered?: boolean;
  /** The text colour it sets, when it sets one different from its parent's. */
  colour?: Colour;
  /**
   * What marks a reply's quoted history: `quote` (a `<blockquote type=cite>`, Gmail's, Yahoo's or Thunderbird's quote
   * block), `outlook-header` (Outlook's `From: … Sent: …` block, after which the history follows unquoted),
   * `maybe-outlook-header` (a `<div>` with a top border, as Outlook draws above that header).
   */
  marker?: 'quote' | 'outlook-header' | 'maybe-outlook-header';
}

/** What readHtml returns. */
export interface HtmlTree {
  root: ElementNode;
  hidden: HiddenTextCounts;
  /** Source ranges [start, end) left out (hidden elements, comments, scripts): to cut them from the HTML itself. */
  removedRanges: Array<[number, number]>;
  /**
   * The hidden text itself (CSS-hidden, same-colour, comments), its pieces joined by newlines, at most
   * {@link MAX_HIDDEN_TEXT} characters: what the trust area scans apart for instructions nobody was shown.
   */
  hiddenText: string;
  /** True when the HTML was longer than the bound read. */
  truncated: boolean;
}

/** An open element, with the nearest open elements that decide implied end tags (stack indexes, -1: none). */
export interface Frame {
  name: string;
  /** Where its content goes: its own node, an ancestor's, or null (hidden or skipped content). */
  node: ElementNode | null;
  ownNode: boolean;
  depth: number;
  hidden: boolean;
  skip: boolean;
  /** Where it starts in the source, when it is the outermost hidden or skipped element. */
  removedFrom: number;
  colour: Colour;
  background: Colour | 'image';
  pre: boolean;
  foreign: boolean;
  li: number;
  list: number;
  dd: number;
  dl: number;
  tr: number;
  cell: number;
  table: number;
  section: number;
  p: number;
  pScope: number;
  a: number;
  head: number;
}

/** One reading of HTML: what ./html-tree-build.ts's functions share (they were one closure). */
export interface TreeBuilder {
  source: string;
  hidden: HiddenTextCounts;
  removedRanges: Array<[number, number]>;
  rules: StyleRules;
  /** Characters of `<style>` read so far (bounded). */
  styleRead: number;
  root: ElementNode;
  stack: Frame[];
  /** How many elements of each name are open: a close tag of a name with none open is ignored in O(1). */
  openCount: Map<string, number>;
  /** The stack indexes of the open elements of each name, innermost last. */
  openAt: Map<string, number[]>;
  // The tag being read.
  tagName: string;
  tagStart: number;
  attributes: Record<string, string>;
  attributeName: string;
  attributeValue: string;
  // The text being read (pieces between entities), flushed before any tag.
  textPieces: string[];
  textStart: number;
  textEnd: number;
  /** Where the last tag, comment or declaration ended: where text after it starts. */
  tokenEnd: number;
  styleText: string[] | null;
  /** Pieces of hidden text kept (see {@link HtmlTree.hiddenText}), and their characters with separators. */
  hiddenPieces: string[];
  hiddenKept: number;
}

/** Collapses runs of white space (no-break spaces included) to one space. */
export function collapse(text: string): string {
  return text.replace(/[\t\n\f\r \u00a0]+/g, ' ');
}
