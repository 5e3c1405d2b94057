/**
 * @module attachment-text/docx
 * A Word document (WordprocessingML, ECMA-376) as Markdown, read from `word/document.xml` in one streaming pass:
 * headings from paragraph styles (the style's name, `heading 1` …, so localised style ids work), bulleted and
 * numbered lists from `word/numbering.xml`, bold runs, hyperlinks with their targets, tables as Markdown tables
 * (a table inside a cell becomes text of the cell), line breaks and tabs. Deleted text (tracked changes), field
 * codes and the fallback copies of `mc:AlternateContent` are left out. Title and author from `docProps/core.xml`.
 */
import { AttachmentTextError } from './errors.js';
import { count, renderTable } from './markdown-table.js';
import type { Limits } from './limits.js';
import type { Extracted } from './extracted.js';
import { attribute, readRelationships, walkXml } from './xml.js';
import type { ZipArchive } from './zip.js';

/** Style id → heading level (1–6; 0 for Title) from `word/styles.xml`. */
function headingStyles(archive: ZipArchive): Map<string, number> {
  const levels = new Map<string, number>();
  const bytes = archive.read('word/styles.xml');
  if (!bytes) return levels;
  let styleId: string | undefined;
  walkXml(
    bytes,
    {
      open(name, attributes) {
        if (name === 'style') styleId = attribute(attributes, 'w:styleId');
        else if (name === 'name' && styleId) {
          const value = (attribute(attributes, 'w:val') ?? '').toLowerCase();
          if (value === 'title') levels.set(styleId, 0);
          else if (value.startsWith('heading ')) {
            const level = Number(value.slice(8));
            if (level >= 1 && level <= 9) levels.set(styleId, Math.min(6, level));
          }
        }
      },
    },
    'word/styles.xml',
  );
  return levels;
}

/** `numId:ilvl` → whether the list is numbered (not bulleted), from `word/numbering.xml`. */
function numberedLists(archive: ZipArchive): (numId: string, level: string) => boolean {
  const bytes = archive.read('word/numbering.xml');
  if (!bytes) return () => false;
  const abstractFormats = new Map<string, Map<string, string>>();
  const numToAbstract = new Map<string, string>();
  let abstractId: string | undefined;
  let level: string | undefined;
  let numId: string | undefined;
  walkXml(
    bytes,
    {
      open(name, attributes) {
        if (name === 'abstractNum') {
          abstractId = attribute(attributes, 'w:abstractNumId');
          if (abstractId !== undefined) abstractFormats.set(abstractId, new Map());
        } else if (name === 'lvl') level = attribute(attributes, 'w:ilvl');
        else if (name === 'numFmt' && abstractId !== undefined && level !== undefined)
          abstractFormats.get(abstractId)?.set(level, attribute(attributes, 'w:val') ?? 'bullet');
        else if (name === 'num') numId = attribute(attributes, 'w:numId');
        else if (name === 'abstractNumId' && numId !== undefined)
          numToAbstract.set(numId, attribute(attributes, 'w:val') ?? '');
      },
      close(name) {
        if (name === 'abstractNum') abstractId = undefined;
        else if (name === 'num') numId = undefined;
      },
    },
    'word/numbering.xml',
  );
  return (id, ilvl) => {
    const format = abstractFormats.get(numToAbstract.get(id) ?? '')?.get(ilvl);
    return format !== undefined && format !== 'bullet' && format !== 'none';
  };
}

/** Title, author and creation date from `docProps/core.xml` (shared by DOCX, XLSX and PPTX). */
export function coreProperties(archive: ZipArchive): { title?: string; author?: string; created?: string } {
  const bytes = archive.read('docProps/core.xml');
  const found: { title?: string; author?: string; created?: string } = {};
  if (!bytes) return found;
  let field: 'title' | 'author' | 'created' | undefined;
  walkXml(
    bytes,
    {
      open(name) {
        field = name === 'title' ? 'title' : name === 'creator' ? 'author' : name === 'created' ? 'created' : undefined;
      },
      close() {
        field = undefined;
      },
      text(text) {
        if (field && text.trim()) found[field] = ((found[field] ?? '') + text).trim().slice(0, 500);
      },
    },
    'docProps/core.xml',
  );
  return found;
}

interface Run {
  text: string;
  bold: boolean;
}

/** Runs as Markdown: adjacent bold runs share one pair of `**` (none in table cells: a header row is bold anyway). */
function inline(runs: Run[], emphasis = true): string {
  let out = '';
  let bold = false;
  let pending = '';
  const flush = () => {
    if (!pending) return;
    if (bold && emphasis && pending.trim()) {
      const lead = pending.length - pending.trimStart().length;
      const trail = pending.length - pending.trimEnd().length;
      out += `${pending.slice(0, lead)}**${pending.trim()}**${pending.slice(pending.length - trail)}`;
    } else out += pending;
    pending = '';
  };
  for (const run of runs) {
    if (run.bold !== bold) {
      flush();
      bold = run.bold;
    }
    pending += run.text;
  }
  flush();
  return out;
}

/** Reads a DOCX archive (already opened and checked) as Markdown. */
export function readDocx(archive: ZipArchive, limits: Limits): Extracted {
  const main = archive.read('word/document.xml');
  if (!main) throw new AttachmentTextError('unreadable', 'The DOCX has no word/document.xml.');
  const headings = headingStyles(archive);
  const numbered = numberedLists(archive);
  const relationships = readRelationships(archive.read('word/_rels/document.xml.rels'), 'word/');
  const counters = new Map<string, number>();

  /** Blocks and what precedes each: list items follow one another on consecutive lines, the rest a blank line. */
  const blocks: string[] = [];
  let lastWasList = false;
  let size = 0;
  let full = false;
  /** Open tables, innermost last: rows of cells, each cell its paragraphs. */
  const tables: string[][][][] = [];
  /** Open paragraphs, innermost last (a text box's paragraphs sit inside a paragraph). */
  const paragraphs: {
    runs: Run[];
    style?: string | undefined;
    numId?: string | undefined;
    level?: string | undefined;
  }[] = [];
  let inText = false;
  let runBold = false;
  let inRunProperties = false;
  let skipDepth = 0;
  let link: { url: string | undefined; runs: Run[] } | undefined;

  const push = (block: string, list: boolean) => {
    if (full) return;
    const cell = tables.at(-1)?.at(-1)?.at(-1);
    if (cell) {
      cell.push(block);
      return;
    }
    size += block.length + 2;
    if (size > limits.maxCharacters) full = true;
    if (blocks.length) blocks.push(list && lastWasList ? '\n' : '\n\n');
    blocks.push(block);
    lastWasList = list;
  };

  walkXml(
    main,
    {
      open(name, attributes, depth) {
        if (skipDepth) return;
        const paragraph = paragraphs.at(-1);
        if (name === 'delText' || name === 'instrText' || name === 'Fallback' || name === 'del') {
          skipDepth = depth;
          return;
        }
        switch (name) {
          case 'p':
            paragraphs.push({ runs: [] });
            break;
          case 't':
            inText = true;
            break;
          case 'pStyle':
            if (paragraph) paragraph.style = attribute(attributes, 'w:val');
            break;
          case 'numId':
            if (paragraph) paragraph.numId = attribute(attributes, 'w:val');
            break;
          case 'ilvl':
            if (paragraph) paragraph.level = attribute(attributes, 'w:val');
            break;
          case 'r':
            runBold = false;
            break;
          case 'rPr':
            inRunProperties = true;
            break;
          case 'b':
            if (inRunProperties) runBold = !['0', 'false'].includes(attribute(attributes, 'w:val') ?? '1');
            break;
          case 'tab':
            if (!inRunProperties) (link?.runs ?? paragraph?.runs)?.push({ text: ' ', bold: false });
            break;
          case 'br':
          case 'cr':
            (link?.runs ?? paragraph?.runs)?.push({ text: '\n', bold: false });
            break;
          case 'hyperlink': {
            const id = attribute(attributes, 'r:id');
            const target = id ? relationships.get(id) : undefined;
            link = { url: target?.external ? target.target : undefined, runs: [] };
            break;
          }
          case 'tbl':
            tables.push([]);
            break;
          case 'tr':
            tables.at(-1)?.push([]);
            break;
          case 'tc':
            tables.at(-1)?.at(-1)?.push([]);
            break;
        }
      },
      text(text) {
        const paragraph = paragraphs.at(-1);
        if (skipDepth || !inText || !paragraph) return;
        (link?.runs ?? paragraph.runs).push({ text, bold: runBold });
      },
      close(name, depth) {
        if (skipDepth) {
          if (depth === skipDepth) skipDepth = 0;
          return;
        }
        const paragraph = paragraphs.at(-1);
        switch (name) {
          case 't':
            inText = false;
            break;
          case 'rPr':
            inRunProperties = false;
            break;
          case 'hyperlink':
            if (link && paragraph) {
              const text = inline(link.runs).trim();
              const url = link.url;
              paragraph.runs.push({ text: url && text ? `[${text}](${url})` : inline(link.runs), bold: false });
            }
            link = undefined;
            break;
          case 'p': {
            const current = paragraphs.pop();
            if (!current) break;
            const text = inline(current.runs, tables.length === 0)
              .replace(/[ \t]+\n/g, '\n')
              .trim();
            if (!text) break;
            const level = current.style ? headings.get(current.style) : undefined;
            if (level !== undefined && !tables.length) {
              push(`${'#'.repeat(Math.max(1, level))} ${text.replace(/\s*\n\s*/g, ' ')}`, false);
            } else if (current.numId && current.numId !== '0') {
              const ilvl = current.level ?? '0';
              const indent = '  '.repeat(Math.min(8, Number(ilvl) || 0));
              const key = `${current.numId}:${ilvl}`;
              const number = (counters.get(key) ?? 0) + 1;
              counters.set(key, number);
              push(`${indent}${numbered(current.numId, ilvl) ? `${number}.` : '-'} ${text}`, true);
            } else push(text, false);
            break;
          }
          case 'tbl': {
            const rows = tables.pop();
            if (!rows) break;
            const cells = rows.slice(0, limits.maxRows + 1).map((row) => row.map((cell) => cell.join('\n')));
            if (tables.length) {
              // A table inside a cell: its text joins the cell's.
              const text = cells.map((row) => row.join(' | ')).join('\n');
              tables.at(-1)?.at(-1)?.at(-1)?.push(text);
            } else {
              let table = renderTable(cells, limits);
              if (rows.length > limits.maxRows + 1)
                table += `\n\n_${count(rows.length - limits.maxRows - 1)} more rows not shown._`;
              push(table, false);
            }
            break;
          }
        }
      },
    },
    'word/document.xml',
  );

  const text = blocks.join('');
  return {
    text,
    format: 'markdown',
    metadata: {
      ...coreProperties(archive),
      ...(full
        ? { omitted: [`The document is longer than ${count(limits.maxCharacters)} characters; the rest is not shown.`] }
        : {}),
    },
  };
}
