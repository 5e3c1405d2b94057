/**
 * @module messages/attachment-text-read
 * `read_attachment`: one page of a stored attachment's text. The bytes come from the blob store (an attachment over
 * the reader's byte limit is refused before any is read, and the whole file only when its text is not cached);
 * src/attachment-text reads them off the event loop, caches the whole text by content hash and cuts the page; this
 * module writes the answer in the wire's snake_case.
 */
import { readBlobChunks, type Database } from '../../storage/index.js';
import {
  AttachmentTextError,
  READER_DEFAULTS,
  type AttachmentMetadata,
  type AttachmentText,
  type AttachmentTextReader,
} from '../attachment-text/index.js';
import type { AttachmentTextPage, ReadAttachmentTextInput } from '../schemas/attachment-text.js';
import type { AttachmentRow } from './message-mapper.js';

/** The metadata of the engine in the wire's casing (absent fields left out). */
function wireMetadata(metadata: AttachmentMetadata): AttachmentTextPage['metadata'] {
  return {
    kind: metadata.kind,
    content_type: metadata.contentType,
    text_readable: metadata.textReadable,
    ...(metadata.note !== undefined ? { note: metadata.note } : {}),
    characters: metadata.characters,
    tokens: metadata.tokens,
    sha256: metadata.sha256,
    ...(metadata.title !== undefined ? { title: metadata.title } : {}),
    ...(metadata.author !== undefined ? { author: metadata.author } : {}),
    ...(metadata.created !== undefined ? { created: metadata.created } : {}),
    ...(metadata.pages !== undefined ? { pages: metadata.pages } : {}),
    ...(metadata.pagesRead !== undefined ? { pages_read: metadata.pagesRead } : {}),
    ...(metadata.sheets
      ? {
          sheets: metadata.sheets.map((sheet) => ({
            name: sheet.name,
            rows: sheet.rows,
            columns: sheet.columns,
            rows_shown: sheet.rowsShown,
            columns_shown: sheet.columnsShown,
            ...(sheet.hidden !== undefined ? { hidden: sheet.hidden } : {}),
          })),
        }
      : {}),
    ...(metadata.slides !== undefined ? { slides: metadata.slides } : {}),
    ...(metadata.events !== undefined ? { events: metadata.events } : {}),
    ...(metadata.image ? { image: metadata.image } : {}),
    ...(metadata.attachments
      ? {
          attachments: metadata.attachments.map((inner) => ({
            filename: inner.filename,
            content_type: inner.contentType,
            size: inner.bytes,
          })),
        }
      : {}),
    ...(metadata.omitted ? { omitted: metadata.omitted } : {}),
  };
}

/** One page of the text of `row` (an attachment the caller may read), as `read_attachment` answers it. */
export async function readAttachmentText(
  db: Database,
  reader: AttachmentTextReader,
  row: AttachmentRow,
  input: ReadAttachmentTextInput,
): Promise<AttachmentTextPage> {
  if (row.size > READER_DEFAULTS.maxBytes)
    throw new AttachmentTextError(
      'too_large',
      `The attachment is ${row.size} bytes; attachments over ${READER_DEFAULTS.maxBytes} bytes are not read as text (download it instead).`,
    );
  // The blob's address is its SHA-256 and its first chunk (512 KB) tells its kind: the rest is read only when the
  // reader's cache lacks the text, so the pages after the first read one chunk, not the file.
  const chunks = readBlobChunks(db.orm, row.blobHash);
  let page: AttachmentText;
  try {
    const first = await chunks.next();
    const head = first.done ? Buffer.alloc(0) : first.value;
    const load = async () => {
      const parts = [head];
      for await (const chunk of chunks) parts.push(chunk);
      return Buffer.concat(parts);
    };
    page = await reader.extract(
      { sha256: row.blobHash, size: row.size, head, load },
      { contentType: row.contentType, filename: row.filename, maxTokens: input.max_tokens, cursor: input.cursor },
    );
  } finally {
    await chunks.return(undefined);
  }
  return {
    id: row.id,
    grant_id: row.grantId,
    message_id: input.message_id,
    filename: row.filename,
    content_type: row.contentType,
    size: row.size,
    text: page.text,
    format: page.format,
    ...(page.truncated ? { truncated: true as const } : {}),
    ...(page.nextCursor !== undefined ? { next_cursor: page.nextCursor } : {}),
    page: page.page,
    metadata: wireMetadata(page.metadata),
  };
}
