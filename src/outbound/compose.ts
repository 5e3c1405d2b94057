/**
 * @module outbound/compose
 * Composes an outgoing message once, with nodemailer's MailComposer: headers (From, To, Cc, Reply-To,
 * Subject, Date, Message-ID, In-Reply-To, References, custom ones), an HTML body with a plain-text
 * alternative (or plain text only), attachments (inline ones by Content-ID in a multipart/related part), and for
 * iMIP a `text/calendar; method=…` alternative plus an `invite.ics` attachment. Also builds, without parsing,
 * the {@link ParsedMessage} the mail store keeps for the sender's copy.
 *
 * Every header-bound value was validated (no CR or LF) by the input schemas; this module still flattens any
 * line break it sees, so nothing can start a header of its own whatever the caller passes.
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import { blobHash, type StoredAddress } from '../../storage/index.js';
import {
  htmlToText,
  snippetOf,
  textToHtml,
  visibleText,
  type ParsedAttachment,
  type ParsedMessage,
} from '../mime/index.js';

/** A file to attach. */
export interface OutgoingAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
  /** Content-ID (without angle brackets) of an inline part. */
  contentId: string | undefined;
  inline: boolean;
}

/** Everything the composer needs. Message-IDs are given without angle brackets. */
export interface ComposeInput {
  from: StoredAddress;
  to: StoredAddress[];
  cc: StoredAddress[];
  bcc: StoredAddress[];
  replyTo: StoredAddress[];
  subject: string;
  /** HTML, or plain text when `isPlaintext`. */
  body: string;
  isPlaintext: boolean;
  attachments: OutgoingAttachment[];
  messageId: string;
  date: Date;
  inReplyTo: string | undefined;
  /** Oldest first. */
  references: string[];
  customHeaders: { name: string; value: string }[];
  /** An iMIP message: the iCalendar text and its method. */
  calendar?: { method: string; ics: string } | undefined;
}

/** HTML bodies up to this size also get a plain-text alternative (spam filters frown on HTML-only mail). */
const MAX_TEXT_ALTERNATIVE_SOURCE = 2 * 1024 * 1024;

/** One line: CR, LF and NUL become spaces. */
export function oneLine(value: string): string {
  return value.replace(/[\r\n\0]+/g, ' ');
}

function address(entry: StoredAddress): { name: string; address: string } {
  return { name: oneLine(entry.name ?? ''), address: oneLine(entry.email) };
}

/** Builds the MIME message (CRLF line ends). */
export async function composeMime(input: ComposeInput): Promise<Buffer> {
  const html = input.isPlaintext ? undefined : input.body;
  const text = input.isPlaintext
    ? input.body
    : html !== undefined && html.length <= MAX_TEXT_ALTERNATIVE_SOURCE
      ? htmlToText(html)
      : undefined;
  const composer = new MailComposer({
    from: address(input.from),
    to: input.to.map(address),
    cc: input.cc.map(address),
    bcc: input.bcc.map(address),
    replyTo: input.replyTo.map(address),
    subject: oneLine(input.subject),
    messageId: `<${oneLine(input.messageId)}>`,
    date: input.date,
    ...(input.inReplyTo ? { inReplyTo: `<${oneLine(input.inReplyTo)}>` } : {}),
    ...(input.references.length > 0 ? { references: input.references.map((id) => `<${oneLine(id)}>`) } : {}),
    ...(text !== undefined && text !== '' ? { text } : {}),
    ...(html !== undefined ? { html } : {}),
    ...(html === undefined && (text === undefined || text === '') ? { text: '' } : {}),
    attachments: input.attachments.map((attachment) => ({
      filename: oneLine(attachment.filename),
      content: attachment.content,
      contentType: oneLine(attachment.contentType),
      contentTransferEncoding: 'base64',
      ...(attachment.contentId && attachment.inline ? { cid: oneLine(attachment.contentId) } : {}),
      contentDisposition: attachment.inline ? 'inline' : 'attachment',
    })),
    ...(input.calendar
      ? { icalEvent: { method: input.calendar.method, content: input.calendar.ics, filename: 'invite.ics' } }
      : {}),
    headers: input.customHeaders.map((header) => ({
      key: oneLine(header.name).replace(/[\s:]+/g, ''),
      value: oneLine(header.value),
    })),
    disableFileAccess: true,
    disableUrlAccess: true,
    newline: 'win',
  });
  return composer.compile().build();
}

/**
 * The stored form of the message just composed, as the parser would have read it, without parsing it again.
 * (Bcc stays on the sender's copy only; it is not in the MIME.)
 */
export function parsedOf(input: ComposeInput): ParsedMessage {
  const html = input.isPlaintext ? textToHtml(input.body) : input.body;
  const plain = input.isPlaintext ? visibleText(input.body, '') : visibleText('', input.body);
  const attachments: ParsedAttachment[] = input.attachments.map((attachment) => ({
    filename: attachment.filename,
    contentType: attachment.contentType,
    disposition: attachment.inline ? 'inline' : 'attachment',
    contentId: attachment.contentId,
    isInline: attachment.inline,
    hash: blobHash(attachment.content),
    content: attachment.content,
  }));
  return {
    subject: oneLine(input.subject),
    messageId: input.messageId,
    inReplyTo: input.inReplyTo,
    references: input.references,
    date: input.date.getTime(),
    from: [input.from],
    to: input.to,
    cc: input.cc,
    bcc: input.bcc,
    replyTo: input.replyTo,
    body: html,
    snippet: snippetOf(plain),
    searchText: plain,
    attachments,
  };
}
