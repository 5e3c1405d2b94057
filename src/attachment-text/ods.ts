/**
 * @module attachment-text/ods
 * An OpenDocument spreadsheet (ODF 1.3, LibreOffice Calc) as Markdown tables, from `content.xml` in one streaming
 * pass. ODS writes runs of equal cells and rows once with a repeat count (`table:number-columns-repeated`,
 * `table:number-rows-repeated`; LibreOffice ends every sheet with a million empty rows that way): a run is
 * expanded only within the bounds, so the count costs nothing. Dates, booleans and numbers are read from their
 * typed attributes (`office:date-value` …), text from the paragraphs of the cell. Title and author from `meta.xml`.
 */
import { AttachmentTextError } from './errors.js';
import type { Extracted } from './extracted.js';
import type { Limits } from './limits.js';
import { renderSheets, SheetCollector } from './sheets.js';
import { attribute, walkXml } from './xml.js';
import type { ZipArchive } from './zip.js';

/** Repeat counts are read up to this (a sheet has at most 1,048,576 rows and 16,384 columns). */
const MAX_REPEAT = 1_048_576;

function repeatOf(value: string | undefined): number {
  const n = Number(value ?? 1);
  return Number.isFinite(n) && n >= 1 ? Math.min(MAX_REPEAT, Math.floor(n)) : 1;
}

function metaProperties(archive: ZipArchive): { title?: string; author?: string; created?: string } {
  const bytes = archive.read('meta.xml');
  const found: { title?: string; author?: string; created?: string } = {};
  if (!bytes) return found;
  let field: 'title' | 'author' | 'created' | undefined;
  walkXml(
    bytes,
    {
      open(name) {
        field =
          name === 'title'
            ? 'title'
            : name === 'initial-creator' || name === 'creator'
              ? 'author'
              : name === 'creation-date'
                ? 'created'
                : undefined;
      },
      close() {
        field = undefined;
      },
      text(text) {
        if (field && text.trim() && !(field === 'author' && found.author))
          found[field] = ((found[field] ?? '') + text).trim().slice(0, 500);
      },
    },
    'meta.xml',
  );
  return found;
}

/** Reads an ODS archive (already opened and checked) as Markdown tables. */
export function readOds(archive: ZipArchive, limits: Limits): Extracted {
  const content = archive.read('content.xml');
  if (!content) throw new AttachmentTextError('unreadable', 'The ODS has no content.xml.');
  const sheets: SheetCollector[] = [];
  let sheet: SheetCollector | undefined;
  let row: [number, string][] = [];
  let rowRepeat = 1;
  let column = 0;
  let cell: { repeat: number; typed: string | undefined; text: string; paragraphs: number } | undefined;
  let textDepth = 0;
  const cap = limits.maxCellCharacters * 2;

  walkXml(
    content,
    {
      open(name, attributes) {
        switch (name) {
          case 'table':
            sheet = new SheetCollector(
              (attribute(attributes, 'table:name') ?? `Sheet ${sheets.length + 1}`).slice(0, 200),
              limits,
            );
            sheets.push(sheet);
            break;
          case 'table-row':
            row = [];
            column = 0;
            rowRepeat = repeatOf(attribute(attributes, 'table:number-rows-repeated'));
            break;
          case 'table-cell':
          case 'covered-table-cell': {
            const type = attribute(attributes, 'office:value-type');
            const typed =
              type === 'date'
                ? attribute(attributes, 'office:date-value')?.replace('T00:00:00', '').replace('T', ' ')
                : type === 'boolean'
                  ? attribute(attributes, 'office:boolean-value') === 'true'
                    ? 'TRUE'
                    : 'FALSE'
                  : type === 'float' || type === 'percentage' || type === 'currency'
                    ? attribute(attributes, 'office:value')
                    : type === 'time'
                      ? attribute(attributes, 'office:time-value')
                      : undefined;
            cell = {
              repeat: repeatOf(attribute(attributes, 'table:number-columns-repeated')),
              typed,
              text: '',
              paragraphs: 0,
            };
            break;
          }
          case 'p':
          case 'h':
            if (cell && textDepth >= 0) {
              if (cell.paragraphs++ > 0) cell.text += '\n';
              textDepth++;
            }
            break;
          case 's':
          case 'tab':
          case 'line-break':
            if (cell && textDepth) cell.text += name === 'line-break' ? '\n' : ' ';
            break;
          case 'annotation':
            // A comment on the cell: its paragraphs are not the cell's value.
            textDepth = -1_000_000;
            break;
        }
      },
      text(text) {
        if (cell && textDepth > 0 && cell.text.length < cap) cell.text += text;
      },
      close(name) {
        switch (name) {
          case 'annotation':
            textDepth = 0;
            break;
          case 'p':
          case 'h':
            if (cell && textDepth > 0) textDepth--;
            break;
          case 'table-cell':
          case 'covered-table-cell': {
            if (!cell) break;
            const value = cell.typed ?? cell.text;
            if (value !== '') {
              // Repeats of a non-empty cell: expanded within the column bound only.
              const end = Math.min(column + cell.repeat, limits.maxColumns + 1);
              for (let at = column; at < end; at++) row.push([at, value]);
              if (column + cell.repeat > end) row.push([column + cell.repeat - 1, value]);
            }
            column += cell.repeat;
            cell = undefined;
            break;
          }
          case 'table-row':
            sheet?.addRow(row, rowRepeat);
            break;
          case 'table':
            sheet = undefined;
            break;
        }
      },
    },
    'content.xml',
  );

  const rendered = renderSheets(sheets, limits);
  return {
    text: rendered.text,
    format: 'markdown',
    metadata: {
      ...metaProperties(archive),
      sheets: rendered.sheets,
      ...(rendered.omitted.length ? { omitted: rendered.omitted } : {}),
    },
  };
}
