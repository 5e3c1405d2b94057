/**
 * Large-attachment upload sessions (`/v3/grants/{grant_id}/attachment-uploads`). HTTP-only: the bytes go by a
 * pre-signed `PUT`, which an agent's tool call cannot make.
 */
import {
  AttachmentUploadCompleteSchema,
  AttachmentUploadSessionSchema,
  CompleteAttachmentUploadInputSchema,
  CreateAttachmentUploadInputSchema,
  MAX_UPLOAD_BYTES,
} from '../schemas/attachment-uploads.js';
import { defineOperation } from './define-operation.js';

export const createAttachmentUpload = defineOperation({
  name: 'create_attachment_upload',
  title: 'Open a large-attachment upload',
  description:
    `Opens an upload session for one file of up to ${MAX_UPLOAD_BYTES} bytes (40 MB, the size of a whole message). PUT the bytes to the url it returns (no API key), ` +
    'then complete it; then give attachment_id as attachments[].id in a send or draft of this mailbox. Sessions expire after one hour.',
  input: CreateAttachmentUploadInputSchema,
  output: AttachmentUploadSessionSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/grants/:grant_id/attachment-uploads', status: 201 },
  tool: false,
  run: (core, input, { principal, origin }) => core.sending.outbound.uploads.create(principal, input, origin),
});

export const completeAttachmentUpload = defineOperation({
  name: 'complete_attachment_upload',
  title: 'Complete a large-attachment upload',
  description:
    'Completes an upload session after its PUT: checks the size announced at creation (a mismatch fails the session, 400) and makes the file usable by id in sends and drafts (status ready). Completing twice is harmless.',
  input: CompleteAttachmentUploadInputSchema,
  output: AttachmentUploadCompleteSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'POST', path: '/grants/:grant_id/attachment-uploads/:attachment_id/complete' },
  tool: false,
  run: (core, input, { principal }) => core.sending.outbound.uploads.complete(principal, input),
});
