/**
 * @module tools/compact-document
 * The text rendering of one page of a document (an operation whose `agent` block says `document`: read_attachment):
 * a line about the file and the page, the page's text as it is, and the exact call that reads the next page. The
 * page is already sized by the caller's `max_tokens`, so nothing here cuts it.
 */
import { fieldText } from '../src/operations/index.js';
import { callText, grantOf, type Json } from './compact-items.js';

const kb = (bytes: unknown) => (typeof bytes === 'number' ? `${Math.max(1, Math.round(bytes / 1024))} KB` : '?');

/** The lines of a page of a document, for `tool` called with `input`. */
export function documentLines(tool: string, output: Json, input: Json): string[] {
  const metadata = (output.metadata ?? {}) as Json;
  const page = (output.page ?? {}) as Json;
  const name = typeof output.filename === 'string' && output.filename ? output.filename : 'unnamed attachment';
  const head = [
    `${JSON.stringify(name)} (${fieldText(metadata.kind ?? '?')}, ${fieldText(metadata.content_type ?? output.content_type ?? '?')}, ${kb(output.size)})`,
    typeof metadata.pages === 'number' ? `${metadata.pages} pages` : '',
    Array.isArray(metadata.sheets) ? `${metadata.sheets.length} sheet(s)` : '',
    typeof metadata.slides === 'number' ? `${metadata.slides} slides` : '',
    metadata.text_readable === false
      ? 'no text'
      : `characters ${fieldText(page.start ?? 0)}–${fieldText(page.end ?? 0)} of ${fieldText(metadata.characters ?? '?')}, ${fieldText(page.tokens ?? '?')} of ${fieldText(metadata.tokens ?? '?')} tokens`,
  ].filter(Boolean);
  const lines = [head.join(' · ')];
  if (typeof metadata.note === 'string') lines.push(`note: ${metadata.note}`);
  for (const omitted of Array.isArray(metadata.omitted) ? (metadata.omitted as unknown[]) : [])
    lines.push(`omitted: ${fieldText(omitted)}`);
  if (typeof output.text === 'string' && output.text !== '') lines.push('', output.text);
  if (output.truncated === true && typeof output.next_cursor === 'string') {
    const next = {
      tool,
      arguments: {
        ...grantOf(input),
        attachment_id: output.id,
        message_id: output.message_id,
        ...(typeof input.max_tokens === 'number' ? { max_tokens: input.max_tokens } : {}),
        cursor: output.next_cursor,
      },
    };
    lines.push('', `[more: ${callText(next)} reads the next page]`);
  } else if (metadata.text_readable !== false) lines.push('', '[end of the text]');
  return lines;
}
