/**
 * @module deliverability/thread-replies-headers
 * What the reply watch (./thread-replies.ts) reads of a message: whether its header section names earlier messages at
 * all (bounded, the price every message pays), and which, with its own Message-ID and its From address.
 */
import { readRawHeaders, fromHeaderAddress } from '../mime/index.js';

/** Bytes of the header section scanned for In-Reply-To / References (as the other header readers of the inbound path). */
const HEADER_SCAN_BYTES = 64 * 1024;
/** Message-IDs looked up at most per message: the In-Reply-To and the closest References (a long thread names dozens). */
const MAX_NAMED_IDS = 50;
/** A header line naming earlier messages, at the start of a line of the header section. */
const REPLY_HEADER = /^(?:in-reply-to|references)[ \t]*:/im;

/**
 * Whether the header section of a raw message has an In-Reply-To or References line. Bounded, and without splitting
 * the headers: the price every message pays.
 */
export function namesEarlierMessages(raw: Buffer): boolean {
  const head = raw.subarray(0, Math.min(raw.length, HEADER_SCAN_BYTES));
  let end = head.indexOf('\r\n\r\n');
  if (end < 0) end = head.indexOf('\n\n');
  return REPLY_HEADER.test(head.subarray(0, end < 0 ? head.length : end).toString('latin1'));
}

/** The Message-IDs inside angle brackets of a header value, normalised (lower case, no brackets). */
function messageIdsOf(value: string): string[] {
  return [...value.matchAll(/<([^<>\s]+)>/g)].map((match) => match[1]!.toLowerCase());
}

/**
 * The Message-IDs a message names as earlier messages, closest first: its In-Reply-To, then its References from the
 * last to the first; each once, at most {@link MAX_NAMED_IDS}. Also its own Message-ID and its From address.
 */
export function replyHeadersOf(raw: Buffer): {
  named: string[];
  inReplyTo: string | undefined;
  messageId: string | undefined;
  from: string;
} {
  const headers = readRawHeaders(raw, HEADER_SCAN_BYTES, 200);
  const valueOf = (name: string) => headers.find((header) => header.name.toLowerCase() === name)?.value ?? '';
  const inReplyTo = messageIdsOf(valueOf('in-reply-to'));
  const references = messageIdsOf(valueOf('references')).reverse();
  const named = [...new Set([...inReplyTo, ...references])].slice(0, MAX_NAMED_IDS);
  return {
    named,
    inReplyTo: inReplyTo[0],
    messageId: messageIdsOf(valueOf('message-id'))[0],
    from: fromHeaderAddress(valueOf('from')),
  };
}
