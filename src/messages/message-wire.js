// @ts-check
/**
 * @module messages/message-wire
 * Message and attachment rows → Nylas wire objects. Plain JavaScript (types in message-wire.d.ts) because both the
 * event loop (message-mapper.ts re-exports these) and the mail writer thread (storage/mail-writer-worker.js, which has
 * no TypeScript loader in every runtime it runs in) build messages; no side effects on import.
 */

/**
 * Stored addresses → wire participants (a missing name stays absent).
 * @param {{ name?: string, email: string }[]} list
 * @returns {{ name?: string, email: string }[]}
 */
export function participants(list) {
  return list.map((entry) => (entry.name ? { name: entry.name, email: entry.email } : { email: entry.email }));
}

/**
 * An attachment row → the wire attachment.
 * @param {import('./message-wire.js').AttachmentRow} row
 * @returns {import('./message-wire.js').Attachment}
 */
export function toAttachment(row) {
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

/**
 * A message row, its body and attachments → the wire message.
 * @param {import('./message-wire.js').MessageRow} row
 * @param {string} body
 * @param {import('./message-wire.js').AttachmentRow[]} attachments
 * @returns {import('./message-wire.js').Message}
 */
export function toMessage(row, body, attachments) {
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
