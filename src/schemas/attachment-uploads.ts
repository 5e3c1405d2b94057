/**
 * @module schemas/attachment-uploads
 * Large-attachment upload sessions, as in the Nylas SDK's `models/attachments.ts` (`AttachmentUploadSession`,
 * `AttachmentUploadSessionComplete`) and `resources/attachments.ts` (`createUploadSession`, `completeUploadSession`).
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema } from './common.js';
import { CONTENT_TYPE, headerText } from './send.js';

/** The largest file a session takes: the size of a whole message (attachments count towards it when sent). */
export const MAX_UPLOAD_BYTES = 40 * 1024 * 1024;

export const UploadStatusSchema = z
  .enum(['uploading', 'ready', 'failed', 'expired'])
  .describe('uploading (waiting for the bytes or for complete), ready, failed or expired');

export const CreateAttachmentUploadInputSchema = z.object({
  grant_id: GrantIdSchema,
  filename: headerText(255).min(1).describe('File name shown to the recipient'),
  content_type: z
    .string()
    .max(255)
    .regex(CONTENT_TYPE, 'must be a MIME type such as application/pdf')
    .describe('MIME type, such as application/pdf'),
  size: z
    .number()
    .int()
    .min(0)
    .max(MAX_UPLOAD_BYTES)
    .optional()
    .describe(`Expected size in bytes (at most ${MAX_UPLOAD_BYTES}); completion checks the upload against it`),
});
export type CreateAttachmentUploadInput = z.infer<typeof CreateAttachmentUploadInputSchema>;

export const AttachmentUploadSessionSchema = z
  .object({
    attachment_id: z
      .string()
      .describe('Session id: complete it with this id, then give it as attachments[].id in a send or draft'),
    method: z.literal('PUT').describe('HTTP method of the upload'),
    url: z.string().describe('Pre-signed URL to PUT the bytes to (no Authorization header)'),
    headers: z.record(z.string(), z.string()).describe('Headers to send with the PUT (none are required: empty)'),
    expires_at: z.string().describe('When the session expires (RFC 3339, one hour after creation)'),
    max_size: z.number().int().describe('Largest upload accepted, in bytes'),
    size: z.number().int().describe('Expected size in bytes (0 when not given)'),
    content_type: z.string(),
    filename: z.string(),
    grant_id: z.string(),
  })
  .meta({ id: 'AttachmentUploadSession' });
export type AttachmentUploadSession = z.infer<typeof AttachmentUploadSessionSchema>;

export const CompleteAttachmentUploadInputSchema = z.object({
  grant_id: GrantIdSchema,
  attachment_id: IdSchema.describe('Upload session id'),
});
export type CompleteAttachmentUploadInput = z.infer<typeof CompleteAttachmentUploadInputSchema>;

export const AttachmentUploadCompleteSchema = z
  .object({
    attachment_id: z.string(),
    grant_id: z.string(),
    status: UploadStatusSchema,
  })
  .meta({ id: 'AttachmentUploadComplete' });
export type AttachmentUploadComplete = z.infer<typeof AttachmentUploadCompleteSchema>;
