/**
 * `GET /v3/grants/{grant_id}/attachments/{attachment_id}/download?message_id=…`: the attachment's exact bytes,
 * streamed from the blob store, with its own Content-Type and a Content-Disposition carrying the file name.
 * Written by hand because the body is bytes, not JSON; the work is `core.mail.attachments.download`.
 */
import type { Hono } from 'hono';
import { GetAttachmentInputSchema } from '../../src/schemas/messages.js';
import { authorizeAs } from '../middleware/auth.js';
import type { AppEnv } from '../types.js';

/** A MIME type safe to echo in a header, else the generic one. */
function safeContentType(value: string): string {
  return /^[\w.+-]+\/[\w.+-]+$/.test(value) ? value : 'application/octet-stream';
}

/** `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf` (RFC 6266), quotes and controls removed. */
export function contentDisposition(type: 'attachment' | 'inline', filename: string): string {
  if (!filename) return type;
  const ascii = filename.replace(/[\x00-\x1f\x7f"\\]/g, '_').replace(/[^\x20-\x7e]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${type}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Mounts the download route on the authenticated `/v3` app. */
export function mountAttachmentDownload(v3: Hono<AppEnv>): void {
  v3.get('/grants/:grant_id/attachments/:attachment_id/download', async (c) => {
    const input = GetAttachmentInputSchema.parse({ ...c.req.param(), message_id: c.req.query('message_id') });
    await authorizeAs(c, 'get_attachment', input.grant_id);
    const download = await c.get('core').mail.attachments.download(c.get('principal'), input);
    const iterator = download.chunks[Symbol.asyncIterator]();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
      },
      async cancel() {
        await iterator.return?.();
      },
    });
    return c.body(body, 200, {
      'content-type': safeContentType(download.attachment.content_type),
      'content-length': String(download.attachment.size),
      'content-disposition': contentDisposition(download.disposition, download.attachment.filename),
    });
  });
}
