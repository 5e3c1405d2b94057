/** Types of message-wire.js (plain JavaScript, shared with the mail writer thread). */
import type { StoredAddress, attachments, messages } from '../../storage/schema/mail.js';
import type { Attachment, Message, Participant } from '../schemas/messages.js';

export type { Attachment, Message, Participant };
export type MessageRow = typeof messages.$inferSelect;
export type AttachmentRow = typeof attachments.$inferSelect;

/** Stored addresses → wire participants (a missing name stays absent). */
export declare function participants(list: StoredAddress[]): Participant[];
/** An attachment row → the wire attachment. */
export declare function toAttachment(row: AttachmentRow): Attachment;
/** A message row, its body and attachments → the wire message. */
export declare function toMessage(row: MessageRow, body: string, attachments: AttachmentRow[]): Message;
