/**
 * @module reading/html-tree
 * Reads HTML mail into a small tree of what a person sees, in one pass over htmlparser2's tokenizer (its `Parser`
 * keeps open elements with `Array.unshift` and `indexOf`, quadratic on deep unclosed markup: 300 KB of `<div>` took
 * 3.5 s; here the open elements are a stack with O(1) scope checks).
 *
 * While reading it decides what is hidden (see reading/css) and leaves it out of the tree, counting its characters;
 * styles, scripts, the head, templates, noscript and SVG are left out without counting. Elements nested deeper than
 * {@link MAX_TREE_DEPTH} still count for hiding and colours but add no node (their content joins the deepest node).
 * Only elements that shape the reading get a node (blocks, lists, tables, links, emphasis, images); the others
 * (`span`, `font`, unknown tags) pass their content to their parent, unless they change the text colour.
 */
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import type { HiddenTextCounts } from './contracts.js';
import {
  DEFAULT_BACKGROUND,
  DEFAULT_COLOUR,
  addStyleRules,
  declarationsFor,
  declaredBackground,
  declaredColour,
  emptyStyleRules,
  hides,
  lengthInPx,
  parseColour,
  sameColour,
  transparent,
  type Colour,
  type Declarations,
  type StyleRules,
} from './css.js';
import { removeInvisibleCharacters } from './invisible.js';

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

/** Hidden text kept at most (it is counted whole): enough for any instruction, bounded for the scan that reads it. */
export const MAX_HIDDEN_TEXT = 16 * 1024;

/** Nodes nest at most this deep; deeper elements still count for hiding but add no node. */
export const MAX_TREE_DEPTH = 96;
/** At most this many characters of one attribute value are kept. */
const MAX_ATTRIBUTE = 16 * 1024;
/** At most this many characters of `<style>` are read, in all. */
const MAX_STYLE = 256 * 1024;

/** Elements that never hold anything to read. */
const SKIPPED = new Set([
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
const CUT_FROM_HTML = new Set(['script', 'noscript', 'template', 'iframe', 'object', 'embed', 'applet']);

/** The colour browsers give a link that sets none (it does not inherit its parent's). */
const LINK_COLOUR: Colour = { r: 0, g: 0, b: 238, a: 1 };

/** Elements with no content and no end tag. */
const VOID = new Set([
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
const KEPT = new Set([
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
const CLOSES_P = new Set([
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
const HEAD_CONTENT = new Set(['meta', 'link', 'title', 'style', 'script', 'base', 'noscript', 'template', 'xml']);

/** The elements of a table's structure: their close tags close what is open inside them. */
const TABLE_PARTS = new Set(['table', 'thead', 'tbody', 'tfoot', 'tr', 'td', 'th', 'caption']);

/** Elements inside which SVG or MathML markup is read (self-closing tags close there). */
const FOREIGN = new Set(['svg', 'math']);

/** An open element, with the nearest open elements that decide implied end tags (stack indexes, -1: none). */
interface Frame {
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

/** Reads HTML into the tree of what a person sees (see the module comment). */
export function readHtml(html: string, maxInputChars: number): HtmlTree {
  const truncated = html.length > maxInputChars;
  const source = truncated ? html.slice(0, maxInputChars) : html;
  const hidden: HiddenTextCounts = { css: 0, sameColour: 0, comments: 0, invisibleCharacters: 0 };
  const removedRanges: Array<[number, number]> = [];
  const hiddenPieces: string[] = [];
  let hiddenKept = 0;
  /** Keeps a piece of hidden text, within {@link MAX_HIDDEN_TEXT}. */
  function keepHidden(text: string): void {
    if (hiddenKept >= MAX_HIDDEN_TEXT) return;
    const piece = text.trim().slice(0, MAX_HIDDEN_TEXT - hiddenKept);
    if (piece.length === 0) return;
    hiddenPieces.push(piece);
    hiddenKept += piece.length + 1;
  }
  const rules: StyleRules = emptyStyleRules();
  let styleRead = 0;

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
  const stack: Frame[] = [rootFrame];
  /** How many elements of each name are open: a close tag of a name with none open is ignored in O(1). */
  const openCount = new Map<string, number>();
  /** The stack indexes of the open elements of each name, innermost last. */
  const openAt = new Map<string, number[]>();

  // The tag being read.
  let tagName = '';
  let tagStart = 0;
  let attributes: Record<string, string> = {};
  let attributeName = '';
  let attributeValue = '';
  // The text being read (pieces between entities), flushed before any tag.
  let textPieces: string[] = [];
  let textStart = -1;
  let textEnd = 0;
  /** Where the last tag, comment or declaration ended: where text after it starts. */
  let tokenEnd = 0;
  let styleText: string[] | null = null;

  const top = (): Frame => stack[stack.length - 1]!;

  function pop(end: number): void {
    const frame = stack.pop()!;
    const count = openCount.get(frame.name) ?? 1;
    openCount.set(frame.name, count - 1);
    openAt.get(frame.name)?.pop();
    if (frame.removedFrom >= 0) removedRanges.push([frame.removedFrom, end]);
    if (frame.name === 'style' && styleText !== null) {
      const css = styleText.join('');
      styleText = null;
      if (styleRead < MAX_STYLE) {
        styleRead += css.length;
        addStyleRules(css, rules);
      }
    }
    if (frame.ownNode && frame.node !== null) {
      const parent = top().node;
      if (parent !== null && parent !== frame.node) {
        parent.textLength += frame.node.textLength;
        if (frame.node.name === 'table' || frame.node.containsTable) parent.containsTable = true;
      }
    }
  }

  /** Closes open elements down to (and including) the one at stack index `index`. */
  function popTo(index: number, end: number): void {
    while (stack.length > index && stack.length > 1) pop(end);
  }

  function countText(frame: Frame, text: string): void {
    if (frame.skip) return;
    const visible = text.trim().length;
    if (visible > 0) {
      hidden.css += visible;
      keepHidden(text);
    }
  }

  function flushText(): void {
    if (textPieces.length === 0) return;
    const raw = textPieces.length === 1 ? textPieces[0]! : textPieces.join('');
    textPieces = [];
    const frame = top();
    const start = textStart;
    textStart = -1;
    if (styleText !== null && frame.name === 'style') {
      styleText.push(raw);
      return;
    }
    if (frame.skip || frame.node === null) {
      if (frame.hidden) countText(frame, collapse(raw));
      return;
    }
    const cleaned = removeInvisibleCharacters(raw);
    hidden.invisibleCharacters += cleaned.removed;
    const text = frame.pre ? cleaned.text.replace(/\u00a0/g, ' ') : collapse(cleaned.text);
    if (text.length === 0) return;
    const visible = text.trim().length;
    if (visible > 0) {
      const background = frame.background;
      const unknownBackground =
        background === 'image' || (background === DEFAULT_BACKGROUND && rules.uncertainBackground);
      if (transparent(frame.colour) || (!unknownBackground && sameColour(frame.colour, background))) {
        hidden.sameColour += visible;
        keepHidden(text);
        removedRanges.push([start, textEnd]);
        return;
      }
    }
    appendText(frame.node, text);
  }

  function appendText(node: ElementNode, text: string): void {
    // Each text is a child of its own: concatenating them would make a rope that every later look at its last
    // character flattens again (quadratic when 100,000 texts land in one node below the depth bound).
    const children = node.children;
    const last = children[children.length - 1];
    const piece =
      typeof last === 'string' && last.charCodeAt(last.length - 1) === 0x20 && text.charCodeAt(0) === 0x20
        ? text.slice(1)
        : text;
    if (piece.length === 0) return;
    children.push(piece);
    node.textLength += piece.trim().length;
  }

  /** Implied end tags before an element named `name` opens (HTML's rules, for what mail uses). */
  function closeImplied(name: string): void {
    let frame = top();
    if (frame.head >= 0 && !HEAD_CONTENT.has(name)) {
      popTo(frame.head, tagStart);
      frame = top();
    }
    if (name === 'li' && frame.li > frame.list) popTo(frame.li, tagStart);
    else if ((name === 'dd' || name === 'dt') && frame.dd > frame.dl) popTo(frame.dd, tagStart);
    else if (name === 'tr' && frame.tr > frame.table) popTo(frame.tr, tagStart);
    else if ((name === 'td' || name === 'th') && frame.cell > frame.table) popTo(frame.cell, tagStart);
    else if ((name === 'thead' || name === 'tbody' || name === 'tfoot') && frame.section > frame.table) {
      popTo(frame.section, tagStart);
    } else if (name === 'a' && frame.a >= 0) popTo(frame.a, tagStart);
    frame = top();
    if (CLOSES_P.has(name) && frame.p > frame.pScope) popTo(frame.p, tagStart);
  }

  function openElement(name: string, selfClosing: boolean): void {
    const parentFrame = top();
    if (parentFrame.foreign && selfClosing) return;
    closeImplied(name);
    const parent = top();
    const attribute = (key: string) => attributes[key];
    const inherited = parent.skip || parent.hidden;
    let declarations: Declarations | undefined;
    if (!inherited) {
      declarations = declarationsFor(name, attribute('class'), attribute('id'), attribute('style'), rules);
    }
    const ownHidden =
      !inherited &&
      (attribute('hidden') !== undefined ||
        attribute('aria-hidden')?.trim().toLowerCase() === 'true' ||
        (name === 'input' && attribute('type')?.toLowerCase() === 'hidden') ||
        (declarations !== undefined && hides(declarations)));
    const ownSkip = !inherited && SKIPPED.has(name);

    if (VOID.has(name)) {
      voidElement(name, parent, ownHidden, declarations);
      return;
    }
    const hiddenNow = parent.hidden || ownHidden;
    const skipNow = parent.skip || ownSkip;
    let colour = parent.colour;
    let background = parent.background;
    let colourChanged = false;
    if (name === 'a') colour = LINK_COLOUR;
    if (!hiddenNow && !skipNow) {
      const fontColour = name === 'font' ? attribute('color') : undefined;
      const declared = (declarations && declaredColour(declarations)) ?? (fontColour && parseColour(fontColour));
      if (declared) {
        colourChanged = !sameColour(declared, parent.colour) || declared.a !== parent.colour.a;
        colour = declared;
      }
      const declaredBack = declarations && declaredBackground(declarations);
      const backgroundAttribute = attribute('background');
      const bgcolor = attribute('bgcolor');
      if (declaredBack !== undefined) background = declaredBack;
      else if (backgroundAttribute !== undefined && backgroundAttribute.trim().length > 0) background = 'image';
      else if (bgcolor !== undefined) {
        const parsed = parseColour(bgcolor);
        if (parsed && !transparent(parsed)) background = parsed;
      }
    }
    const index = stack.length;
    const depth = parent.depth + 1;
    let node = parent.node;
    let ownNode = false;
    if (!hiddenNow && !skipNow && node !== null && depth <= MAX_TREE_DEPTH && (KEPT.has(name) || colourChanged)) {
      const created: ElementNode = {
        name: KEPT.has(name) ? name : 'span',
        children: [],
        textLength: 0,
        containsTable: false,
      };
      describe(created, name, declarations);
      if (colourChanged) created.colour = colour;
      node.children.push(created);
      node = created;
      ownNode = true;
    }
    if (hiddenNow || skipNow) node = null;
    const frame: Frame = {
      name,
      node,
      ownNode,
      depth,
      hidden: hiddenNow,
      skip: skipNow,
      removedFrom: (ownHidden || (ownSkip && CUT_FROM_HTML.has(name))) && !inherited ? tagStart : -1,
      colour,
      background,
      pre: parent.pre || name === 'pre' || name === 'plaintext',
      foreign: parent.foreign || FOREIGN.has(name),
      li: name === 'li' ? index : parent.li,
      list: name === 'ul' || name === 'ol' || name === 'menu' ? index : parent.list,
      dd: name === 'dd' || name === 'dt' ? index : parent.dd,
      dl: name === 'dl' ? index : parent.dl,
      tr: name === 'tr' ? index : parent.tr,
      cell: name === 'td' || name === 'th' ? index : parent.cell,
      table: name === 'table' ? index : parent.table,
      section: name === 'thead' || name === 'tbody' || name === 'tfoot' ? index : parent.section,
      p: name === 'p' ? index : parent.p,
      pScope:
        name === 'table' || name === 'td' || name === 'th' || name === 'button' || name === 'caption'
          ? index
          : parent.pScope,
      a: name === 'a' ? index : parent.a,
      head: name === 'head' ? index : parent.head,
    };
    stack.push(frame);
    openCount.set(name, (openCount.get(name) ?? 0) + 1);
    let positions = openAt.get(name);
    if (positions === undefined) openAt.set(name, (positions = []));
    positions.push(index);
    if (name === 'style') styleText = [];
    if (selfClosing && frame.foreign) pop(tagStart);
  }

  /** The attributes a kept node needs. */
  function describe(node: ElementNode, name: string, declarations: Declarations | undefined): void {
    switch (name) {
      case 'a': {
        const href = attributes.href?.trim();
        if (href !== undefined && href.length > 0) node.href = href;
        break;
      }
      case 'ol': {
        const start = Number.parseInt(attributes.start ?? '', 10);
        if (Number.isFinite(start) && start >= 0 && start < 1e9) node.start = start;
        break;
      }
      case 'td':
      case 'th': {
        const span = Number.parseInt(attributes.colspan ?? '', 10);
        if (Number.isFinite(span) && span > 1) node.colspan = Math.min(span, 50);
        if (name === 'th') markHeaderCell();
        break;
      }
      case 'table': {
        const role = attributes.role?.trim().toLowerCase();
        if (role !== undefined) node.role = role;
        const border = Number.parseInt(attributes.border ?? '0', 10);
        const cssBorder = declarations?.get('border') ?? declarations?.get('border-collapse');
        if (
          (Number.isFinite(border) && border > 0) ||
          (cssBorder !== undefined && cssBorder !== 'none' && cssBorder !== '0')
        ) {
          node.bordered = true;
        }
        break;
      }
      case 'blockquote': {
        const type = attributes.type?.toLowerCase();
        const className = attributes.class?.toLowerCase() ?? '';
        if (type === 'cite' || className.includes('gmail_quote') || className.includes('yahoo_quoted')) {
          node.marker = 'quote';
        }
        break;
      }
      case 'div': {
        const id = attributes.id?.toLowerCase();
        const className = attributes.class?.toLowerCase() ?? '';
        if (id === 'divrplyfwdmsg' || id === 'appendonsend') node.marker = 'outlook-header';
        else if (
          className.includes('gmail_quote') ||
          className.includes('yahoo_quoted') ||
          className.includes('moz-cite-prefix')
        ) {
          node.marker = 'quote';
        } else if (/solid/.test(declarations?.get('border-top') ?? '')) node.marker = 'maybe-outlook-header';
        break;
      }
      default:
    }
  }

  function markHeaderCell(): void {
    const tableIndex = top().table;
    if (tableIndex < 0) return;
    const tableNode = stack[tableIndex]!.node;
    if (tableNode !== null && tableNode.name === 'table') tableNode.hasHeaderCell = true;
  }

  function voidElement(name: string, parent: Frame, ownHidden: boolean, declarations: Declarations | undefined): void {
    if (parent.skip) return;
    const node = parent.node;
    if (name === 'img') {
      const alt = removeInvisibleCharacters(collapse(attributes.alt ?? '')).text.trim();
      if (parent.hidden || ownHidden || zeroSize(declarations)) {
        if (!parent.hidden) {
          hidden.css += alt.length;
          keepHidden(alt);
          if (alt.length > 0) removedRanges.push([tagStart, textEnd]);
        }
        return;
      }
      if (node === null || alt.length === 0) return;
      const transparentText = transparent(parent.colour);
      if (transparentText) return;
      node.children.push({ name: 'img', children: [], textLength: alt.length, containsTable: false, alt });
      node.textLength += alt.length;
      return;
    }
    if (node === null || parent.hidden || ownHidden) return;
    if (name === 'br' || name === 'hr') node.children.push({ name, children: [], textLength: 0, containsTable: false });
  }

  /** Whether an image is drawn at no size or at the 1×1 (or 2×2) of a tracking pixel. */
  function zeroSize(declarations: Declarations | undefined): boolean {
    const width = lengthInPx(attributes.width) ?? lengthInPx(declarations?.get('width'));
    const height = lengthInPx(attributes.height) ?? lengthInPx(declarations?.get('height'));
    return (width !== undefined && width <= 2) || (height !== undefined && height <= 2);
  }

  function closeElement(name: string, end: number): void {
    if (name === 'br') {
      openElementNamed('br');
      return;
    }
    if (name === 'p' && (openCount.get('p') ?? 0) === 0) {
      openElementNamed('br');
      return;
    }
    if ((openCount.get(name) ?? 0) === 0) return;
    const index = openAt.get(name)?.at(-1);
    if (index === undefined) return;
    const frame = top();
    // A close tag does not reach out of the table cell (or table) it is in, as a browser reads it.
    const isTablePart = TABLE_PARTS.has(name);
    if (!isTablePart && index < Math.max(frame.cell, frame.table)) return;
    popTo(index, end);
  }

  function openElementNamed(name: string): void {
    attributes = {};
    openElement(name, false);
  }

  const callbacks: TokenizerCallbacks = {
    onattribdata(start, endIndex) {
      if (attributeValue.length < MAX_ATTRIBUTE) attributeValue += source.slice(start, endIndex);
    },
    onattribentity(codepoint) {
      if (attributeValue.length < MAX_ATTRIBUTE) attributeValue += String.fromCodePoint(codepoint);
    },
    onattribend(_quote, _endIndex) {
      if (!(attributeName in attributes)) attributes[attributeName] = attributeValue;
      attributeValue = '';
    },
    onattribname(start, endIndex) {
      attributeName = source.slice(start, Math.min(endIndex, start + 64)).toLowerCase();
    },
    oncdata(start, endIndex, offset) {
      // CDATA in HTML is a bogus comment.
      callbacks.oncomment(start, endIndex, offset);
    },
    onclosetag(start, endIndex) {
      flushText();
      textEnd = tokenEnd = endIndex + 1;
      closeElement(source.slice(start, endIndex).toLowerCase(), endIndex + 1);
    },
    oncomment(start, endIndex, offset) {
      flushText();
      const frame = top();
      tokenEnd = endIndex + 1;
      if (frame.hidden) return;
      removedRanges.push([Math.max(0, start - 4), endIndex + 1]);
      if (frame.skip) return;
      const content = source.slice(start, endIndex - offset);
      // Outlook's conditional comments repeat what the body shows (for Outlook): removed, not counted as hidden.
      if (
        /^\s*\[if\b|<!\[endif\]\s*$|^\s*<!\[endif\]/i.test(content.slice(0, 16)) ||
        content.trimEnd().endsWith('<![endif]')
      )
        return;
      const comment = collapse(content).trim();
      hidden.comments += comment.length;
      keepHidden(comment);
    },
    ondeclaration(_start, endIndex) {
      flushText();
      tokenEnd = endIndex + 1;
    },
    onend() {
      flushText();
      popTo(1, source.length);
    },
    onopentagend(endIndex) {
      textEnd = tokenEnd = endIndex + 1;
      openElement(tagName, false);
    },
    onopentagname(start, endIndex) {
      flushText();
      tagStart = Math.max(0, start - 1);
      tagName = source.slice(start, endIndex).toLowerCase();
      attributes = {};
    },
    onprocessinginstruction(_start, endIndex) {
      flushText();
      tokenEnd = endIndex + 1;
    },
    onselfclosingtag(endIndex) {
      textEnd = tokenEnd = endIndex + 1;
      openElement(tagName, true);
    },
    ontext(start, endIndex) {
      if (textStart < 0) textStart = start;
      textEnd = endIndex;
      textPieces.push(source.slice(start, endIndex));
    },
    ontextentity(codepoint, endIndex) {
      if (textStart < 0) textStart = tokenEnd;
      textEnd = endIndex;
      textPieces.push(String.fromCodePoint(codepoint));
    },
  };
  const tokenizer = new Tokenizer({ decodeEntities: true }, callbacks);
  tokenizer.write(source);
  tokenizer.end();
  return { root, hidden, removedRanges, hiddenText: hiddenPieces.join('\n'), truncated };
}

/** Collapses runs of white space (no-break spaces included) to one space. */
function collapse(text: string): string {
  return text.replace(/[\t\n\f\r \u00a0]+/g, ' ');
}
