/**
 * @module operations/attachment-text
 * `read_attachment`: an attachment read as text, one page at a time (src/attachment-text through the attachments
 * area). On `/v3` it is an extension: `GET /v3/grants/{grant_id}/attachments/{attachment_id}/text?message_id=…`.
 */
import { AttachmentTextSchema, ReadAttachmentTextInputSchema } from '../schemas/attachment-text.js';
import { defineOperation } from './define-operation.js';

export const readAttachment = defineOperation({
  name: 'read_attachment',
  title: 'Read an attachment as text',
  description:
    'Reads an attachment as text, one page at a time: PDF, DOCX, XLSX/ODS/CSV (as Markdown tables), PPTX, HTML, plain text, calendars and attached messages. ' +
    'Take attachment_id and message_id from get_message. A page holds max_tokens (default 5,000); when truncated, call again with cursor = next_cursor. ' +
    'Images and unknown types answer their metadata only; a file that cannot be read (damaged, encrypted, a zip bomb) answers an error naming why.',
  input: ReadAttachmentTextInputSchema,
  output: AttachmentTextSchema,
  hints: { readOnly: true, idempotent: true },
  http: { method: 'GET', path: '/grants/:grant_id/attachments/:attachment_id/text' },
  tool: true,
  agent: { document: true },
  run: (core, input, { principal }) => core.mail.attachments.readText(principal, input),
});
