/**
 * @module attachment-text/pptx
 * A PowerPoint presentation (PresentationML, ECMA-376) as Markdown, one section per slide in presentation order
 * (`ppt/presentation.xml`'s slide list through its relationships, not the order of the file names): the title
 * placeholder as the heading, body placeholders as bullets (indented by level), other text boxes as paragraphs,
 * tables as Markdown tables, and the speaker notes of the slide.
 */
import { coreProperties } from './docx.js';
import { AttachmentTextError } from './errors.js';
import type { Extracted } from './extracted.js';
import type { Limits } from './limits.js';
import { count, renderTable } from './markdown-table.js';
import { attribute, readRelationships, resolvePartName, walkXml } from './xml.js';
import type { ZipArchive } from './zip.js';

interface Shape {
  placeholder: string | undefined;
  paragraphs: { level: number; text: string }[];
}

interface SlideText {
  title: string;
  body: string[];
  notes: string;
}

/** The shapes of a slide (or notes) part, with their paragraphs, and its tables. */
function readShapes(bytes: Uint8Array, part: string, limits: Limits): { shapes: Shape[]; tables: string[] } {
  const shapes: Shape[] = [];
  const tables: string[] = [];
  let shape: Shape | undefined;
  let paragraph: { level: number; text: string } | undefined;
  let inText = false;
  let table: string[][] | undefined;
  let cellText: string | undefined;
  const cap = limits.maxCellCharacters * 4;
  walkXml(
    bytes,
    {
      open(name, attributes) {
        switch (name) {
          case 'sp':
            shape = { placeholder: undefined, paragraphs: [] };
            break;
          case 'ph':
            if (shape) shape.placeholder = attributes.type ?? 'body';
            break;
          case 'tbl':
            table = [];
            break;
          case 'tr':
            table?.push([]);
            break;
          case 'tc':
            cellText = '';
            break;
          case 'p':
            paragraph = { level: 0, text: '' };
            break;
          case 'pPr':
            if (paragraph) paragraph.level = Math.min(8, Number(attributes.lvl ?? 0) || 0);
            break;
          case 't':
            inText = true;
            break;
          case 'br':
            if (paragraph) paragraph.text += '\n';
            break;
        }
      },
      text(text) {
        if (inText && paragraph && paragraph.text.length < cap) paragraph.text += text;
      },
      close(name) {
        switch (name) {
          case 't':
            inText = false;
            break;
          case 'p':
            if (paragraph) {
              const text = paragraph.text.trim();
              if (cellText !== undefined) cellText += (cellText ? '\n' : '') + text;
              else if (text && shape) shape.paragraphs.push({ level: paragraph.level, text });
            }
            paragraph = undefined;
            break;
          case 'tc':
            table?.at(-1)?.push(cellText ?? '');
            cellText = undefined;
            break;
          case 'tbl':
            if (table?.length) tables.push(renderTable(table.slice(0, limits.maxRows), limits));
            table = undefined;
            break;
          case 'sp':
            if (shape) shapes.push(shape);
            shape = undefined;
            break;
        }
      },
    },
    part,
  );
  return { shapes, tables };
}

const TITLES = new Set(['title', 'ctrTitle']);
/** Placeholders that hold no text of the slide's own (slide number, date, footer, the notes page's slide image). */
const SKIPPED = new Set(['sldNum', 'dt', 'ftr', 'sldImg', 'hdr']);

function slideText(archive: ZipArchive, path: string, limits: Limits): SlideText {
  const bytes = archive.read(path);
  if (!bytes) return { title: '', body: [], notes: '' };
  const { shapes, tables } = readShapes(bytes, path, limits);
  let title = '';
  const body: string[] = [];
  for (const shape of shapes) {
    if (shape.placeholder && SKIPPED.has(shape.placeholder)) continue;
    if (shape.placeholder && TITLES.has(shape.placeholder) && !title) {
      title = shape.paragraphs
        .map((paragraph) => paragraph.text)
        .join(' ')
        .replace(/\s+/g, ' ');
      continue;
    }
    const bullets = shape.placeholder === 'body' || shape.placeholder === 'obj' || shape.placeholder === 'subTitle';
    const lines = shape.paragraphs.map((paragraph) =>
      bullets && shape.placeholder !== 'subTitle'
        ? `${'  '.repeat(paragraph.level)}- ${paragraph.text.replace(/\n/g, ' ')}`
        : paragraph.text,
    );
    if (lines.length) body.push(lines.join('\n'));
  }
  body.push(...tables);

  // The notes: the slide's notesSlide relationship, its body placeholder.
  const folder = path.slice(0, path.lastIndexOf('/') + 1);
  const relationships = readRelationships(archive.read(`${folder}_rels/${path.slice(folder.length)}.rels`), folder);
  let notes = '';
  for (const relationship of relationships.values()) {
    if (!relationship.type.endsWith('/notesSlide')) continue;
    const notesBytes = archive.read(relationship.target);
    if (!notesBytes) continue;
    notes = readShapes(notesBytes, relationship.target, limits)
      .shapes.filter((shape) => shape.placeholder === 'body')
      .flatMap((shape) => shape.paragraphs.map((paragraph) => paragraph.text))
      .join('\n');
  }
  return { title, body, notes };
}

/** Reads a PPTX archive (already opened and checked) as Markdown. */
export function readPptx(archive: ZipArchive, limits: Limits): Extracted {
  const presentation = archive.read('ppt/presentation.xml');
  if (!presentation) throw new AttachmentTextError('unreadable', 'The PPTX has no ppt/presentation.xml.');
  const relationships = readRelationships(archive.read('ppt/_rels/presentation.xml.rels'), 'ppt/');
  const paths: string[] = [];
  walkXml(
    presentation,
    {
      open(name, attributes) {
        if (name !== 'sldId') return;
        const target = relationships.get(attribute(attributes, 'r:id') ?? '')?.target;
        if (target) paths.push(target);
      },
    },
    'ppt/presentation.xml',
  );
  // No slide list (some generators): the slide parts in the order of their numbers.
  if (paths.length === 0) {
    for (const name of archive.entries.keys())
      if (/^ppt\/slides\/slide\d{1,6}\.xml$/.test(name)) paths.push(resolvePartName('', name));
    paths.sort((a, b) => Number(a.replace(/\D/g, '')) - Number(b.replace(/\D/g, '')));
  }

  const sections: string[] = [];
  const omitted: string[] = [];
  let size = 0;
  for (const [index, path] of paths.entries()) {
    if (size > limits.maxCharacters) {
      omitted.push(`Slides ${index + 1}–${paths.length} not shown (over ${count(limits.maxCharacters)} characters).`);
      break;
    }
    const slide = slideText(archive, path, limits);
    const parts = [`## Slide ${index + 1} of ${paths.length}${slide.title ? `: ${slide.title}` : ''}`, ...slide.body];
    if (slide.notes) parts.push(`Notes: ${slide.notes}`);
    const section = parts.join('\n\n');
    size += section.length + 2;
    sections.push(section);
  }
  return {
    text: sections.join('\n\n'),
    format: 'markdown',
    metadata: { ...coreProperties(archive), slides: paths.length, ...(omitted.length ? { omitted } : {}) },
  };
}
