/**
 * @module messages/message-mapper
 * Rows of the mail store → Nylas wire objects (messages, attachments, threads). The one place that maps.
 */
import type { tables } from '../../storage/index.js';
import type { Attachment, Message, Participant } from '../schemas/messages.js';
import type { Thread } from '../schemas/threads.js';

export type MessageRow = typeof tables.messages.$inferSelect;
export type AttachmentRow = typeof tables.attachments.$inferSelect;
export type ThreadRow = typeof tables.threads.$inferSelect;

/** Stored addresses → wire participants (a missing name stays absent). */
function participants(list: { name?: string; email: string }[]): Participant[] {
  return list.map((entry) => (entry.name ? { name: entry.name, email: entry.email } : { email: entry.email }));
}

/** An attachment row → the wire attachment. */
export function toAttachment(row: AttachmentRow): Attachment {
  return {
    id: row.id,
    grant_id: row.grantId,
    filename: row.filename,
    content_type: row.contentType,
    size: row.size,
    is_inline: row.isInline,
    ...(row.contentId !== null ? { content_id: row.contentId } : {}),
    ...(row.contentDisposition !== null ? { content_disposition: row.contentDisposition } : {}),
  };
}

/** A message row, its body and attachments → the wire message. */
export function toMessage(row: MessageRow, body: string, attachments: AttachmentRow[]): Message {
  return {
    id: row.id,
    grant_id: row.grantId,
    object: 'message',
    thread_id: row.threadId,
    subject: row.subject,
    from: participants(row.fromAddresses),
    to: participants(row.toAddresses),
    cc: participants(row.ccAddresses),
    bcc: participants(row.bccAddresses),
    reply_to: participants(row.replyToAddresses),
    date: row.date,
    unread: row.unread,
    starred: row.starred,
    snippet: row.snippet,
    body,
    folders: row.folders,
    attachments: attachments.map(toAttachment),
    metadata: row.metadata,
  };
}

/** The `fields=raw_mime` form: only the identity and the raw message, base64url. */
export function toRawMimeMessage(row: MessageRow, raw: Buffer): Message {
  return { id: row.id, grant_id: row.grantId, object: 'message', raw_mime: raw.toString('base64url') };
}

/** A thread row, its message ids and draft ids (oldest first) and its latest message or draft → the wire thread. */
export function toThread(row: ThreadRow, messageIds: string[], latest: Message | undefined, draftIds: string[] = []): Thread {
  return {
    id: row.id,
    grant_id: row.grantId,
    object: 'thread',
    subject: row.subject,
    snippet: row.snippet,
    participants: participants(row.participants),
    message_ids: messageIds,
    draft_ids: draftIds,
    folders: row.folders,
    ...(latest ? { latest_draft_or_message: latest } : {}),
    earliest_message_date: row.earliestMessageDate,
    ...(row.latestMessageReceivedDate !== null ? { latest_message_received_date: row.latestMessageReceivedDate } : {}),
    ...(row.latestMessageSentDate !== null ? { latest_message_sent_date: row.latestMessageSentDate } : {}),
    has_attachments: row.hasAttachments,
    has_drafts: draftIds.length > 0,
    starred: row.starred,
    unread: row.unread,
  };
}

/** Keeps only the fields a `select` names (and always `id`). */
export function selectFields<T extends Record<string, unknown>>(object: T, select: string | undefined): Partial<T> {
  if (select === undefined) return object;
  const wanted = new Set(['id', ...select.split(',')]);
  return Object.fromEntries(Object.entries(object).filter(([key]) => wanted.has(key))) as Partial<T>;
}
