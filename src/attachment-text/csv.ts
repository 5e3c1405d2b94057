/**
 * @module attachment-text/csv
 * A CSV or TSV export as a Markdown table, parsed with Papa Parse (delimiter, quoting and line endings detected:
 * comma, semicolon, tab, pipe). The first row is the header. Rows beyond `maxRows` and columns beyond `maxColumns`
 * are counted and named, not kept; an unterminated quote takes the rest of the file as one cell, cut like any cell.
 */
import Papa from 'papaparse';
import type { Extracted } from './extracted.js';
import type { Limits } from './limits.js';
import { renderSheets, SheetCollector } from './sheets.js';

/** Reads CSV text as one Markdown table. `name`: the file name, shown above the table. */
export function readCsv(text: string, name: string, limits: Limits, delimiter?: string): Extracted {
  const sheet = new SheetCollector(name || 'table', limits);
  let malformed = 0;
  Papa.parse<string[]>(text, {
    delimiter: delimiter ?? '',
    delimitersToGuess: [',', ';', '\t', '|'],
    skipEmptyLines: 'greedy',
    step(result) {
      if (result.errors.length) malformed++;
      const cells: [number, string][] = [];
      result.data.forEach((value, column) => {
        if (value !== '') cells.push([column, value]);
      });
      sheet.addRow(cells);
    },
  });
  const rendered = renderSheets([sheet], limits, false);
  const omitted = [...rendered.omitted];
  if (malformed) omitted.push(`${malformed} rows had unbalanced quotes or a different number of fields.`);
  return {
    text: rendered.text,
    format: 'markdown',
    metadata: { sheets: rendered.sheets, ...(omitted.length ? { omitted } : {}) },
  };
}
