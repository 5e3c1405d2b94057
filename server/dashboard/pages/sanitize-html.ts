/**
 * @module server/dashboard/pages/sanitize-html
 * A message's HTML made safe to show in the dashboard's viewer. The service had no HTML sanitizer to reuse (the
 * reading area's `visibleHtml` cuts hidden text and scripts for agents, but keeps event handlers and remote URLs),
 * so this is one, built by allow-list: the output is written from scratch, never the input passed through, so it is
 * safe whatever the input's shape, and the browser's parser sees only what is written here.
 *
 * - Text is copied with `<` and `>` escaped; comments, doctypes and processing instructions are dropped.
 * - Elements on {@link ALLOWED} are written with their allowed attributes, values decoded and re-escaped; every other
 *   tag is dropped (its text kept), and the raw-text elements (script, iframe, textarea, title, …) are dropped with
 *   their content. A `<style>` element is kept with `<`, backslashes, `url(`, `@import` and `expression` defused.
 * - No event handler, `srcdoc`, `formaction` or other attribute outside the allow-list survives; `href` only with
 *   http, https or mailto (or a `#fragment`); `img src` only as a `data:image/…` URL; remote images are counted.
 *
 * The viewer puts the result in an `<iframe sandbox="">` (no script, no same origin, no forms, no popups) through
 * `srcdoc`, whose document starts with a Content-Security-Policy that forbids every remote load ({@link viewerDocument}).
 * Linear in the input: one pass, each `indexOf` starting where the last ended; the input is cut at {@link MAX_HTML_CHARS}.
 */

/** The most characters of a body sanitized (the rest is cut; a message body is bounded by the store anyway). */
export const MAX_HTML_CHARS = 2_000_000;

/** Elements kept (void ones in {@link VOID}). */
const ALLOWED = new Set(
  (
    'a abbr address b bdi bdo big blockquote br caption center cite code col colgroup dd del dfn div dl dt em font ' +
    'h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol p pre q s samp small span strike strong sub sup table tbody td ' +
    'tfoot th thead time tr tt u ul var wbr'
  ).split(' '),
);

const VOID = new Set(['br', 'col', 'hr', 'img', 'wbr']);

/** Elements whose content the browser reads as raw text: dropped with it (style is kept, defused). */
const RAW_TEXT = new Set([
  'script',
  'style',
  'textarea',
  'title',
  'xmp',
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'template',
]);

/** Attributes kept on any allowed element (href and src are checked apart). */
const ATTRIBUTES = new Set(
  (
    'abbr align alt bgcolor border cellpadding cellspacing class color cols colspan dir face headers height hspace ' +
    'lang nowrap rowspan rows scope size span start style summary title type valign vspace width'
  ).split(' '),
);

/** What a sanitized body says of what it removed. */
export interface SanitizedHtml {
  html: string;
  /** Images with a remote (or otherwise refused) source, written without it. */
  remoteImages: number;
  /** Elements dropped with their content (script, iframe, …) and event handlers removed. */
  removed: number;
  /** The input was longer than {@link MAX_HTML_CHARS} and was cut. */
  truncated: boolean;
}

/** The named character references decoded in attribute values; any other stays as written (then shown literally). */
const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  colon: ':',
  tab: '\t',
  newline: '\n',
};

/** Decodes character references in an attribute value (numeric ones and {@link NAMED}). */
export function decodeReferences(value: string): string {
  return value.replace(/&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z]{2,8}));?/g, (whole, dec, hex, name) => {
    if (dec !== undefined || hex !== undefined) {
      const code = dec !== undefined ? Number(dec) : parseInt(hex as string, 16);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
        ? String.fromCodePoint(code)
        : '\ufffd';
    }
    return NAMED[(name as string).toLowerCase()] ?? whole;
  });
}

/** Escapes a value for a double-quoted attribute. */
function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Escapes text content (character references in it are kept: they cannot open markup). */
const escapeText = (text: string): string => text.replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An href a person may follow: http(s), mailto or a fragment; control characters and spaces ignored for the scheme. */
function safeHref(value: string): boolean {
  const plain = value.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase();
  return /^(https?:|mailto:|#)/.test(plain);
}

/** An image source loaded from the message itself: a data: URL of a raster image. */
const safeImage = (value: string): boolean =>
  /^data:image\/(png|jpe?g|gif|webp|bmp);base64,[a-z0-9+/=\s]*$/i.test(value.trim());

/** A style attribute that loads nothing and escapes nothing: no url(), image-set, @import, expression or escapes. */
const safeStyle = (value: string): boolean =>
  !/[\\<]|url\s*\(|image-set|image\s*\(|@import|expression|behavior|-moz-binding|javascript:/i.test(value);

/**
 * A `<style>` element's CSS defused: no way out of the element, no escapes, nothing loaded (every `url(…)` becomes
 * `none`, an `@import` is dropped to its `;`). Each pattern consumes what it scans, so it stays linear.
 */
function defuseCss(css: string): string {
  return css
    .replace(/[<\\]/g, '')
    .replace(/url\s*\([^)]*\)?/gi, 'none')
    .replace(/@import[^;]*;?/gi, '')
    .replace(/image-set|image\s*\(|expression|behavior|-moz-binding/gi, 'blocked');
}

interface Tag {
  name: string;
  closing: boolean;
  attributes: [string, string][];
  /** Index just after the tag's `>` (or the input's end). */
  end: number;
}

/** Reads the tag starting at `start` (a `<` followed by a letter or `/letter`), quotes respected; linear. */
function readTag(input: string, start: number): Tag | undefined {
  const head = /<(\/?)([a-zA-Z][a-zA-Z0-9:-]*)/y;
  head.lastIndex = start;
  const match = head.exec(input);
  if (!match) return undefined;
  const tag: Tag = { name: match[2]!.toLowerCase(), closing: match[1] === '/', attributes: [], end: input.length };
  let at = head.lastIndex;
  const n = input.length;
  const space = (c: string | undefined) => c === ' ' || c === '\n' || c === '\t' || c === '\r' || c === '\f';
  while (at < n) {
    const c = input[at];
    if (c === '>') {
      tag.end = at + 1;
      return tag;
    }
    if (space(c) || c === '/') {
      at++;
      continue;
    }
    let nameEnd = at + 1;
    while (nameEnd < n && !space(input[nameEnd]) && !'/>='.includes(input[nameEnd]!)) nameEnd++;
    const name = input.slice(at, nameEnd).toLowerCase();
    at = nameEnd;
    while (at < n && space(input[at])) at++;
    let value = '';
    if (input[at] === '=') {
      at++;
      while (at < n && space(input[at])) at++;
      const quote = input[at];
      if (quote === '"' || quote === "'") {
        const close = input.indexOf(quote, at + 1);
        if (close < 0) return tag; // an unclosed quote runs to the end: the rest is dropped
        value = input.slice(at + 1, close);
        at = close + 1;
      } else {
        const valueStart = at;
        while (at < n && !space(input[at]) && input[at] !== '>') at++;
        value = input.slice(valueStart, at);
      }
    }
    tag.attributes.push([name, value]);
  }
  return tag;
}

/** The attributes of an allowed element, written; counts what it refuses into `counts`. */
function writeAttributes(tag: Tag, counts: { remoteImages: number; removed: number }): string {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const [name, raw] of tag.attributes) {
    if (seen.has(name)) continue;
    seen.add(name);
    const value = decodeReferences(raw);
    if (name === 'href' && tag.name === 'a') {
      if (safeHref(value)) out.push(`href="${escapeAttribute(value)}"`);
      continue;
    }
    if (name === 'src' && tag.name === 'img') {
      if (safeImage(value)) out.push(`src="${escapeAttribute(value)}"`);
      else if (!/^\s*cid:/i.test(value) && value.trim() !== '') counts.remoteImages++;
      continue;
    }
    if (name.startsWith('on')) {
      counts.removed++;
      continue;
    }
    if (!ATTRIBUTES.has(name) || (name === 'style' && !safeStyle(value))) continue;
    out.push(`${name}="${escapeAttribute(value)}"`);
  }
  if (tag.name === 'a') out.push('target="_blank"', 'rel="noopener noreferrer"');
  return out.length > 0 ? ` ${out.join(' ')}` : '';
}

/** Sanitizes a message's HTML body by allow-list (see the module comment). Pure and linear. */
export function sanitizeHtml(body: string): SanitizedHtml {
  const truncated = body.length > MAX_HTML_CHARS;
  const input = truncated ? body.slice(0, MAX_HTML_CHARS) : body;
  const lower = input.toLowerCase();
  const n = input.length;
  const out: string[] = [];
  const counts = { remoteImages: 0, removed: 0 };
  let at = 0;
  while (at < n) {
    const open = input.indexOf('<', at);
    if (open < 0) {
      out.push(escapeText(input.slice(at)));
      break;
    }
    if (open > at) out.push(escapeText(input.slice(at, open)));
    if (input.startsWith('<!--', open)) {
      const close = input.indexOf('-->', open + 4);
      at = close < 0 ? n : close + 3;
      continue;
    }
    const next = input[open + 1];
    if (next === '!' || next === '?') {
      const close = input.indexOf('>', open);
      at = close < 0 ? n : close + 1;
      continue;
    }
    const tag = readTag(input, open);
    if (!tag) {
      out.push('&lt;');
      at = open + 1;
      continue;
    }
    at = tag.end;
    if (tag.closing) {
      if (ALLOWED.has(tag.name) && !VOID.has(tag.name)) out.push(`</${tag.name}>`);
      continue;
    }
    if (RAW_TEXT.has(tag.name) || tag.name === 'plaintext') {
      const close = tag.name === 'plaintext' ? -1 : lower.indexOf(`</${tag.name}`, at);
      const content = input.slice(at, close < 0 ? n : close);
      if (tag.name === 'style') out.push(`<style>${defuseCss(content)}</style>`);
      else counts.removed++;
      const end = close < 0 ? -1 : input.indexOf('>', close);
      at = end < 0 ? n : end + 1;
      continue;
    }
    if (!ALLOWED.has(tag.name)) {
      for (const [name] of tag.attributes) if (name.startsWith('on')) counts.removed++;
      continue;
    }
    out.push(`<${tag.name}${writeAttributes(tag, counts)}>`);
  }
  return { html: out.join(''), ...counts, truncated };
}

/**
 * The policy of the viewer's frame document: nothing loads from anywhere (images only as data: URLs, fonts as
 * data:, inline styles allowed), no script runs, no form posts, no base URL.
 */
export const VIEWER_CSP =
  "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'";

/** The whole document for the viewer's `srcdoc`: the policy first, then the sanitized body. */
export function viewerDocument(sanitized: string): string {
  return (
    '<!doctype html><html><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${VIEWER_CSP}">` +
    '<meta name="referrer" content="no-referrer">' +
    '<style>body{font-family:system-ui,sans-serif;margin:0.5rem;overflow-wrap:anywhere}img{max-width:100%}</style>' +
    `</head><body>${sanitized}</body></html>`
  );
}
