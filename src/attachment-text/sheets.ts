/**
 * @module attachment-text/sheets
 * What spreadsheets (XLSX, ODS) and CSV have in common: a sheet's rows collected within the bounds (empty rows
 * skipped, cells beyond `maxColumns` and rows beyond `maxRows` counted, not kept), then written as a Markdown table
 * under the sheet's name, with a line saying what was left out.
 */
import type { SheetSummary } from './contracts.js';
import type { Limits } from './limits.js';
import { columnLetters, count, renderTable } from './markdown-table.js';

/** Collects the rows of one sheet within the limits. */
export class SheetCollector {
  readonly rows: string[][] = [];
  /** Non-empty rows seen, and the widest row's columns (index of its last non-empty cell + 1). */
  rowCount = 0;
  columnCount = 0;
  /** Characters kept, and whether rows were dropped for `maxCharacters` rather than `maxRows`. */
  private characters = 0;
  private fullOfCharacters = false;

  constructor(
    readonly name: string,
    private readonly limits: Limits,
    readonly hidden = false,
  ) {}

  /**
   * Adds a row given as sparse cells (column index → text), `repeat` times (ODS repeats rows). Empty rows are
   * skipped; cells at or beyond `maxColumns` only widen the count.
   */
  addRow(cells: readonly (readonly [number, string])[], repeat = 1): void {
    let last = -1;
    for (const [column, text] of cells) if (text !== '' && column > last) last = column;
    if (last < 0) return;
    this.columnCount = Math.max(this.columnCount, last + 1);
    const room = this.fullOfCharacters ? 0 : this.limits.maxRows - this.rows.length;
    let kept = Math.min(repeat, Math.max(0, room));
    if (kept > 0) {
      const row: string[] = [];
      const cellCap = this.limits.maxCellCharacters * 2;
      let length = 0;
      for (const [column, text] of cells)
        if (column < this.limits.maxColumns) {
          row[column] = text.length > cellCap ? text.slice(0, cellCap) : text;
          length += Math.min(text.length, this.limits.maxCellCharacters) + 3;
        }
      for (let index = 0; index < row.length; index++) row[index] ??= '';
      if (this.characters + length * kept > this.limits.maxCharacters) {
        kept = Math.max(0, Math.floor((this.limits.maxCharacters - this.characters) / Math.max(1, length)));
        this.fullOfCharacters = true;
      }
      this.characters += length * kept;
      for (let copy = 0; copy < kept; copy++) this.rows.push(row);
    }
    this.rowCount += repeat;
  }

  /** The sheet's summary for the metadata. */
  summary(): SheetSummary {
    return {
      name: this.name,
      rows: this.rowCount,
      columns: this.columnCount,
      rowsShown: this.rows.length,
      columnsShown: Math.min(this.columnCount, this.limits.maxColumns),
      ...(this.hidden ? { hidden: true } : {}),
    };
  }

  /** The sheet as Markdown: a heading, the table, and what was left out. */
  render(index: number, total: number, heading = true): { text: string; omitted: string[] } {
    const omitted: string[] = [];
    const parts: string[] = [];
    if (heading)
      parts.push(
        `## Sheet ${index + 1} of ${total}: ${this.name.replace(/\s+/g, ' ')}${this.hidden ? ' (hidden)' : ''}`,
      );
    if (this.rows.length === 0) parts.push('_(empty)_');
    else parts.push(renderTable(this.rows, this.limits));
    const columnsShown = Math.min(this.columnCount, this.limits.maxColumns);
    const notes: string[] = [];
    if (this.rowCount > this.rows.length) {
      const limit = this.fullOfCharacters
        ? `${count(this.limits.maxCharacters)} characters`
        : `${count(this.limits.maxRows)} rows`;
      const note = `rows ${count(this.rows.length + 1)}–${count(this.rowCount)} not shown (limit ${limit})`;
      notes.push(note);
      omitted.push(`${this.name}: ${note}`);
    }
    if (this.columnCount > columnsShown) {
      const note = `columns ${columnLetters(columnsShown)}–${columnLetters(this.columnCount - 1)} not shown (limit ${count(this.limits.maxColumns)} columns)`;
      notes.push(note);
      omitted.push(`${this.name}: ${note}`);
    }
    const size = `${count(this.rowCount)} rows × ${count(this.columnCount)} columns`;
    parts.push(`_${size}${notes.length ? `; ${notes.join('; ')}` : ''}._`);
    return { text: parts.join('\n\n'), omitted };
  }
}

/** Sheets as one Markdown text, cut at `maxCharacters` between sheets. */
export function renderSheets(
  sheets: readonly SheetCollector[],
  limits: Limits,
  headings = true,
): { text: string; omitted: string[]; sheets: SheetSummary[] } {
  const parts: string[] = [];
  const omitted: string[] = [];
  let size = 0;
  sheets.forEach((sheet, index) => {
    if (size > limits.maxCharacters) return;
    const rendered = sheet.render(index, sheets.length, headings);
    size += rendered.text.length + 2;
    parts.push(rendered.text);
    omitted.push(...rendered.omitted);
  });
  if (parts.length < sheets.length)
    omitted.push(
      `Sheets ${parts.length + 1}–${sheets.length} not shown (over ${count(limits.maxCharacters)} characters).`,
    );
  return { text: parts.join('\n\n'), omitted, sheets: sheets.map((sheet) => sheet.summary()) };
}
