/** Types of normalize.js (plain JavaScript, shared with worker threads). */
import type { StoredAddress } from '../../storage/schema/mail.js';

/** One attachment (or inline part) as normalize() returns it: bytes in an ArrayBuffer of their own. */
export interface WireParsedAttachment {
  /** Empty when the part has no file name. */
  filename: string;
  contentType: string;
  disposition: 'attachment' | 'inline';
  contentId: string | undefined;
  isInline: boolean;
  /** Lower-case hex SHA-256 of `content`. */
  hash: string;
  content: Uint8Array;
}

/** A normalized message: ParsedMessage (parse-inbound.ts) with attachment bytes as Uint8Array (what crosses a thread). */
export interface WireParsedMessage {
  subject: string;
  /** Message-ID without angle brackets. */
  messageId: string | undefined;
  inReplyTo: string | undefined;
  /** References, oldest first. */
  references: string[];
  /** The Date header in milliseconds, when it parsed. */
  date: number | undefined;
  from: StoredAddress[];
  to: StoredAddress[];
  cc: StoredAddress[];
  bcc: StoredAddress[];
  replyTo: StoredAddress[];
  /** HTML body (plain text up-converted). */
  body: string;
  snippet: string;
  /** Visible text for the full-text index (bounded). */
  searchText: string;
  attachments: WireParsedAttachment[];
}

/** Plain text up-converted to HTML, as Nylas returns bodies. */
export declare function textToHtml(text: string): string;

/** The visible text of (a bounded prefix of) HTML, line breaks kept at block ends; linear whatever the input. */
export declare function htmlToText(html: string, limit?: number): string;

/** The searched text of a message (its plain text, or its HTML's visible text), bounded; whitespace as it is. */
export declare function visibleText(text: string, html: string): string;

/** The first `length` (100) characters of a text once whitespace is collapsed and trimmed; reads only a prefix. */
export declare function snippetOf(text: string, length?: number): string;

/** Lower-case hex SHA-256 of `bytes`. */
export declare function sha256(bytes: Uint8Array): string;

/**
 * A simpleParser result (or the fast path's, simple-mime.js) → the message the store needs, and the ArrayBuffers of
 * its attachments (each its own, safe to transfer to another thread).
 */
export declare function normalize(mail: any): { value: WireParsedMessage; transfer: ArrayBuffer[] };
