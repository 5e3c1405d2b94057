/**
 * @module attachment-text/message-text
 * A message/rfc822 attachment (a forwarded mail) as Markdown: its header fields, its body (converted from the HTML
 * the MIME area gives, src/mime), and a list of its own attachments (named, not read).
 */
import type { ParsedMessage } from '../mime/index.js';
import type { InnerAttachment } from './contracts.js';
import type { Extracted } from './extracted.js';
import { count } from './markdown-table.js';

/** Attachments listed, at most. */
const MAX_LISTED = 100;

const address = (who: { name?: string | undefined; email: string }) =>
  who.name && who.name !== who.email ? `${who.name} <${who.email}>` : who.email;

const addresses = (list: readonly { name?: string | undefined; email: string }[]) =>
  list.length > 20
    ? `${list.slice(0, 20).map(address).join(', ')} and ${count(list.length - 20)} more`
    : list.map(address).join(', ');

function size(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
    : bytes >= 1024
      ? `${Math.round(bytes / 1024)} KB`
      : `${bytes} bytes`;
}

/** The message as Markdown, given its body already as Markdown. */
export function describeMessage(message: ParsedMessage, body: string, headersOnly = false): Extracted {
  const lines: string[] = [];
  if (message.from.length) lines.push(`From: ${addresses(message.from)}`);
  if (message.to.length) lines.push(`To: ${addresses(message.to)}`);
  if (message.cc.length) lines.push(`Cc: ${addresses(message.cc)}`);
  if (message.date !== undefined) lines.push(`Date: ${new Date(message.date).toISOString()}`);
  lines.push(`Subject: ${message.subject || '(no subject)'}`);
  const attachments: InnerAttachment[] = message.attachments.map((attachment) => ({
    filename: attachment.filename,
    contentType: attachment.contentType,
    bytes: attachment.content.length,
  }));
  const parts = [lines.join('\n')];
  if (body.trim()) parts.push(body.trim());
  if (attachments.length) {
    const listed = attachments
      .slice(0, MAX_LISTED)
      .map(
        (attachment) =>
          `- ${attachment.filename || '(no name)'} (${attachment.contentType}, ${size(attachment.bytes)})`,
      );
    if (attachments.length > MAX_LISTED) listed.push(`- and ${count(attachments.length - MAX_LISTED)} more`);
    parts.push(`Attachments of this message (not read here):\n${listed.join('\n')}`);
  }
  return {
    text: parts.join('\n\n'),
    format: 'markdown',
    metadata: {
      ...(message.subject ? { title: message.subject.slice(0, 500) } : {}),
      ...(message.from[0] ? { author: address(message.from[0]) } : {}),
      ...(message.date !== undefined ? { created: new Date(message.date).toISOString() } : {}),
      attachments: attachments.slice(0, MAX_LISTED),
      ...(headersOnly ? { note: 'Only the header section of this message could be read.' } : {}),
    },
  };
}
