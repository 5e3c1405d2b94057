// @ts-check
/**
 * @module mail/normalize
 * A parsed message (a mailparser `simpleParser` result, or the fast path's in simple-mime.js) → the plain data the
 * store needs (types in normalize.d.ts). Plain JavaScript with no side effects on import: the parse worker
 * (parse-worker.js) and other worker threads (which have no TypeScript loader in every runtime they run in) import it.
 *
 * Every conversion here is linear in its input and bounded: the snippet and search text come from a bounded prefix.
 */
import { createHash } from 'node:crypto';

/** Bounds on what is kept from hostile headers. */
const MAX_SUBJECT = 2000;
const MAX_ADDRESSES = 500;
const MAX_REFERENCES = 100;
/** Text fed to the snippet and to the full-text index. */
const MAX_SEARCH_TEXT = 256 * 1024;

/**
 * Lower-case hex SHA-256 of `bytes`.
 * @param {Uint8Array} bytes
 */
export function sha256(bytes) {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * mailparser address header value(s) → `[{ name?, email }]`, groups flattened.
 * @param {any} value
 * @returns {{ name?: string, email: string }[]}
 */
function addresses(value) {
  /** @type {{ name?: string, email: string }[]} */
  const out = [];
  /** @param {any} entry */
  const add = (entry) => {
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
 * @param {unknown} value
 * @returns {string[]}
 */
function messageIds(value) {
  const text = Array.isArray(value) ? value.join(' ') : typeof value === 'string' ? value : '';
  const bracketed = [...text.slice(0, 64 * 1024).matchAll(/<([^<>\s]{1,998})>/g)].map((match) => /** @type {string} */ (match[1]));
  const ids = bracketed.length > 0 ? bracketed : text.split(/\s+/).filter((part) => part.length > 0 && part.length <= 998);
  return ids.slice(-MAX_REFERENCES);
}

/** @param {string} text */
function escapeHtml(text) {
  // Most text has none of the four: four indexOf scans (memchr) cost a fraction of one pass of the regular expression.
  if (text.indexOf('&') < 0 && text.indexOf('<') < 0 && text.indexOf('>') < 0 && text.indexOf('"') < 0) return text;
  return text.replace(/[&<>"]/g, (character) => (character === '&' ? '&amp;' : character === '<' ? '&lt;' : character === '>' ? '&gt;' : '&quot;'));
}

/**
 * Plain text up-converted to HTML, as Nylas returns bodies (inbound mail and the sent copy of a plain-text send).
 * @param {string} text
 */
export function textToHtml(text) {
  const escaped = escapeHtml(text);
  // Without a CR every line break is a lone LF, and a plain replaceAll does in half the time what the expression does.
  return `<div>${escaped.includes('\r') ? escaped.replace(/\r?\n/g, '<br>\n') : escaped.replaceAll('\n', '<br>\n')}</div>`;
}

const ENTITIES = /** @type {Record<string, string>} */ ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' });

/**
 * The visible text of (a bounded prefix of) HTML, line breaks kept at block ends. One forward scan with indexOf:
 * linear whatever the input (`<<<<` without any `>`, an unclosed <style>, 1 MB of nested <div>), where a regular
 * expression would backtrack quadratically.
 * @param {string} html
 * @param {number} [limit] characters of `html` read
 */
export function htmlToText(html, limit = MAX_SEARCH_TEXT * 2) {
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
    if (tag === 'br' || tag === 'p' || tag === 'div' || tag === 'li' || tag === 'tr' || /^h[1-6]$/.test(tag)) out += '\n';
    else out += ' ';
    index = close + 1;
  }
  return out
    .replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]{2,8});/gi, (whole, /** @type {string} */ name) => {
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
 * @param {string} text
 * @param {string} html
 */
export function visibleText(text, html) {
  return (text || htmlToText(html)).slice(0, MAX_SEARCH_TEXT);
}

/**
 * The snippet of a text: its first `length` characters once whitespace is collapsed and trimmed. Only a prefix is
 * read: a prefix that, collapsed and trimmed, is longer than `length`, begins the same way as the whole text would.
 * @param {string} text
 * @param {number} [length]
 */
export function snippetOf(text, length = 100) {
  for (let read = 4 * length; ; read *= 4) {
    const head = text.slice(0, read).replace(/\s+/g, ' ').trim();
    if (read >= text.length || head.length > length) return head.slice(0, length);
  }
}

/**
 * @param {any} mail a simpleParser result
 */
export function normalize(mail) {
  const text = typeof mail.text === 'string' ? mail.text : '';
  const html = typeof mail.html === 'string' ? mail.html : '';
  const plain = visibleText(text, html);
  const date = mail.date instanceof Date && Number.isFinite(mail.date.getTime()) ? mail.date.getTime() : undefined;
  const inReplyTo = messageIds(mail.inReplyTo);
  /** @type {ArrayBuffer[]} */
  const transfer = [];
  const attachments = (mail.attachments ?? []).map((/** @type {any} */ attachment) => {
    const content = attachment.content instanceof Uint8Array ? attachment.content : new Uint8Array(0);
    // A copy in its own ArrayBuffer: mailparser's buffers may share Node's pool, which must not be transferred.
    const bytes = new Uint8Array(content);
    transfer.push(bytes.buffer);
    const disposition = attachment.contentDisposition === 'inline' ? 'inline' : 'attachment';
    return {
      filename: typeof attachment.filename === 'string' && attachment.filename ? attachment.filename.slice(0, 1024) : '',
      contentType: typeof attachment.contentType === 'string' ? attachment.contentType.slice(0, 256) : 'application/octet-stream',
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
