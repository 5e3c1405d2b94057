/**
 * @module messages/message-mapper
 * Rows of the mail store → Nylas wire objects (messages, attachments, threads). The one place that maps: messages and
 * attachments in message-wire.ts (also used on the mail writer thread), re-exported here.
 */
import type { tables } from '../../storage/index.js';
import type { MessageRow } from './contracts.js';
import type { Draft } from '../schemas/drafts.js';
import type { Message } from '../schemas/messages.js';
import type { Thread } from '../schemas/threads.js';
import { participants } from './message-wire.js';

// Shared with the mail writer thread, re-exported so importers of this module keep working.
export { participants, toAttachment, toMessage, type PresentedMessageRow } from './message-wire.js';

export type { MessageRow } from './contracts.js';
export type AttachmentRow = typeof tables.attachments.$inferSelect;
export type ThreadRow = typeof tables.threads.$inferSelect;

/** The `fields=raw_mime` form: only the identity and the raw message, base64url. */
export function toRawMimeMessage(row: Pick<MessageRow, 'id' | 'grantId'>, raw: Buffer): Message {
  return { id: row.id, grant_id: row.grantId, object: 'message', raw_mime: raw.toString('base64url') };
}

/** A thread row, its message ids and draft ids (oldest first) and its latest message or draft → the wire thread. */
export function toThread(
  row: ThreadRow,
  messageIds: string[],
  latest: Message | Draft | undefined,
  draftIds: string[] = [],
): Thread {
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

/**
 * The fields a `select` always keeps: an object's identity (`id`, the `grant_id` it belongs to, its `object` type), so
 * that every selected object is still a valid message, thread or draft and can be told apart and fetched again.
 */
export const ALWAYS_SELECTED = ['id', 'grant_id', 'object'] as const;

/** Keeps only the fields a `select` names (and always {@link ALWAYS_SELECTED}). */
export function selectFields<T extends Record<string, unknown>>(object: T, select: string | undefined): Partial<T> {
  if (select === undefined) return object;
  const wanted = new Set<string>([...ALWAYS_SELECTED, ...select.split(',')]);
  return Object.fromEntries(Object.entries(object).filter(([key]) => wanted.has(key))) as Partial<T>;
}
