/**
 * `PUT /uploads/{attachment_id}?token=…`: the pre-signed URL of a large-attachment upload session (the SDK's
 * `attachments.createUploadSession` answers it). It carries its own secret, so it sits outside `/v3` and takes
 * no API key, as a pre-signed storage URL does. The body is the file's bytes, up to 40 MB; the work is
 * `core.sending.outbound.uploads.upload`.
 */
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { UPLOAD_PATH } from '../../src/outbound/index.js';
import { AppError } from '../../src/errors.js';
import { MAX_UPLOAD_BYTES } from '../../src/schemas/attachment-uploads.js';
import type { AppEnv } from '../types.js';

/** Mounts the upload route on the root app (outside the authenticated `/v3`). */
export function mountAttachmentUpload(app: Hono<AppEnv>): void {
  const limit = bodyLimit({
    maxSize: MAX_UPLOAD_BYTES,
    onError: () => {
      throw new AppError(
        'payload_too_large',
        `The file is larger than ${MAX_UPLOAD_BYTES} bytes (40 MB), the most an upload session takes.`,
      );
    },
  });
  app.put(`${UPLOAD_PATH}/:attachment_id`, limit, async (c) => {
    const bytes = Buffer.from(await c.req.arrayBuffer());
    await c.get('core').sending.outbound.uploads.upload(c.req.param('attachment_id'), c.req.query('token'), bytes);
    return c.body(null, 200);
  });
}
