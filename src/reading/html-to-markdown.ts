/**
 * @module reading/html-to-markdown
 * HTML mail as a model should read it: Markdown (or plain text) that keeps every link with where it really leads,
 * headings, lists, quotes, data tables as Markdown tables, images as their alt text, and nothing a person cannot
 * see. Layout tables (the grid most marketing mail is built of) are flattened to their text.
 *
 * Linear: the tree (reading/html-tree) is read in one pass and written in one walk; link texts, headings, emphasis
 * and table cells are written into small writers of their own and copied once. Bounded: the input to
 * `maxInputChars`, the output to `maxChars`.
 */
import type { HtmlConversion, HtmlToMarkdownOptions, ReadLink } from './contracts.js';
import { sameColour, type Colour } from './css.js';
import { readHtml, type ElementNode, type TreeNode } from './html-tree.js';
import { linkable, markdownDestination, resolveLink } from './links.js';
import { FROM_WORD } from './quotes.js';
import { TextWriter, type Segment } from './text-writer.js';

/** Output bound by default, in characters. */
export const DEFAULT_MAX_CHARS = 200_000;
/** Input bound by default, in characters of HTML. */
export const DEFAULT_MAX_INPUT_CHARS = 4 * 1024 * 1024;
/** At most this many links are listed (all are still written). */
const MAX_LINKS = 1000;
/** A link's text, a heading or a table cell is cut after this many characters. */
const MAX_INLINE = 1000;
/** Emphasis is written only around short runs (a whole bold paragraph is just a paragraph). */
const MAX_EMPHASIS = 80;
/** A data table shows this many rows at most, then says how many more there were. */
const MAX_TABLE_ROWS = 200;
/** A table wider than this is read as layout. */
const MAX_TABLE_COLUMNS = 12;
/** A data table's cell holds at most this much text. */
const MAX_DATA_CELL = 300;

/** Blocks separated by a blank line. */
const PARAGRAPH_BLOCKS = new Set(['p', 'pre', 'figure', 'dl', 'fieldset', 'details']);
/** Blocks on lines of their own. */
const LINE_BLOCKS = new Set([
  'div',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'nav',
  'aside',
  'address',
  'form',
  'summary',
  'figcaption',
  'caption',
  'dt',
  'dd',
  'body',
  'center',
  'tr',
  'td',
  'th',
  'thead',
  'tbody',
  'tfoot',
]);
/** Elements allowed inside a data table's cells (anything else makes the table layout). */
const INLINE_IN_CELL = new Set(['a', 'b', 'strong', 'i', 'em', 'span', 'img', 'br', 'code', 'kbd', 'tt', 'samp']);

/** A table's rows and cells, as read from its structure. */
interface TableShape {
  rows: Array<{ cells: ElementNode[]; header: boolean }>;
  caption: ElementNode | undefined;
  /** Content that is not in a cell (browsers show it before the table). */
  stray: TreeNode[];
}

class Renderer {
  readonly links: ReadLink[] = [];
  linksResolved = 0;
  quotesAttributed = false;
  private inLink = false;
  private inEmphasis = false;
  private inPre = false;
  private listDepth = 0;
  private colours: Colour[] = [];
  private outlookQuote: { segment: Segment | undefined; base: Colour | undefined } | undefined;
  private answerDepth = 0;
  private lastLink: { token: string; at: number } | undefined;

  constructor(private readonly options: HtmlToMarkdownOptions) {}

  private get markdown(): boolean {
    return (this.options.flavour ?? 'markdown') === 'markdown';
  }

  children(node: ElementNode, writer: TextWriter): void {
    for (const child of node.children) {
      if (writer.full) return;
      if (typeof child === 'string') {
        if (this.inPre) writer.preformatted(child);
        else writer.text(child);
      } else {
        this.element(child, node, writer);
      }
    }
  }

  private element(node: ElementNode, parent: ElementNode, writer: TextWriter): void {
    if (node.colour !== undefined) {
      this.colours.push(node.colour);
      this.coloured(node, parent, writer);
      this.colours.pop();
      return;
    }
    this.plain(node, parent, writer);
  }

  /** An element that sets a colour: inside Outlook's quoted history, a colour of its own marks an inline answer. */
  private coloured(node: ElementNode, parent: ElementNode, writer: TextWriter): void {
    const quote = this.outlookQuote;
    if (quote === undefined || node.name === 'a' || !answerColour(node.colour!, quote.base)) {
      this.plain(node, parent, writer);
      return;
    }
    this.answerDepth++;
    writer.setActive(quote.segment, false);
    this.plain(node, parent, writer);
    this.answerDepth--;
    if (this.answerDepth === 0) writer.setActive(quote.segment, true);
  }

  private plain(node: ElementNode, parent: ElementNode, writer: TextWriter): void {
    const name = node.name;
    switch (name) {
      case 'br':
        writer.lineBreak();
        return;
      case 'hr':
        writer.requestBreak(2);
        writer.token('---');
        writer.requestBreak(2);
        return;
      case 'img':
        if (this.options.images !== 'drop' && node.alt !== undefined) writer.text(` ${node.alt} `);
        return;
      case 'a':
        this.link(node, writer);
        return;
      case 'b':
      case 'strong':
        this.emphasis(node, parent, writer, '**');
        return;
      case 'i':
      case 'em':
        this.emphasis(node, parent, writer, '*');
        return;
      case 'code':
      case 'kbd':
      case 'tt':
      case 'samp':
        this.emphasis(node, parent, writer, '`');
        return;
      case 'h1':
      case 'h2':
      case 'h3':
      case 'h4':
      case 'h5':
      case 'h6':
        this.heading(node, writer, Number(name[1]));
        return;
      case 'ul':
      case 'ol':
      case 'menu':
        this.list(node, writer);
        return;
      case 'li':
        this.listItem(node, writer, '-');
        return;
      case 'blockquote':
        this.blockquote(node, writer);
        return;
      case 'table':
        this.table(node, writer);
        return;
      case 'pre': {
        writer.requestBreak(2);
        const outer = this.inPre;
        this.inPre = true;
        this.children(node, writer);
        this.inPre = outer;
        writer.requestBreak(2);
        return;
      }
      default:
    }
    if (node.marker === 'quote') this.quotesAttributed = true;
    const outlookHeader =
      node.marker === 'outlook-header' || (node.marker === 'maybe-outlook-header' && startsWithHeaderWord(node));
    if (PARAGRAPH_BLOCKS.has(name)) {
      writer.requestBreak(2);
      this.children(node, writer);
      writer.requestBreak(2);
    } else if (LINE_BLOCKS.has(name) || outlookHeader) {
      writer.requestBreak(1);
      this.children(node, writer);
      writer.requestBreak(1);
    } else {
      this.children(node, writer);
    }
    if (outlookHeader && this.outlookQuote === undefined && node.textLength > 0) {
      // What follows Outlook's header is the quoted message, unmarked: it is written as a quote from here on.
      this.quotesAttributed = true;
      this.outlookQuote = { segment: writer.addOuterQuote(), base: this.colours.at(-1) };
    }
  }

  /** Writes a node's content into a one-line writer of its own: a link's text, a heading, a cell. */
  private inline(node: ElementNode, max = MAX_INLINE): string {
    const writer = new TextWriter(max, true);
    this.children(node, writer);
    return writer.toString();
  }

  private link(node: ElementNode, writer: TextWriter): void {
    const first = node.children[0];
    const last = node.children.at(-1);
    if (typeof first === 'string' && first.startsWith(' ')) writer.space();
    const outer = this.inLink;
    this.inLink = true;
    const text = this.inline(node);
    this.inLink = outer;
    const href = node.href;
    if (href === undefined || !linkable(href) || this.options.links === 'drop') {
      writer.text(text);
    } else {
      const { url, resolved } = resolveLink(href, this.options);
      if (resolved) this.linksResolved++;
      if (this.links.length < MAX_LINKS) {
        this.links.push(resolved ? { text, url, original: href } : { text, url });
      }
      const token = this.formatLink(text, url);
      // The same link twice in a row (a product's image, then its name) is written once.
      if (this.lastLink?.token !== token || this.lastLink.at !== writer.written) {
        writer.token(token);
        this.lastLink = { token, at: writer.written };
      }
    }
    if (typeof last === 'string' && last.endsWith(' ')) writer.space();
  }

  private formatLink(text: string, url: string): string {
    const bare = url.replace(/^(https?:\/\/|mailto:|tel:)/i, '').replace(/\/$/, '');
    const sameAsUrl = text.length === 0 || text === url || text === bare || text.replace(/\/$/, '') === bare;
    if (/^mailto:/i.test(url) && sameAsUrl && text.length > 0) return text;
    if (!this.markdown) return sameAsUrl ? url : `${text} (${url})`;
    const destination = markdownDestination(url);
    if (sameAsUrl) return `<${destination}>`;
    return `[${text.replace(/[[\]]/g, (bracket) => `\\${bracket}`)}](${destination})`;
  }

  private emphasis(node: ElementNode, parent: ElementNode, writer: TextWriter, marker: string): void {
    const sparing =
      !this.markdown ||
      this.inLink ||
      this.inEmphasis ||
      this.inPre ||
      node.textLength === 0 ||
      node.textLength > MAX_EMPHASIS ||
      node.textLength >= parent.textLength ||
      node.containsTable;
    if (sparing) {
      this.children(node, writer);
      return;
    }
    const first = node.children[0];
    const last = node.children.at(-1);
    if (typeof first === 'string' && first.startsWith(' ')) writer.space();
    this.inEmphasis = true;
    const text = this.inline(node, MAX_EMPHASIS * 4);
    this.inEmphasis = false;
    if (text.length > 0) writer.token(`${marker}${text}${marker}`);
    if (typeof last === 'string' && last.endsWith(' ')) writer.space();
  }

  private heading(node: ElementNode, writer: TextWriter, level: number): void {
    const text = this.inline(node);
    if (text.length === 0) return;
    writer.requestBreak(2);
    writer.token(this.markdown ? `${'#'.repeat(level)} ${text}` : text);
    writer.requestBreak(2);
  }

  private list(node: ElementNode, writer: TextWriter): void {
    writer.requestBreak(this.listDepth === 0 ? 2 : 1);
    this.listDepth++;
    let number = node.start ?? 1;
    for (const child of node.children) {
      if (writer.full) break;
      if (typeof child === 'string') writer.text(child);
      else if (child.name === 'li') {
        this.listItem(child, writer, node.name === 'ol' ? `${number}.` : '-');
        number++;
      } else this.element(child, node, writer);
    }
    this.listDepth--;
    writer.requestBreak(this.listDepth === 0 ? 2 : 1);
  }

  private listItem(node: ElementNode, writer: TextWriter, bullet: string): void {
    writer.requestBreak(1);
    const segment = writer.pushSegment(`${bullet} `, ' '.repeat(bullet.length + 1));
    this.children(node, writer);
    writer.popSegment(segment);
    writer.requestBreak(1);
  }

  private blockquote(node: ElementNode, writer: TextWriter): void {
    if (node.marker === 'quote') this.quotesAttributed = true;
    writer.requestBreak(2);
    const segment = writer.pushSegment('> ', '> ', true);
    this.children(node, writer);
    writer.popSegment(segment);
    writer.requestBreak(2);
  }

  private table(node: ElementNode, writer: TextWriter): void {
    const shape = tableShape(node);
    const columns = this.options.tables === 'flatten' ? 0 : dataColumns(node, shape);
    if (columns === 0) {
      // Layout: each cell's content in order, as blocks.
      writer.requestBreak(1);
      this.children(node, writer);
      writer.requestBreak(1);
      return;
    }
    for (const stray of shape.stray) {
      if (typeof stray === 'string') writer.text(stray);
      else this.element(stray, node, writer);
    }
    writer.requestBreak(2);
    if (shape.caption !== undefined) {
      const caption = this.inline(shape.caption);
      if (caption.length > 0) {
        writer.token(caption);
        writer.requestBreak(1);
      }
    }
    const rows = shape.rows.slice(0, MAX_TABLE_ROWS);
    rows.forEach((row, index) => {
      const cells: string[] = [];
      for (const cell of row.cells) {
        cells.push(this.inline(cell, MAX_DATA_CELL * 2).replace(/\|/g, '\\|'));
        for (let extra = 1; extra < (cell.colspan ?? 1); extra++) cells.push('');
      }
      while (cells.length < columns) cells.push('');
      cells.length = columns;
      writer.token(this.markdown ? `| ${cells.join(' | ')} |` : cells.join(' | '));
      writer.requestBreak(1);
      if (index === 0 && this.markdown) {
        writer.token(`|${' --- |'.repeat(columns)}`);
        writer.requestBreak(1);
      }
    });
    if (shape.rows.length > rows.length) writer.token(`[table: ${shape.rows.length - rows.length} more rows]`);
    writer.requestBreak(2);
  }
}

/** Whether a colour marks an answer written into Outlook's quoted history: saturated, and not the quote's own. */
function answerColour(colour: Colour, base: Colour | undefined): boolean {
  if (base !== undefined && sameColour(colour, base)) return false;
  const saturation = Math.max(colour.r, colour.g, colour.b) - Math.min(colour.r, colour.g, colour.b);
  return saturation >= 96;
}

/** Whether the first text inside a node begins with the `From:` of Outlook's header (a few levels deep at most). */
function startsWithHeaderWord(node: ElementNode): boolean {
  let current: ElementNode = node;
  for (let step = 0; step < 12; step++) {
    const child = current.children.find((candidate) => typeof candidate !== 'string' || candidate.trim().length > 0);
    if (child === undefined) return false;
    if (typeof child === 'string') return FROM_WORD.test(child.trim().replace(/^\*+/, ''));
    current = child;
  }
  return false;
}

function tableShape(table: ElementNode): TableShape {
  const shape: TableShape = { rows: [], caption: undefined, stray: [] };
  const addRow = (row: ElementNode, header: boolean) => {
    const cells: ElementNode[] = [];
    for (const cell of row.children) {
      if (typeof cell !== 'string' && (cell.name === 'td' || cell.name === 'th')) cells.push(cell);
    }
    shape.rows.push({ cells, header: header || (cells.length > 0 && cells.every((cell) => cell.name === 'th')) });
  };
  for (const child of table.children) {
    if (typeof child === 'string') {
      if (child.trim().length > 0) shape.stray.push(child);
      continue;
    }
    if (child.name === 'tr') addRow(child, false);
    else if (child.name === 'thead' || child.name === 'tbody' || child.name === 'tfoot') {
      for (const row of child.children) {
        if (typeof row !== 'string' && row.name === 'tr') addRow(row, child.name === 'thead');
      }
    } else if (child.name === 'caption') shape.caption = child;
    else shape.stray.push(child);
  }
  return shape;
}

/**
 * The number of columns of a data table, or 0 when the table is layout: marked presentation, holding another table,
 * one column or one row, too wide, cells holding blocks or long text, rows of different widths, or (without header
 * cells and without borders) cells that hold anything but short inline text.
 */
function dataColumns(table: ElementNode, shape: TableShape): number {
  if (table.role === 'presentation' || table.role === 'none' || table.containsTable) return 0;
  if (shape.rows.length < 2) return 0;
  let columns = 0;
  const widths = new Set<number>();
  let inlineOnly = true;
  for (const row of shape.rows) {
    let width = 0;
    for (const cell of row.cells) {
      width += cell.colspan ?? 1;
      if (cell.textLength > MAX_DATA_CELL) return 0;
      for (const child of cell.children) {
        if (typeof child !== 'string' && !INLINE_IN_CELL.has(child.name)) inlineOnly = false;
      }
    }
    if (width === 0) continue;
    widths.add(width);
    columns = Math.max(columns, width);
  }
  if (columns < 2 || columns > MAX_TABLE_COLUMNS || widths.size > 1) return 0;
  if (!table.hasHeaderCell && !table.bordered && !inlineOnly) return 0;
  return columns;
}

/**
 * HTML → Markdown (or, with `flavour: 'text'`, plain text) as a model should read it: every link kept as
 * `[text](url)` with tracking redirects resolved, hidden text removed and counted, layout flattened. Pure.
 */
export function htmlToMarkdown(html: string, options: HtmlToMarkdownOptions = {}): HtmlConversion {
  const tree = readHtml(html, options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS);
  const renderer = new Renderer(options);
  const writer = new TextWriter(options.maxChars ?? DEFAULT_MAX_CHARS);
  renderer.children(tree.root, writer);
  const hidden = tree.hidden;
  return {
    markdown: writer.toString(),
    hiddenTextRemoved: hidden.css + hidden.sameColour + hidden.comments + hidden.invisibleCharacters,
    hidden,
    hiddenText: tree.hiddenText,
    links: renderer.links,
    linksResolved: renderer.linksResolved,
    truncated: tree.truncated || writer.truncated,
    quotesAttributed: renderer.quotesAttributed,
  };
}

/**
 * The HTML itself with what a person cannot see cut out (hidden elements, same-colour text, comments, scripts) and
 * invisible characters removed: for `body_format: html`. Linear: one pass over the sorted, disjoint cut ranges.
 */
export function visibleHtml(
  html: string,
  maxInputChars = DEFAULT_MAX_INPUT_CHARS,
): { html: string; tree: ReturnType<typeof readHtml> } {
  const tree = readHtml(html, maxInputChars);
  const source = tree.truncated ? html.slice(0, maxInputChars) : html;
  const ranges = tree.removedRanges.sort((left, right) => left[0] - right[0]);
  const parts: string[] = [];
  let from = 0;
  for (const [start, end] of ranges) {
    if (end <= from) continue;
    if (start > from) parts.push(source.slice(from, start));
    from = Math.max(from, end);
  }
  parts.push(source.slice(from));
  return { html: parts.join(''), tree };
}
