/**
 * @module messages/message-wire
 * Message and attachment rows → Nylas wire objects. Both the event loop (message-mapper.ts re-exports these) and the
 * mail writer thread (through mail-rows.ts and src/mail/ingest-prepare.ts) build messages; no side effects on import.
 */
import type { StoredAddress, attachments, messages } from '../../storage/schema/mail.js';
import type {
  Attachment,
  AuthenticationResults,
  Message,
  Participant,
  AutomatedWire,
  RemovedAttachmentWire,
  SpamVerdictWire,
} from '../schemas/messages.js';

export type { Attachment, Message, Participant };
/** A stored message row. */
export type MessageRow = typeof messages.$inferSelect;
/**
 * The columns a message's wire form and its body, raw message and page cursor are made of: what a list of messages
 * reads (the rest of a row, such as its References, envelope and verdict, is left in the database).
 */
export type PresentedMessageRow = Pick<
  MessageRow,
  | 'id'
  | 'grantId'
  | 'threadId'
  | 'seq'
  | 'date'
  | 'subject'
  | 'fromAddresses'
  | 'toAddresses'
  | 'ccAddresses'
  | 'bccAddresses'
  | 'replyToAddresses'
  | 'snippet'
  | 'body'
  | 'bodyHash'
  | 'folders'
  | 'unread'
  | 'starred'
  | 'metadata'
  | 'rawHash'
  | 'rawSize'
  | 'verdict'
>;
/** A stored attachment row. */
export type AttachmentRow = typeof attachments.$inferSelect;

/** Stored addresses → wire participants (a missing name stays absent). */
export function participants(list: StoredAddress[]): Participant[] {
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
export function toMessage(row: PresentedMessageRow, body: string, attachments: AttachmentRow[]): Message {
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
    ...verdictFields(row.verdict),
  };
}

/**
 * The inbound stages' verdict kept on a message → the extension fields `authentication_results`, `spam`,
 * `removed_attachments` and `automated`, each only when its stage ran (or removed something) (the `Authentication-Results` header itself stays in the raw message).
 */
function verdictFields(verdict: MessageRow['verdict']): {
  authentication_results?: AuthenticationResults;
  spam?: SpamVerdictWire;
  removed_attachments?: RemovedAttachmentWire[];
  automated?: AutomatedWire;
} {
  if (!verdict) return {};
  const out: {
    authentication_results?: AuthenticationResults;
    spam?: SpamVerdictWire;
    removed_attachments?: RemovedAttachmentWire[];
    automated?: AutomatedWire;
  } = {};
  const authentication = verdict.authentication;
  if (authentication) {
    out.authentication_results = {
      ...(authentication.spf ? { spf: authentication.spf } : {}),
      ...(authentication.dkim ? { dkim: authentication.dkim } : {}),
      ...(authentication.dmarc ? { dmarc: authentication.dmarc } : {}),
      ...(authentication.arc ? { arc: authentication.arc } : {}),
    };
  }
  if (verdict.spam)
    out.spam = {
      is_spam: verdict.spam.spam,
      score: verdict.spam.score,
      threshold: verdict.spam.threshold,
      reasons: verdict.spam.reasons,
    };
  if (verdict.removed_attachments && verdict.removed_attachments.length > 0)
    out.removed_attachments = verdict.removed_attachments.map((entry) => ({ ...entry }));
  if (verdict.automated)
    out.automated = { kind: verdict.automated.kind as AutomatedWire['kind'], reasons: [...verdict.automated.reasons] };
  return out;
}
