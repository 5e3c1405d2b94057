/**
 * @module attachment-text/html
 * The built-in HTML → Markdown conversion for HTML attachments and message bodies: a simple one, in one streaming
 * pass of htmlparser2 (no tree). Headings, paragraphs, line breaks, lists, links (`[text](url)`), bold, images as
 * their alt text, preformatted text, and tables without tables inside them as Markdown tables (a table that holds
 * tables is layout: its cells become paragraphs). Scripts, styles, the head, templates and elements marked hidden
 * (`hidden`, `display:none`) are left out. The caller may bring a better converter (`htmlToMarkdown`, src/reading);
 * this one is the fallback. Elements nested deeper than {@link MAX_HTML_DEPTH} make the whole document fall back
 * to its visible text, since htmlparser2's stack of open elements is quadratic in its depth.
 */
import { Parser } from 'htmlparser2';

/** Open elements followed before the document is read as plain text instead. */
export const MAX_HTML_DEPTH = 512;

const SKIPPED = new Set([
  'script',
  'style',
  'head',
  'template',
  'noscript',
  'svg',
  'math',
  'iframe',
  'object',
  'select',
]);
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'aside',
  'nav',
  'blockquote',
  'figure',
  'figcaption',
  'address',
  'form',
  'fieldset',
  'center',
  'dl',
  'dt',
  'dd',
  'body',
  'html',
]);
const HEADINGS: Record<string, string> = { h1: '#', h2: '##', h3: '###', h4: '####', h5: '#####', h6: '######' };

class TooDeep extends Error {}
class Full extends Error {}

/** Tables nested deeper than this are read as blocks (each level copies its cells' text once more). */
const MAX_TABLE_NESTING = 8;

const isBlank = (code: number) => code === 32 || code === 9 || code === 10 || code === 13 || code === 12;

/** `text` without its trailing spaces and tabs (a scan from the end; `/[ \t]+$/` would rescan from every blank). */
function trimBlanksEnd(text: string): string {
  let end = text.length;
  while (end > 0 && (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9)) end--;
  return end === text.length ? text : text.slice(0, end);
}

/**
 * Output of one level: the document, or one cell of a table. Kept as a list of pieces with its length, never as one
 * growing string: reading the end of a string built by `+=` flattens it, which made each link and each block end
 * cost the whole document (quadratic on a mail of many links).
 */
class Sink {
  private readonly parts: string[] = [];
  length = 0;

  push(text: string) {
    if (!text) return;
    this.parts.push(text);
    this.length += text.length;
  }
  /** The last `count` characters (fewer at the start). */
  tail(count: number): string {
    let out = '';
    for (let index = this.parts.length - 1; index >= 0 && out.length < count; index--)
      out = this.parts[index]!.slice(-(count - out.length)) + out;
    return out;
  }
  /** Drops trailing spaces and tabs. */
  trimBlanksEnd() {
    while (this.parts.length) {
      const last = this.parts.at(-1)!;
      const trimmed = trimBlanksEnd(last);
      this.length -= last.length - trimmed.length;
      if (trimmed) {
        this.parts[this.parts.length - 1] = trimmed;
        return;
      }
      this.parts.pop();
    }
  }
  /** Drops the last `count` characters. */
  dropEnd(count: number) {
    let left = count;
    while (left > 0 && this.parts.length) {
      const last = this.parts.pop()!;
      if (last.length > left) {
        this.parts.push(last.slice(0, last.length - left));
        this.length -= left;
        return;
      }
      left -= last.length;
      this.length -= last.length;
    }
  }
  /** A mark of the current end, and the text written since a mark (taken out). */
  mark(): number {
    return this.parts.length;
  }
  takeFrom(mark: number): string {
    const taken = this.parts.splice(Math.min(mark, this.parts.length)).join('');
    this.length -= taken.length;
    return taken;
  }
  toString(): string {
    return this.parts.join('');
  }
  private endsBlank() {
    const last = this.tail(1);
    return last === '' || isBlank(last.charCodeAt(0));
  }
  /** Append inline text, collapsing whitespace (not inside <pre>). */
  inline(text: string, pre: boolean) {
    if (pre) {
      this.push(text);
      return;
    }
    let collapsed = text.replace(/\s+/g, ' ');
    if (collapsed.charCodeAt(0) === 32 && this.endsBlank()) collapsed = collapsed.slice(1);
    this.push(collapsed);
  }
  /** End a block: a blank line, unless one is there already. */
  block() {
    this.trimBlanksEnd();
    if (this.length === 0) return;
    const end = this.tail(2);
    if (end !== '\n\n') this.push(end.endsWith('\n') ? '\n' : '\n\n');
  }
  line() {
    this.trimBlanksEnd();
    this.push('\n');
  }
}

interface TableState {
  rows: Sink[][];
  layout: boolean;
}

/** What an open element changed, undone when it closes. */
interface Frame {
  name: string;
  skip?: boolean;
  cell?: boolean;
  table?: TableState;
  list?: boolean;
  link?: { href: string; mark: number };
  pre?: boolean;
  bold?: boolean;
}

/** Markdown of `html` (already a string); `maxCharacters` bounds the output. */
export function htmlToMarkdownFallback(html: string, maxCharacters = 2_000_000): string {
  try {
    return convert(html, maxCharacters);
  } catch (error) {
    if (error instanceof TooDeep) return visibleText(html).slice(0, maxCharacters);
    throw error;
  }
}

function convert(html: string, maxCharacters: number): string {
  const root = new Sink();
  const sinks: Sink[] = [root];
  const tables: TableState[] = [];
  const lists: { ordered: boolean; index: number }[] = [];
  const frames: Frame[] = [];
  let skipping = 0;
  let pre = 0;
  let title = '';
  let inTitle = false;
  const sink = () => sinks.at(-1)!;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (frames.length >= MAX_HTML_DEPTH) throw new TooDeep();
        const frame: Frame = { name };
        frames.push(frame);
        if (name === 'title') inTitle = true;
        if (skipping) return;
        const style = (attributes.style ?? '').toLowerCase().replace(/\s+/g, '');
        if (SKIPPED.has(name) || 'hidden' in attributes || style.includes('display:none')) {
          frame.skip = true;
          skipping++;
          return;
        }
        const out = sink();
        if (BLOCKS.has(name)) out.block();
        else if (HEADINGS[name]) {
          out.block();
          out.push(`${HEADINGS[name]} `);
        } else if (name === 'br') out.line();
        else if (name === 'hr') {
          out.block();
          out.push('---');
          out.block();
        } else if (name === 'ul' || name === 'ol') {
          if (!lists.length) out.block();
          lists.push({ ordered: name === 'ol', index: 0 });
          frame.list = true;
        } else if (name === 'li') {
          const list = lists.at(-1);
          if (out.length && out.tail(1) !== '\n') out.line();
          const marker = list?.ordered ? `${++list.index}.` : '-';
          out.push(`${'  '.repeat(Math.max(0, lists.length - 1))}${marker} `);
        } else if (name === 'pre') {
          out.block();
          out.push('```\n');
          pre++;
          frame.pre = true;
        } else if (name === 'strong' || name === 'b') {
          out.inline(' **', false);
          frame.bold = true;
        } else if (name === 'a') frame.link = { href: attributes.href ?? '', mark: out.mark() };
        else if (name === 'img') {
          const alt = (attributes.alt ?? '').trim();
          if (alt) out.inline(` ${alt} `, false);
        } else if (name === 'table') {
          out.block();
          if (tables.length < MAX_TABLE_NESTING) {
            const parent = tables.at(-1);
            if (parent) parent.layout = true;
            frame.table = { rows: [], layout: false };
            tables.push(frame.table);
          }
        } else if (name === 'tr') tables.at(-1)?.rows.push([]);
        else if (name === 'td' || name === 'th') {
          const table = tables.at(-1);
          if (table) {
            if (!table.rows.length) table.rows.push([]);
            const cell = new Sink();
            table.rows.at(-1)!.push(cell);
            sinks.push(cell);
            frame.cell = true;
          } else out.inline(' ', false);
        }
      },
      ontext(text) {
        if (inTitle && title.length < 1000) title += text;
        if (skipping) return;
        const out = sink();
        out.inline(text, pre > 0);
        if (out.length > maxCharacters) throw new Full();
      },
      onclosetag(name) {
        const frame = frames.pop();
        if (name === 'title') inTitle = false;
        if (!frame) return;
        if (frame.skip) {
          skipping--;
          return;
        }
        if (skipping) return;
        if (frame.cell) sinks.pop();
        const out = sink();
        if (BLOCKS.has(name) || HEADINGS[name]) out.block();
        if (frame.list) {
          lists.pop();
          if (!lists.length) out.block();
          else out.line();
        } else if (frame.pre) {
          pre--;
          if (out.tail(1) !== '\n') out.line();
          out.push('```');
          out.block();
        } else if (frame.bold) {
          // An empty pair of ** is dropped.
          const end = out.tail(3);
          if (end === ' **') out.dropEnd(3);
          else if (end.endsWith('**')) out.dropEnd(2);
          else {
            out.trimBlanksEnd();
            out.push('**');
          }
        } else if (frame.link) {
          const inner = out.takeFrom(frame.link.mark);
          const text = inner.trim();
          const href = frame.link.href.trim();
          if (
            text &&
            href &&
            !/^(javascript|data|vbscript):/i.test(href) &&
            href !== text &&
            `mailto:${text}` !== href
          ) {
            if (inner.charCodeAt(0) === 32) out.push(' ');
            out.push(`[${text}](${href.replace(/\s/g, '%20').replace(/\)/g, '%29')})`);
          } else out.push(inner);
        } else if (frame.table) {
          tables.pop();
          out.push(renderHtmlTable(frame.table));
          out.block();
        }
        if (out.length > maxCharacters) throw new Full();
      },
    },
    { decodeEntities: true },
  );
  try {
    parser.write(html);
    parser.end();
  } catch (error) {
    if (!(error instanceof Full)) throw error;
  }
  const body = root
    .toString()
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const heading = title.trim() && !body.startsWith('# ') ? `# ${title.trim().replace(/\s+/g, ' ')}\n\n` : '';
  return (heading + body).slice(0, maxCharacters);
}

/** A data table as Markdown; a layout table's cells as paragraphs. */
function renderHtmlTable(table: TableState): string {
  const rows = table.rows.filter((row) => row.length > 0);
  if (!rows.length) return '';
  if (table.layout || rows.length === 1 || rows.every((row) => row.length === 1))
    return rows
      .flatMap((row) => row.map((cell) => cell.toString().trim()))
      .filter(Boolean)
      .join('\n\n');
  const width = Math.min(50, Math.max(...rows.map((row) => row.length)));
  const cell = (sink: Sink | undefined) =>
    (sink?.toString() ?? '')
      .trim()
      .replace(/\s*\n\s*/g, ' <br> ')
      .replaceAll('|', '\\|');
  const line = (row: Sink[]) => `| ${Array.from({ length: width }, (_, index) => cell(row[index])).join(' | ')} |`;
  return [line(rows[0]!), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)].join('\n');
}

/**
 * The visible text of HTML by one forward scan with indexOf (the fallback of the fallback, for documents nested too
 * deep): tags dropped, scripts and styles skipped, block ends as line breaks, a few entities decoded.
 */
export function visibleText(html: string): string {
  const lower = html.toLowerCase();
  let out = '';
  let index = 0;
  while (index < html.length) {
    const open = html.indexOf('<', index);
    if (open < 0) {
      out += html.slice(index);
      break;
    }
    out += html.slice(index, open);
    const close = html.indexOf('>', open);
    if (close < 0) break;
    const tag = /^<\/?([a-z0-9]{1,10})/.exec(lower.slice(open, open + 12))?.[1] ?? '';
    if (tag === 'style' || tag === 'script' || tag === 'head') {
      const end = lower.indexOf(`</${tag}`, close);
      const endClose = end < 0 ? -1 : html.indexOf('>', end);
      index = endClose < 0 ? html.length : endClose + 1;
      continue;
    }
    out += tag === 'br' || tag === 'p' || tag === 'div' || tag === 'li' || tag === 'tr' ? '\n' : ' ';
    index = close + 1;
  }
  return out
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+/g, ' ')
    .replace(/ *\n[ \n]*/g, '\n')
    .trim();
}
