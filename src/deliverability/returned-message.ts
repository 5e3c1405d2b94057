/**
 * @module deliverability/returned-message
 * Which sent message a report in a mailbox is about, read from the report itself (pure): the Message-ID of the
 * message it returns. A connected account's bounces and complaints reach the person's own inbox (its server's
 * return path is the account's address, not one of our VERP addresses), so the returned headers are all there is
 * to go by. Callers scope what they find to the mailbox the report arrived in (./reports.ts `receiveInMailbox`).
 *
 * Where the returned Message-ID is looked for, in order:
 * - the headers of a returned part: `message/rfc822`, `message/global`, `text/rfc822-headers`,
 *   `message/rfc822-headers`, `message/global-headers` (RFC 3462, 6533 and what MTAs send);
 * - failing that, a `Message-ID:` line at the start of a line in a text part (qmail and older MTAs quote the
 *   returned message in the text, after the explanation). The report's own header section is never read for it.
 * Reading is bounded by the report reader (./report-mime.ts) and by {@link MAX_IDS}.
 */
import { headerOf, splitEntity, type MimeReport } from '../mime/index.js';

/** Returned Message-IDs kept at most (one is usual; a digest of several is unusual and capped). */
const MAX_IDS = 5;
/** Part types that carry a returned message or its header section. */
const RETURNED_TYPES = new Set([
  'message/rfc822',
  'message/global',
  'text/rfc822-headers',
  'message/rfc822-headers',
  'message/global-headers',
]);
/** A `Message-ID:` line quoted in a text part. */
const QUOTED_MESSAGE_ID = /^message-id:[ \t]*<([^<>\s]{1,250})>/gim;

/** `<Id@Host>` → `id@host` (lower case, no brackets), or undefined when the value holds none. */
function normalised(value: string | undefined): string | undefined {
  const match = value
    ? (/<([^<>\s]{1,250})>/.exec(value) ?? /^\s*([^<>\s@]{1,200}@[^<>\s@]{1,200})\s*$/.exec(value))
    : null;
  return match ? match[1]!.toLowerCase() : undefined;
}

/**
 * The normalised Message-IDs of the messages a report returns (in the order found, each once, at most
 * {@link MAX_IDS}); empty when it returns none it can name.
 */
export function returnedMessageIds(report: MimeReport): string[] {
  const found: string[] = [];
  const add = (id: string | undefined) => {
    if (id && !found.includes(id) && found.length < MAX_IDS) found.push(id);
  };
  for (const part of report.parts) {
    if (!RETURNED_TYPES.has(part.type)) continue;
    // A headers-only part may lack the blank line that ends a header section.
    const text = part.text.includes('\n\n') || part.text.includes('\r\n\r\n') ? part.text : `${part.text}\r\n\r\n`;
    add(normalised(headerOf(splitEntity(text).headers, 'message-id')));
  }
  if (found.length > 0) return found;
  for (const part of report.parts) {
    if (part.type !== 'text/plain') continue;
    for (const match of part.text.matchAll(QUOTED_MESSAGE_ID)) add(match[1]!.toLowerCase());
  }
  return found;
}

/** A header line of a report: a `multipart/report` type, a mailer daemon or postmaster sender, a null return path (one pass over the header section). */
const REPORT_HEADER =
  /^(?:content-type:[ \t]*(?:\r?\n[ \t]+)?multipart\/report|from:[^\r\n]*\b(?:mailer-daemon|postmaster)@|return-path:[ \t]*<>)/im;

/**
 * Whether a raw message's header section says it may be a delivery report or a complaint: a `multipart/report`, or
 * from a mailer daemon or postmaster, or with a null return path. Bounded and without parsing: the price every
 * synced message pays; a false yes only costs the report reader a look.
 */
export function mayBeReport(raw: Buffer): boolean {
  const head = raw.subarray(0, Math.min(raw.length, 64 * 1024));
  let end = head.indexOf('\r\n\r\n');
  if (end < 0) end = head.indexOf('\n\n');
  const section = head.subarray(0, end < 0 ? head.length : end).toString('latin1');
  return REPORT_HEADER.test(section);
}
