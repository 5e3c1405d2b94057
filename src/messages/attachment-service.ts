/**
 * @module messages/attachment-service
 * Attachments of received and sent messages: metadata, and the exact bytes (streamed chunk by chunk from the
 * blob store, never held whole).
 */
import { and, eq } from 'drizzle-orm';
import { readBlobChunks, tables } from '../../storage/index.js';
import type { Principal } from '../applications/application-service.js';
import type { CoreDeps } from '../deps.js';
import { notFound } from '../errors.js';
import type { GrantService } from '../grants/grant-service.js';
import type { Attachment, GetAttachmentInput } from '../schemas/messages.js';
import { toAttachment, type AttachmentRow } from './message-mapper.js';

/** An attachment's metadata and its bytes as a stream of chunks. */
export interface AttachmentDownload {
  attachment: Attachment;
  /** `attachment` or `inline`, for Content-Disposition. */
  disposition: 'attachment' | 'inline';
  chunks: AsyncIterable<Buffer>;
}

/** Creates the attachment service. */
export function createAttachmentService({ db }: CoreDeps, grants: GrantService) {
  async function requireAttachment(principal: Principal, input: GetAttachmentInput): Promise<AttachmentRow> {
    const grant = await grants.require(principal, input.grant_id);
    const rows = await db.orm
      .select()
      .from(tables.attachments)
      .where(and(eq(tables.attachments.grantId, grant.id), eq(tables.attachments.id, input.attachment_id), eq(tables.attachments.messageId, input.message_id)))
      .limit(1);
    if (!rows[0]) throw notFound('Attachment', input.attachment_id);
    return rows[0];
  }

  return {
    /** Metadata of one attachment of one message. */
    async find(principal: Principal, input: GetAttachmentInput): Promise<Attachment> {
      return toAttachment(await requireAttachment(principal, input));
    },

    /** The attachment's exact bytes. */
    async download(principal: Principal, input: GetAttachmentInput): Promise<AttachmentDownload> {
      const row = await requireAttachment(principal, input);
      return {
        attachment: toAttachment(row),
        disposition: row.contentDisposition === 'inline' ? 'inline' : 'attachment',
        chunks: readBlobChunks(db.orm, row.blobHash),
      };
    },
  };
}

export type AttachmentService = ReturnType<typeof createAttachmentService>;
