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

/** Output of one level: the document, or one cell of a table. */
class Sink {
  text = '';
  private endsBlank() {
    return this.text === '' || isBlank(this.text.charCodeAt(this.text.length - 1));
  }
  /** Append inline text, collapsing whitespace (not inside <pre>). */
  inline(text: string, pre: boolean) {
    if (pre) {
      this.text += text;
      return;
    }
    let collapsed = text.replace(/\s+/g, ' ');
    if (this.endsBlank() && collapsed.charCodeAt(0) === 32) collapsed = collapsed.slice(1);
    this.text += collapsed;
  }
  /** End a block: a blank line, unless one is there already. */
  block() {
    this.text = trimBlanksEnd(this.text);
    if (this.text !== '' && !this.text.endsWith('\n\n')) this.text += this.text.endsWith('\n') ? '\n' : '\n\n';
  }
  line() {
    this.text = `${trimBlanksEnd(this.text)}\n`;
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
  link?: { href: string; start: number };
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
          out.text += `${HEADINGS[name]} `;
        } else if (name === 'br') out.line();
        else if (name === 'hr') {
          out.block();
          out.text += '---';
          out.block();
        } else if (name === 'ul' || name === 'ol') {
          if (!lists.length) out.block();
          lists.push({ ordered: name === 'ol', index: 0 });
          frame.list = true;
        } else if (name === 'li') {
          const list = lists.at(-1);
          if (out.text !== '' && !out.text.endsWith('\n')) out.line();
          const marker = list?.ordered ? `${++list.index}.` : '-';
          out.text += `${'  '.repeat(Math.max(0, lists.length - 1))}${marker} `;
        } else if (name === 'pre') {
          out.block();
          out.text += '```\n';
          pre++;
          frame.pre = true;
        } else if (name === 'strong' || name === 'b') {
          out.inline(' **', false);
          frame.bold = true;
        } else if (name === 'a') frame.link = { href: attributes.href ?? '', start: out.text.length };
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
        if (out.text.length > maxCharacters) throw new Full();
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
          if (!out.text.endsWith('\n')) out.line();
          out.text += '```';
          out.block();
        } else if (frame.bold) {
          // An empty pair of ** is dropped.
          if (out.text.endsWith(' **')) out.text = out.text.slice(0, -3);
          else if (out.text.endsWith('**')) out.text = out.text.slice(0, -2);
          else out.text = `${trimBlanksEnd(out.text)}**`;
        } else if (frame.link) {
          const start = Math.min(frame.link.start, out.text.length);
          const text = out.text.slice(start).trim();
          const href = frame.link.href.trim();
          if (text && href && !/^(javascript|data|vbscript):/i.test(href) && href !== text && `mailto:${text}` !== href)
            out.text = `${out.text.slice(0, start)}[${text}](${href.replace(/\s/g, '%20').replace(/\)/g, '%29')})`;
        } else if (frame.table) {
          tables.pop();
          out.text += renderHtmlTable(frame.table);
          out.block();
        }
        if (out.text.length > maxCharacters) throw new Full();
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
  const body = root.text.replace(/\n{3,}/g, '\n\n').trim();
  const heading = title.trim() && !body.startsWith('# ') ? `# ${title.trim().replace(/\s+/g, ' ')}\n\n` : '';
  return (heading + body).slice(0, maxCharacters);
}

/** A data table as Markdown; a layout table's cells as paragraphs. */
function renderHtmlTable(table: TableState): string {
  const rows = table.rows.filter((row) => row.length > 0);
  if (!rows.length) return '';
  if (table.layout || rows.length === 1 || rows.every((row) => row.length === 1))
    return rows
      .flatMap((row) => row.map((cell) => cell.text.trim()))
      .filter(Boolean)
      .join('\n\n');
  const width = Math.min(50, Math.max(...rows.map((row) => row.length)));
  const cell = (sink: Sink | undefined) =>
    (sink?.text ?? '')
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
