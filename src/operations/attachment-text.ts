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
    'Reads an attachment (id from get_message) as text, paged: PDF, DOCX, sheets, slides, HTML, text, calendars, messages. ' +
    'More: cursor=next_cursor. Images: metadata only.',
  input: ReadAttachmentTextInputSchema,
  output: AttachmentTextSchema,
  hints: { readOnly: true, idempotent: true },
  http: { method: 'GET', path: '/grants/:grant_id/attachments/:attachment_id/text' },
  tool: true,
  agent: { document: true },
  run: (core, input, { principal }) => core.mail.attachments.readText(principal, input),
});
