/**
 * @module messages/attachment-service
 * Attachments of received and sent messages: metadata, and the exact bytes (streamed chunk by chunk from the
 * blob store, never held whole).
 */
import { and, eq } from 'drizzle-orm';
import { readBlobChunks, tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { AttachmentTextReader } from '../attachment-text/index.js';
import type { CoreDeps } from '../ports/index.js';
import { notFound } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import type {
  Attachment,
  AttachmentWithContent,
  GetAttachmentInput,
  ReadAttachmentInput,
} from '../schemas/messages.js';
import type { AttachmentTextPage, ReadAttachmentTextInput } from '../schemas/attachment-text.js';
import { readAttachmentText } from './attachment-text-read.js';
import type { AttachmentDownload, AttachmentService } from './contracts.js';
import { toAttachment, type AttachmentRow } from './message-mapper.js';

/** Bytes `read` returns when the caller does not say. */
const DEFAULT_INLINE_BYTES = 1024 * 1024;

/** Types whose bytes are text an agent can read as is. */
function isTextType(contentType: string): boolean {
  const type = contentType.toLowerCase().split(';')[0]!.trim();
  return (
    type.startsWith('text/') ||
    /^application\/(json|xml|csv|ics|x-yaml|yaml|javascript)$/.test(type) ||
    type.endsWith('+json') ||
    type.endsWith('+xml')
  );
}

/** Creates the attachment service; `reader` reads attachments as text (the core's, closed with it). */
export function createAttachmentService(
  { db }: CoreDeps,
  grants: GrantService,
  reader: AttachmentTextReader,
): AttachmentService {
  async function requireAttachment(principal: Principal, input: GetAttachmentInput): Promise<AttachmentRow> {
    const grant = await grants.require(principal, input.grant_id);
    const find = (messageId: string) =>
      db.orm
        .select()
        .from(tables.attachments)
        .where(
          and(
            eq(tables.attachments.grantId, grant.id),
            eq(tables.attachments.id, input.attachment_id),
            eq(tables.attachments.messageId, messageId),
          ),
        )
        .limit(1);
    let [row] = await find(input.message_id);
    if (!row) {
      // message_id may be a draft id: its attachments belong to the draft's current version.
      const [draft] = await db.orm
        .select({ messageId: tables.draftDetails.messageId })
        .from(tables.draftDetails)
        .where(and(eq(tables.draftDetails.grantId, grant.id), eq(tables.draftDetails.id, input.message_id)))
        .limit(1);
      if (draft) [row] = await find(draft.messageId);
    }
    if (!row) throw notFound('Attachment', input.attachment_id);
    return row;
  }

  return {
    /**
     * Metadata and content of one attachment, for agents: text types as text, anything else as Base64, at
     * most `max_bytes` (default 1 MB) read from the blob store.
     */
    async read(principal: Principal, input: ReadAttachmentInput): Promise<AttachmentWithContent> {
      const row = await requireAttachment(principal, input);
      const limit = input.max_bytes ?? DEFAULT_INLINE_BYTES;
      const parts: Buffer[] = [];
      let length = 0;
      for await (const chunk of readBlobChunks(db.orm, row.blobHash)) {
        parts.push(chunk);
        length += chunk.length;
        if (length >= limit) break;
      }
      const bytes = Buffer.concat(parts).subarray(0, limit);
      const attachment = toAttachment(row);
      const text = isTextType(attachment.content_type);
      return {
        ...attachment,
        content: {
          encoding: text ? 'utf8' : 'base64',
          data: text ? bytes.toString('utf8') : bytes.toString('base64'),
          truncated: attachment.size > bytes.length,
        },
      };
    },

    /** Metadata of one attachment of one message. */
    async find(principal: Principal, input: GetAttachmentInput): Promise<Attachment> {
      return toAttachment(await requireAttachment(principal, input));
    },

    /**
     * One page of the attachment's text (src/attachment-text): found as {@link find} finds it (another application's,
     * or outside the key's scope, is not found), then read off the event loop, cached by content hash.
     */
    async readText(principal: Principal, input: ReadAttachmentTextInput): Promise<AttachmentTextPage> {
      return readAttachmentText(db, reader, await requireAttachment(principal, input), input);
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

export type { AttachmentDownload, AttachmentService } from './contracts.js';
