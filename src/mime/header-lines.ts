/**
 * @module mime/header-lines
 * Reading a header section line by line: continuation lines (starting with a space or tab) are unfolded onto the
 * field before them, lines without a colon are skipped, and at most `maxHeaders` fields are kept. Shared by the raw
 * header reader of inbound mail (./parse-inbound.ts) and the report reader of bounces (src/mime/report-mime.ts).
 */

/** One header field: its name as written (trimmed) and its unfolded value. */
export interface HeaderLine {
  name: string;
  value: string;
}

/** The fields of a header section (the text before the blank line), unfolded, at most `maxHeaders` of them. */
export function unfoldHeaderLines(section: string, maxHeaders: number): HeaderLine[] {
  const headers: HeaderLine[] = [];
  for (const line of section.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && headers.length > 0) {
      headers[headers.length - 1]!.value += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    if (headers.length >= maxHeaders) break;
    headers.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() });
  }
  return headers;
}
