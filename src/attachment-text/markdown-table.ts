/**
 * @module attachment-text/markdown-table
 * Rows of cells (a sheet, a CSV) as a Markdown table: the first row is the header, cells are escaped (`|`, line
 * breaks) and cut to a length, columns to a count. Linear in the cells written.
 */

/** Bounds of a table. */
export interface TableBounds {
  maxColumns: number;
  maxCellCharacters: number;
}

/** One cell as Markdown table text: one line, pipes escaped, whitespace collapsed, cut with an ellipsis. */
export function tableCell(value: string, maxCharacters: number): string {
  let text = value.length > maxCharacters * 2 ? value.slice(0, maxCharacters * 2) : value;
  text = text
    .replace(/\r\n?|\n/g, ' <br> ')
    .replace(/[\t\v\f ]+/g, ' ')
    .trim();
  if (text.length > maxCharacters || value.length > maxCharacters * 2) text = `${text.slice(0, maxCharacters)}…`;
  return text.replaceAll('\\', '\\\\').replaceAll('|', '\\|');
}

/**
 * The table of `rows` (already cut to the rows wanted): as many columns as the widest row, at most `maxColumns`;
 * shorter rows are padded. An empty header cell is named by its column letter, so the table stays a table.
 */
export function renderTable(rows: readonly (readonly string[])[], bounds: TableBounds): string {
  if (rows.length === 0) return '';
  let width = 0;
  for (const row of rows) width = Math.max(width, Math.min(row.length, bounds.maxColumns));
  if (width === 0) return '';
  const line = (row: readonly string[], header: boolean) => {
    const cells: string[] = [];
    for (let column = 0; column < width; column++) {
      const cell = tableCell(row[column] ?? '', bounds.maxCellCharacters);
      cells.push(header && cell === '' ? columnLetters(column) : cell);
    }
    return `| ${cells.join(' | ')} |`;
  };
  const out = [line(rows[0]!, true), `|${' --- |'.repeat(width)}`];
  for (let index = 1; index < rows.length; index++) out.push(line(rows[index]!, false));
  return out.join('\n');
}

/** A spreadsheet column's letters (0 → A, 26 → AA). */
export function columnLetters(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** A column's index from the letters of a cell reference (`B7` → 1); -1 when there are none. */
export function columnIndex(reference: string): number {
  let index = 0;
  let letters = 0;
  for (; letters < reference.length && letters < 4; letters++) {
    const code = reference.charCodeAt(letters) & ~32;
    if (code < 65 || code > 90) break;
    index = index * 26 + (code - 64);
  }
  return letters === 0 ? -1 : index - 1;
}

/** `n` with thousands separators, for the notes on what was left out. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}
