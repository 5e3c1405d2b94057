/**
 * @module deliverability/tracking-rewrite
 * The change tracking makes to an HTML body, as a pure function: every http(s) `href` of an `<a>` or `<area>` tag
 * becomes a redirect URL (in body order, the originals returned so that the redirect can only ever lead to them),
 * and a 1×1 pixel goes at the end of the body. Every other byte is kept as written.
 *
 * What is not touched, on purpose:
 * - `href`s that are not http(s) (`mailto:`, `tel:`, `#anchor`, relative ones, `cid:`) and those that do not parse
 *   as URLs: a redirect could only break them.
 * - `href`s of other tags (`<link>` stylesheets, `<base>`): they are not clicks.
 * - Anything inside comments (`<!-- … -->`, Outlook's conditional comments included) and inside raw-text elements
 *   (`<script>`, `<style>`, `<textarea>`, `<title>`): it is not a rendered link of the body.
 * Attribute values are read as HTML reads them: the recorded original is the URL with its character references
 * decoded (`&amp;` → `&`), which is where a browser would have gone.
 */

/** What to put into the body. */
export interface TrackingRewriteOptions {
  /** The URL of the pixel, or undefined for no pixel. Must need no escaping in an attribute (no `"`, `&`, `<`). */
  pixelUrl?: string | undefined;
  /** The redirect URL of the link at `index` (0-based, body order), or undefined to leave links alone. Same rule. */
  linkUrl?: ((index: number) => string) | undefined;
}

/** The rewritten body and the original URLs of the links it rewrote, in order (index = link_index). */
export interface TrackingRewrite {
  html: string;
  links: string[];
}

/** Elements whose content is raw text: no tags inside (HTML's raw text and escapable raw text elements). */
const RAW_TEXT_ELEMENTS = new Set([
  'script',
  'style',
  'textarea',
  'title',
  'xmp',
  'iframe',
  'noembed',
  'noframes',
  'plaintext',
]);
/** Elements whose `href` is a link a reader clicks. */
const LINK_ELEMENTS = new Set(['a', 'area']);

/** Character references decoded in attribute values (the ones URLs carry; an unknown name stays as written). */
const NAMED_REFERENCES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  sol: '/',
  colon: ':',
  quest: '?',
  equals: '=',
  num: '#',
  percnt: '%',
  plus: '+',
  comma: ',',
  period: '.',
  lowbar: '_',
  hyphen: '-',
  tab: '\t',
  newline: '\n',
};

/** Decodes the character references of an attribute value (`&amp;`, `&#38;`, `&#x26;`). */
export function decodeAttribute(value: string): string {
  if (!value.includes('&')) return value;
  return value.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code < 0x110000 && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\ufffd';
    }
    return NAMED_REFERENCES[name] ?? NAMED_REFERENCES[name.toLowerCase()] ?? whole;
  });
}

/**
 * The URL a link leads to when it is an http(s) URL worth tracking, else undefined. Leading and trailing
 * whitespace is dropped (as browsers do); the rest is kept as written.
 */
export function trackableUrl(rawValue: string): string | undefined {
  const value = decodeAttribute(rawValue).replace(/^[\s\u0000-\u0020]+|[\s\u0000-\u0020]+$/g, '');
  if (!/^https?:\/\//i.test(value)) return undefined;
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
    if (parsed.hostname === '') return undefined;
  } catch {
    return undefined;
  }
  return value;
}

/** A tag's attribute value as found: its bounds in the source (quotes excluded). */
interface AttributeValue {
  name: string;
  start: number;
  end: number;
}

const isSpace = (code: number) => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;

/**
 * Reads the attributes of a start tag from `index` (just after its name) to its `>`. Returns the attributes with
 * values and the index just after the tag (or the source's length when it never ends).
 */
function readAttributes(source: string, index: number): { attributes: AttributeValue[]; end: number } {
  const attributes: AttributeValue[] = [];
  const length = source.length;
  let at = index;
  while (at < length) {
    const code = source.charCodeAt(at);
    if (isSpace(code) || code === 0x2f /* / */) {
      at++;
      continue;
    }
    if (code === 0x3e /* > */) return { attributes, end: at + 1 };
    // An attribute name: up to whitespace, /, >, or =.
    const nameStart = at;
    at++;
    while (at < length) {
      const next = source.charCodeAt(at);
      if (isSpace(next) || next === 0x2f || next === 0x3e || next === 0x3d) break;
      at++;
    }
    const name = source.slice(nameStart, at).toLowerCase();
    let probe = at;
    while (probe < length && isSpace(source.charCodeAt(probe))) probe++;
    if (source.charCodeAt(probe) !== 0x3d /* = */) continue;
    probe++;
    while (probe < length && isSpace(source.charCodeAt(probe))) probe++;
    const quote = source.charCodeAt(probe);
    if (quote === 0x22 || quote === 0x27) {
      const close = source.indexOf(quote === 0x22 ? '"' : "'", probe + 1);
      const valueEnd = close < 0 ? length : close;
      attributes.push({ name, start: probe + 1, end: valueEnd });
      at = close < 0 ? length : close + 1;
    } else {
      let valueEnd = probe;
      while (valueEnd < length && !isSpace(source.charCodeAt(valueEnd)) && source.charCodeAt(valueEnd) !== 0x3e)
        valueEnd++;
      attributes.push({ name, start: probe, end: valueEnd });
      at = valueEnd;
    }
  }
  return { attributes, end: length };
}

/** Where the pixel goes: before the last `</body>`, else before the last `</html>`, else at the very end. */
function pixelPosition(html: string, closers: { body: number; html: number }): number {
  if (closers.body >= 0) return closers.body;
  if (closers.html >= 0) return closers.html;
  return html.length;
}

/** The pixel tag: an image nobody sees, with no border and no alternative text. */
export function pixelTag(url: string): string {
  return `<img src="${url}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
}

/**
 * Rewrites an HTML body for tracking (see the module comment for what is left alone). With neither option it
 * returns the body unchanged and no links.
 */
export function rewriteForTracking(html: string, options: TrackingRewriteOptions): TrackingRewrite {
  const { pixelUrl, linkUrl } = options;
  const links: string[] = [];
  const parts: string[] = [];
  let copied = 0;
  let at = 0;
  const closers = { body: -1, html: -1 };
  const lower = html.toLowerCase();
  const length = html.length;
  while (at < length) {
    const open = html.indexOf('<', at);
    if (open < 0) break;
    if (html.startsWith('<!--', open)) {
      // A comment runs to the first `-->` (or to the end when it never closes).
      const close = html.indexOf('-->', open + 4);
      at = close < 0 ? length : close + 3;
      continue;
    }
    const first = lower.charCodeAt(open + 1);
    if (first === 0x21 /* ! */ || first === 0x3f /* ? */) {
      // A doctype, CDATA or processing instruction: to its `>`.
      const close = html.indexOf('>', open + 2);
      at = close < 0 ? length : close + 1;
      continue;
    }
    const closing = first === 0x2f; /* / */
    const nameStart = open + (closing ? 2 : 1);
    const nameCode = lower.charCodeAt(nameStart);
    if (!(nameCode >= 0x61 && nameCode <= 0x7a)) {
      // Not a tag (`a < b`, `</ >`): text.
      at = open + 1;
      continue;
    }
    let nameEnd = nameStart + 1;
    while (nameEnd < length) {
      const code = lower.charCodeAt(nameEnd);
      if (isSpace(code) || code === 0x2f || code === 0x3e) break;
      nameEnd++;
    }
    const name = lower.slice(nameStart, nameEnd);
    const { attributes, end } = readAttributes(html, nameEnd);
    if (closing) {
      if (name === 'body') closers.body = open;
      else if (name === 'html') closers.html = open;
      at = end;
      continue;
    }
    if (linkUrl && LINK_ELEMENTS.has(name)) {
      // The first href counts (HTML ignores repeated attributes).
      const href = attributes.find((attribute) => attribute.name === 'href');
      const url = href ? trackableUrl(html.slice(href.start, href.end)) : undefined;
      if (href && url !== undefined) {
        parts.push(html.slice(copied, href.start), linkUrl(links.length));
        copied = href.end;
        links.push(url);
      }
    }
    at = end;
    if (RAW_TEXT_ELEMENTS.has(name)) {
      // Its content is text up to its end tag: nothing in it is a tag.
      const close = lower.indexOf(`</${name}`, at);
      at = close < 0 ? length : close;
    }
  }
  if (pixelUrl !== undefined) {
    // Before the closing tags, unless a rewritten link comes after them (markup after </body>): then at the end.
    const found = pixelPosition(html, closers);
    const position = found < copied ? length : found;
    parts.push(html.slice(copied, position), pixelTag(pixelUrl));
    copied = position;
  }
  parts.push(html.slice(copied));
  return { html: parts.join(''), links };
}
