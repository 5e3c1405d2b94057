/**
 * @module schemas/attachment-text
 * The contract of `read_attachment` (`GET /v3/grants/{grant_id}/attachments/{attachment_id}/text`, an extension of
 * the Nylas API): one page of an attachment's text, paged by tokens with an opaque cursor, and what is known of the
 * file besides. Written by src/messages/attachment-text-read.ts from src/attachment-text's result.
 */
import { z } from 'zod';
import { GetAttachmentInputSchema } from './messages.js';

/** Most tokens of one page: a page is meant for a model's context beside other things, not a whole book. */
export const MAX_ATTACHMENT_PAGE_TOKENS = 50_000;

export const ReadAttachmentTextInputSchema = GetAttachmentInputSchema.extend({
  max_tokens: z
    .number()
    .int()
    .min(1)
    .max(MAX_ATTACHMENT_PAGE_TOKENS)
    .optional()
    .describe(`Tokens a page (default 5000, at most ${MAX_ATTACHMENT_PAGE_TOKENS})`),
  cursor: z.string().min(1).max(512).optional().describe('A next_cursor'),
}).meta({ id: 'ReadAttachmentTextInput' });
export type ReadAttachmentTextInput = z.infer<typeof ReadAttachmentTextInputSchema>;

const SheetSchema = z.object({
  name: z.string().describe('Sheet or table name'),
  rows: z.number().int().describe('Non-empty rows in the file'),
  columns: z.number().int().describe('Columns of the widest row'),
  rows_shown: z.number().int().describe('Rows written out (within the row bound)'),
  columns_shown: z.number().int().describe('Columns written out'),
  hidden: z.boolean().optional().describe('A hidden sheet'),
});

export const AttachmentTextMetadataSchema = z
  .object({
    kind: z
      .enum(['pdf', 'docx', 'xlsx', 'ods', 'pptx', 'csv', 'html', 'text', 'calendar', 'message', 'image', 'unknown'])
      .describe('What the file was read as (its bytes win over its declared type); image and unknown have no text'),
    content_type: z.string().describe('The type it was read as'),
    text_readable: z.boolean().describe('False for images and unknown types: then note says why and text is empty'),
    note: z.string().optional().describe('Why there is no text, or what the bounds left out'),
    characters: z.number().int().describe('Characters of the whole text, across every page'),
    tokens: z.number().int().describe('Tokens (o200k_base) of the whole text, across every page'),
    sha256: z.string().describe('Lower-case hex SHA-256 of the bytes'),
    title: z.string().optional().describe('Title the document gives itself'),
    author: z.string().optional().describe('Author the document names'),
    created: z.string().optional().describe('When the document says it was created (ISO 8601)'),
    pages: z.number().int().optional().describe('PDF: pages in the file'),
    pages_read: z.number().int().optional().describe('PDF: pages read (within the page bound)'),
    sheets: z.array(SheetSchema).optional().describe('Spreadsheets and CSV: each sheet or table'),
    slides: z.number().int().optional().describe('Presentations: slides'),
    events: z.number().int().optional().describe('Calendars: events'),
    image: z
      .object({
        format: z.string().describe('png, jpeg, gif, webp, …'),
        width: z.number().int().optional().describe('Pixels'),
        height: z.number().int().optional().describe('Pixels'),
      })
      .optional()
      .describe('Images: format and size'),
    attachments: z
      .array(
        z.object({
          filename: z.string().describe('File name'),
          content_type: z.string().describe('MIME type'),
          size: z.number().int().describe('Bytes'),
        }),
      )
      .optional()
      .describe('An attached message: its own attachments (listed, not read)'),
    omitted: z
      .array(z.string())
      .optional()
      .describe('What the bounds left out (rows, columns, pages), one sentence each'),
  })
  .meta({ id: 'AttachmentTextMetadata' });

export const AttachmentTextSchema = z
  .object({
    id: z.string().describe('Attachment id'),
    grant_id: z.string().describe('Mailbox'),
    message_id: z.string().describe('Message the attachment belongs to'),
    filename: z.string().describe('File name (may be empty)'),
    content_type: z.string().describe('MIME type the message declares'),
    size: z.number().int().describe('Size in bytes'),
    text: z.string().describe('This page of the text (Markdown for documents, tables and slides; plain text else)'),
    format: z.enum(['markdown', 'text']).describe('How text is written'),
    truncated: z.literal(true).optional().describe('Present when more text follows: pass next_cursor as cursor'),
    next_cursor: z.string().optional().describe('Cursor of the next page (with truncated)'),
    page: z
      .object({
        start: z.number().int().describe('Offset of this page in the whole text (characters)'),
        end: z.number().int().describe('Offset where it ends'),
        tokens: z.number().int().describe('Tokens of this page'),
      })
      .describe('Where this page lies in the whole text'),
    metadata: AttachmentTextMetadataSchema.describe('What is known of the file besides its text'),
  })
  .meta({ id: 'AttachmentText' });
export type AttachmentTextPage = z.infer<typeof AttachmentTextSchema>;
