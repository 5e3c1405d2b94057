/**
 * @module attachment-text/xlsx
 * An Excel workbook (SpreadsheetML, ECMA-376) as Markdown tables, one per sheet in workbook order: sheet names and
 * parts from `xl/workbook.xml` and its relationships, strings from `xl/sharedStrings.xml` (rich text runs joined),
 * dates from the number formats of `xl/styles.xml` (built-in date formats and custom ones with day, month or year
 * codes), booleans, errors, inline strings and the cached values of formulas. Each part is read in one streaming
 * pass; cell references are read as written, so a sparse sheet (one cell at XFD1048576) costs its cells, not its
 * area.
 */
import { AttachmentTextError } from './errors.js';
import type { Extracted } from './extracted.js';
import type { Limits } from './limits.js';
import { columnIndex } from './markdown-table.js';
import { renderSheets, SheetCollector } from './sheets.js';
import { coreProperties } from './docx.js';
import { attribute, readRelationships, walkXml } from './xml.js';
import type { ZipArchive } from './zip.js';

/** Built-in number formats that are dates or times (ECMA-376 Part 1, 18.8.30). */
const BUILT_IN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

/** Whether a custom format code shows a date or time: a d, m, y, h or s outside quotes, brackets and escapes. */
export function isDateFormat(code: string): boolean {
  let quoted = false;
  let bracket = false;
  for (let index = 0; index < code.length && index < 256; index++) {
    const char = code[index]!;
    if (quoted) quoted = char !== '"';
    else if (bracket) bracket = char !== ']';
    else if (char === '"') quoted = true;
    else if (char === '[') bracket = true;
    else if (char === '\\' || char === '_' || char === '*') index++;
    else if ('dmyhsDMYHS'.includes(char)) return true;
  }
  return false;
}

/** An Excel serial date as ISO 8601 (a date, or a date and time when it has a fraction). */
export function serialToIso(serial: number, date1904: boolean): string | undefined {
  if (!Number.isFinite(serial) || serial < 0 || serial > 2_958_465) return undefined;
  // 1900 system: day 1 is 1900-01-01 and Excel counts a 29 February 1900 that never was; serials from 61 on are one
  // day ahead, so the epoch is 1899-12-30 for them (and 1899-12-31 below).
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : serial < 61 ? Date.UTC(1899, 11, 31) : Date.UTC(1899, 11, 30);
  const milliseconds = Math.round(serial * 86_400_000);
  const iso = new Date(epoch + milliseconds).toISOString();
  return milliseconds % 86_400_000 === 0 ? iso.slice(0, 10) : iso.slice(0, 16).replace('T', ' ');
}

/** Style index → whether it formats a date, from `xl/styles.xml`. */
function dateStyles(archive: ZipArchive): boolean[] {
  const bytes = archive.read('xl/styles.xml');
  const styles: boolean[] = [];
  if (!bytes) return styles;
  const customDates = new Set<number>();
  let inCellFormats = false;
  walkXml(
    bytes,
    {
      open(name, attributes) {
        if (name === 'numFmt') {
          const id = Number(attributes.numFmtId);
          if (isDateFormat(attributes.formatCode ?? '')) customDates.add(id);
        } else if (name === 'cellXfs') inCellFormats = true;
        else if (name === 'xf' && inCellFormats) {
          const id = Number(attributes.numFmtId ?? 0);
          styles.push(BUILT_IN_DATE_FORMATS.has(id) || customDates.has(id));
        }
      },
      close(name) {
        if (name === 'cellXfs') inCellFormats = false;
      },
    },
    'xl/styles.xml',
  );
  return styles;
}

/** The shared string table (rich text runs joined; phonetic runs left out). */
function sharedStrings(archive: ZipArchive, path: string | undefined, limits: Limits): string[] {
  const bytes = path ? archive.read(path) : undefined;
  const strings: string[] = [];
  if (!bytes) return strings;
  let current: string | undefined;
  let inText = false;
  let phonetic = false;
  const cap = limits.maxCellCharacters * 2;
  walkXml(
    bytes,
    {
      open(name) {
        if (name === 'si') current = '';
        else if (name === 't') inText = true;
        else if (name === 'rPh') phonetic = true;
      },
      close(name) {
        if (name === 'si') {
          strings.push(current ?? '');
          current = undefined;
        } else if (name === 't') inText = false;
        else if (name === 'rPh') phonetic = false;
      },
      text(text) {
        if (inText && !phonetic && current !== undefined && current.length < cap) current += text;
      },
    },
    path ?? 'xl/sharedStrings.xml',
  );
  return strings;
}

/** Reads an XLSX archive (already opened and checked) as Markdown tables. */
export function readXlsx(archive: ZipArchive, limits: Limits): Extracted {
  const workbook = archive.read('xl/workbook.xml');
  if (!workbook) throw new AttachmentTextError('unreadable', 'The XLSX has no xl/workbook.xml.');
  const relationships = readRelationships(archive.read('xl/_rels/workbook.xml.rels'), 'xl/');
  const declared: { name: string; id: string; hidden: boolean }[] = [];
  let date1904 = false;
  walkXml(
    workbook,
    {
      open(name, attributes) {
        if (name === 'workbookPr') date1904 = ['1', 'true'].includes(attributes.date1904 ?? '');
        else if (name === 'sheet')
          declared.push({
            name: (attributes.name ?? '').slice(0, 200),
            id: attribute(attributes, 'r:id') ?? '',
            hidden: attributes.state === 'hidden' || attributes.state === 'veryHidden',
          });
      },
    },
    'xl/workbook.xml',
  );
  let stringsPath: string | undefined;
  for (const relationship of relationships.values())
    if (relationship.type.endsWith('/sharedStrings')) stringsPath = relationship.target;
  stringsPath ??= archive.entries.has('xl/sharedStrings.xml') ? 'xl/sharedStrings.xml' : undefined;
  const strings = sharedStrings(archive, stringsPath, limits);
  const dates = dateStyles(archive);

  const sheets = declared.map((sheet) => {
    const collector = new SheetCollector(sheet.name, limits, sheet.hidden);
    const path = relationships.get(sheet.id)?.target;
    const bytes = path ? archive.read(path) : undefined;
    if (bytes) readSheet(bytes, path!, collector, strings, dates, date1904, limits);
    return collector;
  });
  const rendered = renderSheets(sheets, limits);
  return {
    text: rendered.text,
    format: 'markdown',
    metadata: {
      ...coreProperties(archive),
      sheets: rendered.sheets,
      ...(rendered.omitted.length ? { omitted: rendered.omitted } : {}),
    },
  };
}

function readSheet(
  bytes: Uint8Array,
  path: string,
  collector: SheetCollector,
  strings: readonly string[],
  dates: readonly boolean[],
  date1904: boolean,
  limits: Limits,
) {
  let row: [number, string][] = [];
  let nextColumn = 0;
  let cell: { column: number; type: string; style: number; value: string } | undefined;
  let reading: 'v' | 't' | undefined;
  let inlineString = false;
  const cap = limits.maxCellCharacters * 2;
  walkXml(
    bytes,
    {
      open(name, attributes) {
        if (name === 'row') {
          row = [];
          nextColumn = 0;
        } else if (name === 'c') {
          const reference = attributes.r;
          const column = reference ? columnIndex(reference) : -1;
          cell = {
            column: column >= 0 ? column : nextColumn,
            type: attributes.t ?? 'n',
            style: Number(attributes.s ?? 0),
            value: '',
          };
          nextColumn = cell.column + 1;
        } else if (name === 'v' && cell) reading = 'v';
        else if (name === 'is') inlineString = true;
        else if (name === 't' && inlineString) reading = 't';
      },
      text(text) {
        if (reading && cell && cell.value.length < cap) cell.value += text;
      },
      close(name) {
        if (name === 'v' || name === 't') reading = undefined;
        else if (name === 'is') inlineString = false;
        else if (name === 'c' && cell) {
          const value = cellText(cell, strings, dates, date1904);
          if (value !== '') row.push([cell.column, value]);
          cell = undefined;
        } else if (name === 'row') collector.addRow(row);
      },
    },
    path,
  );
}

function cellText(
  cell: { type: string; style: number; value: string },
  strings: readonly string[],
  dates: readonly boolean[],
  date1904: boolean,
): string {
  switch (cell.type) {
    case 's':
      return strings[Number(cell.value)] ?? '';
    case 'b':
      return cell.value === '1' ? 'TRUE' : cell.value === '0' ? 'FALSE' : cell.value;
    case 'n': {
      if (cell.value !== '' && dates[cell.style]) return serialToIso(Number(cell.value), date1904) ?? cell.value;
      return cell.value;
    }
    default:
      // str (a formula's string), inlineStr, e (an error such as #DIV/0!), d (an ISO date).
      return cell.value;
  }
}
