/**
 * @module mime/normalize
 * A parsed message (a mailparser `simpleParser` result, or the fast path's in simple-mime.ts) → the plain data the
 * store needs. No side effects on import: the parse worker (parse-worker.ts) and the mail writer thread (through
 * ingest-prepare.ts) import it.
 *
 * Every conversion here is linear in its input and bounded: the snippet and search text come from a bounded prefix.
 */
import { createHash } from 'node:crypto';
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

/** An address of a parsed header: a mailbox, or a group of them. */
interface MailAddress {
  name?: string | undefined;
  address?: string | undefined;
  group?: MailAddress[] | undefined;
}

/** A parsed address header: one of these, or a list of them when the header came more than once. */
interface MailAddressHeader {
  value: MailAddress[];
}
type MailAddresses = MailAddressHeader | MailAddressHeader[] | undefined;

/** An attachment of a parsed message, the fields normalize() reads. */
interface MailAttachment {
  /** A Buffer from mailparser; anything else reads as no bytes. */
  content?: unknown;
  contentType?: string | undefined;
  contentDisposition?: string | undefined;
  filename?: string | undefined;
  contentId?: string | undefined;
  related?: boolean | undefined;
}

/**
 * The fields of a parsed message that normalize() reads: a subset of mailparser's `ParsedMail` and of the fast
 * path's `SimpleMail` (simple-mime.ts), both of which are assignable to it. The parsers read hostile bytes, so
 * normalize() still checks each value's kind before using it.
 */
export interface MailFields {
  subject?: string | undefined;
  messageId?: string | undefined;
  inReplyTo?: string | undefined;
  references?: string | string[] | undefined;
  date?: Date | undefined;
  from?: MailAddresses;
  to?: MailAddresses;
  cc?: MailAddresses;
  bcc?: MailAddresses;
  replyTo?: MailAddresses;
  text?: string | undefined;
  /** `false` from mailparser when the message has no HTML body. */
  html?: string | false | undefined;
  attachments?: MailAttachment[] | undefined;
}

/** Bounds on what is kept from hostile headers. */
const MAX_SUBJECT = 2000;
const MAX_ADDRESSES = 500;
const MAX_REFERENCES = 100;
/** Text fed to the snippet and to the full-text index. */
const MAX_SEARCH_TEXT = 256 * 1024;

/**
 * Lower-case hex SHA-256 of `bytes`.
 */
export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * mailparser address header value(s) → `[{ name?, email }]`, groups flattened.
 */
function addresses(value: MailAddresses): StoredAddress[] {
  const out: StoredAddress[] = [];
  const add = (entry: MailAddress | undefined) => {
    if (out.length >= MAX_ADDRESSES || !entry) return;
    if (Array.isArray(entry.group)) {
      for (const member of entry.group) add(member);
      return;
    }
    const email = typeof entry.address === 'string' ? entry.address.trim().slice(0, 320) : '';
    if (!email) return;
    const name = typeof entry.name === 'string' ? entry.name.trim().slice(0, 256) : '';
    out.push(name ? { name, email } : { email });
  };
  for (const object of Array.isArray(value) ? value : value ? [value] : []) {
    for (const entry of object?.value ?? []) add(entry);
  }
  return out;
}

/**
 * Message-IDs in a header value, without angle brackets.
 */
function messageIds(value: unknown): string[] {
  const text = Array.isArray(value) ? value.join(' ') : typeof value === 'string' ? value : '';
  const bracketed = [...text.slice(0, 64 * 1024).matchAll(/<([^<>\s]{1,998})>/g)].map((match) => match[1]!);
  const ids =
    bracketed.length > 0 ? bracketed : text.split(/\s+/).filter((part) => part.length > 0 && part.length <= 998);
  return ids.slice(-MAX_REFERENCES);
}

function escapeHtml(text: string): string {
  // Most text has none of the four: four indexOf scans (memchr) cost a fraction of one pass of the regular expression.
  if (text.indexOf('&') < 0 && text.indexOf('<') < 0 && text.indexOf('>') < 0 && text.indexOf('"') < 0) return text;
  return text.replace(/[&<>"]/g, (character) =>
    character === '&' ? '&amp;' : character === '<' ? '&lt;' : character === '>' ? '&gt;' : '&quot;',
  );
}

/**
 * Plain text up-converted to HTML, as Nylas returns bodies (inbound mail and the sent copy of a plain-text send).
 */
export function textToHtml(text: string): string {
  const escaped = escapeHtml(text);
  // Without a CR every line break is a lone LF, and a plain replaceAll does in half the time what the expression does.
  return `<div>${escaped.includes('\r') ? escaped.replace(/\r?\n/g, '<br>\n') : escaped.replaceAll('\n', '<br>\n')}</div>`;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * The visible text of (a bounded prefix of) HTML, line breaks kept at block ends. One forward scan with indexOf:
 * linear whatever the input (`<<<<` without any `>`, an unclosed <style>, 1 MB of nested <div>), where a regular
 * expression would backtrack quadratically. `limit`: characters of `html` read.
 */
export function htmlToText(html: string, limit: number = MAX_SEARCH_TEXT * 2): string {
  const source = html.slice(0, limit);
  const lower = source.toLowerCase();
  let out = '';
  let index = 0;
  while (index < source.length) {
    const open = source.indexOf('<', index);
    if (open < 0) {
      out += source.slice(index);
      break;
    }
    out += source.slice(index, open);
    const close = source.indexOf('>', open);
    if (close < 0) break;
    const tag = /^<\/?([a-z0-9]+)/.exec(lower.slice(open, open + 12))?.[1] ?? '';
    if (tag === 'style' || tag === 'script' || tag === 'head') {
      const end = lower.indexOf(`</${tag}`, close);
      const endClose = end < 0 ? -1 : source.indexOf('>', end);
      index = endClose < 0 ? source.length : endClose + 1;
      continue;
    }
    if (tag === 'br' || tag === 'p' || tag === 'div' || tag === 'li' || tag === 'tr' || /^h[1-6]$/.test(tag))
      out += '\n';
    else out += ' ';
    index = close + 1;
  }
  return out
    .replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, (whole, name: string) => {
      if (name[0] === '#') {
        const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : ' ';
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/[ \t]+/g, ' ')
    .replace(/ *\n[ \n]*/g, '\n')
    .trim();
}

/**
 * The text a message is searched by and its snippet is cut from: its plain text, or the visible text of its HTML,
 * bounded. Its whitespace is left as it is: the full-text tokenizer splits words at any of it, so collapsing it
 * would change no search and cost a pass over the whole body.
 */
export function visibleText(text: string, html: string): string {
  return (text || htmlToText(html)).slice(0, MAX_SEARCH_TEXT);
}

/**
 * The snippet of a text: its first `length` characters once whitespace is collapsed and trimmed. Only a prefix is
 * read: a prefix that, collapsed and trimmed, is longer than `length`, begins the same way as the whole text would.
 */
export function snippetOf(text: string, length = 100): string {
  for (let read = 4 * length; ; read *= 4) {
    const head = text.slice(0, read).replace(/\s+/g, ' ').trim();
    if (read >= text.length || head.length > length) return head.slice(0, length);
  }
}

/**
 * A simpleParser result (or the fast path's, simple-mime.ts) → the message the store needs, and the ArrayBuffers of
 * its attachments (each its own, safe to transfer to another thread).
 */
export function normalize(mail: MailFields): { value: WireParsedMessage; transfer: ArrayBuffer[] } {
  const text = typeof mail.text === 'string' ? mail.text : '';
  const html = typeof mail.html === 'string' ? mail.html : '';
  const plain = visibleText(text, html);
  const date = mail.date instanceof Date && Number.isFinite(mail.date.getTime()) ? mail.date.getTime() : undefined;
  const inReplyTo = messageIds(mail.inReplyTo);
  const transfer: ArrayBuffer[] = [];
  const attachments = (mail.attachments ?? []).map((attachment): WireParsedAttachment => {
    const content = attachment.content instanceof Uint8Array ? attachment.content : new Uint8Array(0);
    // A copy in its own ArrayBuffer: mailparser's buffers may share Node's pool, which must not be transferred.
    const bytes = new Uint8Array(content);
    transfer.push(bytes.buffer);
    const disposition = attachment.contentDisposition === 'inline' ? 'inline' : 'attachment';
    return {
      filename:
        typeof attachment.filename === 'string' && attachment.filename ? attachment.filename.slice(0, 1024) : '',
      contentType:
        typeof attachment.contentType === 'string' ? attachment.contentType.slice(0, 256) : 'application/octet-stream',
      disposition,
      contentId: typeof attachment.contentId === 'string' ? attachment.contentId.slice(0, 998) : undefined,
      isInline: disposition === 'inline' || Boolean(attachment.related),
      hash: sha256(bytes),
      content: bytes,
    };
  });
  return {
    value: {
      subject: typeof mail.subject === 'string' ? mail.subject.slice(0, MAX_SUBJECT) : '',
      messageId: messageIds(mail.messageId)[0],
      inReplyTo: inReplyTo[inReplyTo.length - 1],
      references: messageIds(mail.references),
      date,
      from: addresses(mail.from),
      to: addresses(mail.to),
      cc: addresses(mail.cc),
      bcc: addresses(mail.bcc),
      replyTo: addresses(mail.replyTo),
      body: html || (text ? textToHtml(text) : ''),
      snippet: snippetOf(plain),
      searchText: plain,
      attachments,
    },
    transfer,
  };
}
