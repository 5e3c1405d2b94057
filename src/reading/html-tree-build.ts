/**
 * @module reading/html-tree-build
 * The steps of ./html-tree.ts's one pass, as plain functions over its {@link TreeBuilder}: closing elements (with
 * HTML's implied end tags), text (hidden by colour or not), and opening elements (hidden by CSS or attributes,
 * colours, the attributes a kept node needs, images and line breaks).
 */
import {
  DEFAULT_BACKGROUND,
  declarationsFor,
  declaredBackground,
  declaredColour,
  addStyleRules,
  hides,
  lengthInPx,
  parseColour,
  sameColour,
  transparent,
  type Declarations,
} from './css.js';
import { removeInvisibleCharacters } from './invisible.js';
import {
  CLOSES_P,
  CUT_FROM_HTML,
  FOREIGN,
  HEAD_CONTENT,
  KEPT,
  LINK_COLOUR,
  MAX_HIDDEN_TEXT,
  MAX_STYLE,
  MAX_TREE_DEPTH,
  SKIPPED,
  TABLE_PARTS,
  VOID,
} from './html-elements.js';
import { collapse, type ElementNode, type Frame, type TreeBuilder } from './html-tree-state.js';

export const top = (b: TreeBuilder): Frame => b.stack[b.stack.length - 1]!;

function pop(b: TreeBuilder, end: number): void {
  const frame = b.stack.pop()!;
  const count = b.openCount.get(frame.name) ?? 1;
  b.openCount.set(frame.name, count - 1);
  b.openAt.get(frame.name)?.pop();
  if (frame.removedFrom >= 0) b.removedRanges.push([frame.removedFrom, end]);
  if (frame.name === 'style' && b.styleText !== null) {
    const css = b.styleText.join('');
    b.styleText = null;
    if (b.styleRead < MAX_STYLE) {
      b.styleRead += css.length;
      addStyleRules(css, b.rules);
    }
  }
  if (frame.ownNode && frame.node !== null) {
    const parent = top(b).node;
    if (parent !== null && parent !== frame.node) {
      parent.textLength += frame.node.textLength;
      if (frame.node.name === 'table' || frame.node.containsTable) parent.containsTable = true;
    }
  }
}

/** Closes open elements down to (and including) the one at b.stack index `index`. */
export function popTo(b: TreeBuilder, index: number, end: number): void {
  while (b.stack.length > index && b.stack.length > 1) pop(b, end);
}

/** Keeps a piece of hidden text, within {@link MAX_HIDDEN_TEXT}. */
export function keepHidden(b: TreeBuilder, text: string): void {
  if (b.hiddenKept >= MAX_HIDDEN_TEXT) return;
  const piece = text.trim().slice(0, MAX_HIDDEN_TEXT - b.hiddenKept);
  if (piece.length === 0) return;
  b.hiddenPieces.push(piece);
  b.hiddenKept += piece.length + 1;
}

function countText(b: TreeBuilder, frame: Frame, text: string): void {
  if (frame.skip) return;
  const visible = text.trim().length;
  if (visible > 0) {
    b.hidden.css += visible;
    keepHidden(b, text);
  }
}

export function flushText(b: TreeBuilder): void {
  if (b.textPieces.length === 0) return;
  const raw = b.textPieces.length === 1 ? b.textPieces[0]! : b.textPieces.join('');
  b.textPieces = [];
  const frame = top(b);
  const start = b.textStart;
  b.textStart = -1;
  if (b.styleText !== null && frame.name === 'style') {
    b.styleText.push(raw);
    return;
  }
  if (frame.skip || frame.node === null) {
    if (frame.hidden) countText(b, frame, collapse(raw));
    return;
  }
  const cleaned = removeInvisibleCharacters(raw);
  b.hidden.invisibleCharacters += cleaned.removed;
  const text = frame.pre ? cleaned.text.replace(/\u00a0/g, ' ') : collapse(cleaned.text);
  if (text.length === 0) return;
  const visible = text.trim().length;
  if (visible > 0) {
    const background = frame.background;
    const unknownBackground =
      background === 'image' || (background === DEFAULT_BACKGROUND && b.rules.uncertainBackground);
    if (transparent(frame.colour) || (!unknownBackground && sameColour(frame.colour, background))) {
      b.hidden.sameColour += visible;
      keepHidden(b, text);
      b.removedRanges.push([start, b.textEnd]);
      return;
    }
  }
  appendText(b, frame.node, text);
}

function appendText(b: TreeBuilder, node: ElementNode, text: string): void {
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
function closeImplied(b: TreeBuilder, name: string): void {
  let frame = top(b);
  if (frame.head >= 0 && !HEAD_CONTENT.has(name)) {
    popTo(b, frame.head, b.tagStart);
    frame = top(b);
  }
  if (name === 'li' && frame.li > frame.list) popTo(b, frame.li, b.tagStart);
  else if ((name === 'dd' || name === 'dt') && frame.dd > frame.dl) popTo(b, frame.dd, b.tagStart);
  else if (name === 'tr' && frame.tr > frame.table) popTo(b, frame.tr, b.tagStart);
  else if ((name === 'td' || name === 'th') && frame.cell > frame.table) popTo(b, frame.cell, b.tagStart);
  else if ((name === 'thead' || name === 'tbody' || name === 'tfoot') && frame.section > frame.table) {
    popTo(b, frame.section, b.tagStart);
  } else if (name === 'a' && frame.a >= 0) popTo(b, frame.a, b.tagStart);
  frame = top(b);
  if (CLOSES_P.has(name) && frame.p > frame.pScope) popTo(b, frame.p, b.tagStart);
}

export function openElement(b: TreeBuilder, name: string, selfClosing: boolean): void {
  const parentFrame = top(b);
  if (parentFrame.foreign && selfClosing) return;
  closeImplied(b, name);
  const parent = top(b);
  const attribute = (key: string) => b.attributes[key];
  const inherited = parent.skip || parent.hidden;
  let declarations: Declarations | undefined;
  if (!inherited) {
    declarations = declarationsFor(name, attribute('class'), attribute('id'), attribute('style'), b.rules);
  }
  const ownHidden =
    !inherited &&
    (attribute('hidden') !== undefined ||
      attribute('aria-hidden')?.trim().toLowerCase() === 'true' ||
      (name === 'input' && attribute('type')?.toLowerCase() === 'hidden') ||
      (declarations !== undefined && hides(declarations)));
  const ownSkip = !inherited && SKIPPED.has(name);

  if (VOID.has(name)) {
    voidElement(b, name, parent, ownHidden, declarations);
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
  const index = b.stack.length;
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
    describe(b, created, name, declarations);
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
    removedFrom: (ownHidden || (ownSkip && CUT_FROM_HTML.has(name))) && !inherited ? b.tagStart : -1,
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
  b.stack.push(frame);
  b.openCount.set(name, (b.openCount.get(name) ?? 0) + 1);
  let positions = b.openAt.get(name);
  if (positions === undefined) b.openAt.set(name, (positions = []));
  positions.push(index);
  if (name === 'style') b.styleText = [];
  if (selfClosing && frame.foreign) pop(b, b.tagStart);
}

/** The b.attributes a kept node needs. */
function describe(b: TreeBuilder, node: ElementNode, name: string, declarations: Declarations | undefined): void {
  switch (name) {
    case 'a': {
      const href = b.attributes.href?.trim();
      if (href !== undefined && href.length > 0) node.href = href;
      break;
    }
    case 'ol': {
      const start = Number.parseInt(b.attributes.start ?? '', 10);
      if (Number.isFinite(start) && start >= 0 && start < 1e9) node.start = start;
      break;
    }
    case 'td':
    case 'th': {
      const span = Number.parseInt(b.attributes.colspan ?? '', 10);
      if (Number.isFinite(span) && span > 1) node.colspan = Math.min(span, 50);
      if (name === 'th') markHeaderCell(b);
      break;
    }
    case 'table': {
      const role = b.attributes.role?.trim().toLowerCase();
      if (role !== undefined) node.role = role;
      const border = Number.parseInt(b.attributes.border ?? '0', 10);
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
      const type = b.attributes.type?.toLowerCase();
      const className = b.attributes.class?.toLowerCase() ?? '';
      if (type === 'cite' || className.includes('gmail_quote') || className.includes('yahoo_quoted')) {
        node.marker = 'quote';
      }
      break;
    }
    case 'div': {
      const id = b.attributes.id?.toLowerCase();
      const className = b.attributes.class?.toLowerCase() ?? '';
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

function markHeaderCell(b: TreeBuilder): void {
  const tableIndex = top(b).table;
  if (tableIndex < 0) return;
  const tableNode = b.stack[tableIndex]!.node;
  if (tableNode !== null && tableNode.name === 'table') tableNode.hasHeaderCell = true;
}

function voidElement(
  b: TreeBuilder,
  name: string,
  parent: Frame,
  ownHidden: boolean,
  declarations: Declarations | undefined,
): void {
  if (parent.skip) return;
  const node = parent.node;
  if (name === 'img') {
    const alt = removeInvisibleCharacters(collapse(b.attributes.alt ?? '')).text.trim();
    if (parent.hidden || ownHidden || zeroSize(b, declarations)) {
      if (!parent.hidden) {
        b.hidden.css += alt.length;
        keepHidden(b, alt);
        if (alt.length > 0) b.removedRanges.push([b.tagStart, b.textEnd]);
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
function zeroSize(b: TreeBuilder, declarations: Declarations | undefined): boolean {
  const width = lengthInPx(b.attributes.width) ?? lengthInPx(declarations?.get('width'));
  const height = lengthInPx(b.attributes.height) ?? lengthInPx(declarations?.get('height'));
  return (width !== undefined && width <= 2) || (height !== undefined && height <= 2);
}

export function closeElement(b: TreeBuilder, name: string, end: number): void {
  if (name === 'br') {
    openElementNamed(b, 'br');
    return;
  }
  if (name === 'p' && (b.openCount.get('p') ?? 0) === 0) {
    openElementNamed(b, 'br');
    return;
  }
  if ((b.openCount.get(name) ?? 0) === 0) return;
  const index = b.openAt.get(name)?.at(-1);
  if (index === undefined) return;
  const frame = top(b);
  // A close tag does not reach out of the table cell (or table) it is in, as a browser reads it.
  const isTablePart = TABLE_PARTS.has(name);
  if (!isTablePart && index < Math.max(frame.cell, frame.table)) return;
  popTo(b, index, end);
}

function openElementNamed(b: TreeBuilder, name: string): void {
  b.attributes = {};
  openElement(b, name, false);
}
