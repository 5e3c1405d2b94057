/**
 * @module storage/repositories/thread-aggregates
 * How one new message changes its thread's aggregates (participants, dates, latest message, flags, folders).
 * Two places fold messages into threads and must agree: the mail store's transaction on the event loop
 * (src/messages/mail-store.ts) and the mail writer thread (storage/engine/mail-writer-worker.ts).
 */
import type { StoredAddress, messages, threads } from '../schema/mail.js';

type MessageRow = typeof messages.$inferSelect;
type ThreadRow = typeof threads.$inferSelect;

/** Participants kept on a thread (a mailing-list thread would otherwise grow without bound). */
export const MAX_THREAD_PARTICIPANTS = 100;
/** The folder whose messages count as sent (for a thread's latest_message_sent_date). */
export const SENT_FOLDER = 'sent';
/**
 * The folder of drafts: a draft is the thread's latest draft or message, but neither received nor sent, so it moves
 * neither latest_message_received_date nor latest_message_sent_date (as in Nylas).
 */
export const DRAFTS_FOLDER = 'drafts';

/** Which of a thread's dates a message moves: received, sent, or (a draft) neither. */
export function dateKindOf(row: Pick<MessageRow, 'folders'>): 'received' | 'sent' | 'draft' {
  if (row.folders.includes(DRAFTS_FOLDER)) return 'draft';
  return row.folders.includes(SENT_FOLDER) ? 'sent' : 'received';
}

/** Union of address lists, first spelling wins (compared case-insensitively), at most `limit`. */
export function mergeParticipants(
  base: StoredAddress[],
  more: StoredAddress[],
  limit = MAX_THREAD_PARTICIPANTS,
): StoredAddress[] {
  const seen = new Set(base.map((entry) => entry.email.toLowerCase()));
  const out = [...base];
  for (const entry of more) {
    if (out.length >= limit) break;
    const key = entry.email.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(entry);
  }
  return out;
}

/** Union of two lists, order kept. */
export function union(base: string[], more: string[]): string[] {
  return [...new Set([...base, ...more])];
}

function addressesOf(row: MessageRow): StoredAddress[] {
  return [...row.fromAddresses, ...row.toAddresses, ...row.ccAddresses, ...row.bccAddresses];
}

/** Folds one new message into a thread's aggregates, without reading its other messages. */
export function foldIntoThread(thread: ThreadRow, row: MessageRow): ThreadRow {
  const newest =
    row.date > thread.latestMessageDate || (row.date === thread.latestMessageDate && row.seq > thread.latestSeq);
  const oldest = row.date < thread.earliestMessageDate;
  const kind = dateKindOf(row);
  return {
    ...thread,
    ...(oldest ? { subject: row.subject, earliestMessageDate: row.date } : {}),
    ...(newest
      ? { snippet: row.snippet, latestMessageDate: row.date, latestSeq: row.seq, latestMessageId: row.id }
      : {}),
    participants: mergeParticipants(thread.participants, addressesOf(row)),
    messageCount: thread.messageCount + 1,
    ...(kind === 'sent' ? { latestMessageSentDate: Math.max(thread.latestMessageSentDate ?? 0, row.date) } : {}),
    ...(kind === 'received'
      ? { latestMessageReceivedDate: Math.max(thread.latestMessageReceivedDate ?? 0, row.date) }
      : {}),
    hasAttachments: thread.hasAttachments || row.hasAttachments,
    unread: thread.unread || row.unread,
    starred: thread.starred || row.starred,
    folders: union(thread.folders, row.folders),
    updatedAt: row.createdAt,
  };
}

/** A new thread holding only `row`. */
export function newThread(id: string, row: MessageRow): ThreadRow {
  const kind = dateKindOf(row);
  return {
    id,
    grantId: row.grantId,
    subject: row.subject,
    snippet: row.snippet,
    participants: mergeParticipants([], addressesOf(row)),
    messageCount: 1,
    earliestMessageDate: row.date,
    latestMessageDate: row.date,
    latestSeq: row.seq,
    latestMessageId: row.id,
    latestMessageReceivedDate: kind === 'received' ? row.date : null,
    latestMessageSentDate: kind === 'sent' ? row.date : null,
    hasAttachments: row.hasAttachments,
    unread: row.unread,
    starred: row.starred,
    folders: row.folders,
    createdAt: row.createdAt,
    updatedAt: row.createdAt,
  };
}
