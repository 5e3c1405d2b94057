/**
 * @module messages/clean-conversation
 * The `conversation` of PUT /messages/clean (Nylas' clean conversations): a message's HTML body without quoted
 * history, scripts and styles, and, as asked, without links, images, tables or the closing phrase and signature.
 * Pure (no I/O): plain string rewriting of the stored HTML body.
 */

/** What to clean; each defaults as in Nylas (all true except htmlAsMarkdown). */
export interface CleanOptions {
  ignoreLinks?: boolean | undefined;
  ignoreImages?: boolean | undefined;
  imagesAsMarkdown?: boolean | undefined;
  ignoreTables?: boolean | undefined;
  removeConclusionPhrases?: boolean | undefined;
  htmlAsMarkdown?: boolean | undefined;
}

/**
 * Every regular expression below is linear on any input. Two things make that so:
 * - {@link closeStrayTags} first writes as `&lt;` every `<` that is not closed by a `>` before the next `<`, so a
 *   tag pattern (`<div[^>]*>`) never scans past the next `>`: unclosed tags repeated many times (`<div <div <div …`)
 *   made each match attempt scan to the end of the body (160 KB held the event loop for 44 s);
 * - an element with its content (`<script>…</script>`, `<a>…</a>`) is found by {@link replaceElements}, which looks
 *   for each closing tag once from where the last one ended, instead of a lazy `[\s\S]*?` that rescans the rest of
 *   the body for every unclosed opening tag.
 */

/** The `<div>` of a Gmail, Thunderbird or Yahoo quote block (its `class`), and of Outlook's (its `id`). */
const QUOTE_DIV_CLASS = /\bclass=["'][^"']*(gmail_quote|moz-cite-prefix|yahoo_quoted)/i;
const QUOTE_DIV_ID = /\bid=["'](divRplyFwdMsg|appendonsend)["']/i;
/** A tag of the body, once stray `<` are closed. */
const QUOTE_TAGS = /<(div|blockquote)\b[^>]*>/gi;
/** Outlook's `-----Original Message-----` (a run of dashes is tried from its first dash only). */
const ORIGINAL_MESSAGE = /(?<!-)-{2,}\s*Original Message\s*-{2,}/i;
/** `On … wrote:` from its `On`; what may stand before it is checked by {@link startsALine}. */
const ON_WROTE = /\bOn\s[^<\n]{1,300}\swrote:/gi;
/** Outlook's header of a forwarded or answered message, from its `From:`. */
const FROM_SENT = /(<b>)?From:(<\/b>)?\s[^<\n]{1,300}(<br\s*\/?>|\n)\s{0,200}(<b>)?Sent:/gi;
/** What may end the text just before a quote line: a line break, a `<br>`, or a `<p>` or `<div>` opening tag. */
const LINE_START = /(\n|<br\s*\/?>|<p\b[^>]*>|<p>|<div\b[^>]*>|<div>)$/i;
/** White space skipped backwards before a quote line (more is not a line start). */
const MAX_LEADING_SPACE = 1_000;

/** Closing phrases that start a signature; the line and everything after it go with remove_conclusion_phrases. */
const CONCLUSION =
  /^(best( regards| wishes)?|kind regards|warm regards|regards|many thanks|thanks( again| so much)?|thank you|cheers|sincerely|yours( truly| sincerely)?|all the best|talk soon|--)[\s,.!]*$/i;

/** Block-level tags after which text continues on a new line (for splitting into lines). */
const BLOCK_END = /<\/(p|div|li|tr|h[1-6]|table|ul|ol)>|<br\s*\/?>/gi;

/**
 * `html` with each `<` that no `>` closes before the next `<` (or the end) written `&lt;`: afterwards every tag is
 * closed before the next one starts. One pass.
 */
export function closeStrayTags(html: string): string {
  let out = '';
  let from = 0;
  // The next `>` at or after the current `<`, found again only once passed (-1: none is left).
  let close = 0;
  let open = html.indexOf('<');
  while (open >= 0) {
    if (close >= 0 && close <= open) close = html.indexOf('>', open + 1);
    const next = html.indexOf('<', open + 1);
    if (close < 0 || (next >= 0 && next < close)) {
      out += `${html.slice(from, open)}&lt;`;
      from = open + 1;
    }
    open = next;
  }
  return from === 0 ? html : out + html.slice(from);
}

/**
 * Replaces each element `<name …>content</name>` whose opening tag `opening` matches (a global pattern whose first
 * group is the element's name), pairing each opening tag with the first closing tag after it, as a lazy match does.
 * An opening tag with no closing tag after it is left as it is. Linear: each closing tag is searched for once per
 * name from where the last search ended, and a name with no closing tag left is not searched for again.
 */
function replaceElements(
  html: string,
  opening: RegExp,
  replace: (tag: string, content: string, name: string) => string,
): string {
  let out = '';
  let from = 0;
  const closes = new Map<string, { at: number; end: number } | null>();
  opening.lastIndex = 0;
  for (let match = opening.exec(html); match; match = opening.exec(html)) {
    const name = match[1]!.toLowerCase();
    const afterTag = match.index + match[0].length;
    let close = closes.get(name);
    if (close === null) continue;
    if (close === undefined || close.at < afterTag) {
      const pattern = new RegExp(`</${name}>`, 'gi');
      pattern.lastIndex = afterTag;
      const found = pattern.exec(html);
      close = found ? { at: found.index, end: found.index + found[0].length } : null;
      closes.set(name, close);
      if (close === null) continue;
    }
    out += html.slice(from, match.index) + replace(match[0], html.slice(afterTag, close.at), match[1]!);
    from = close.end;
    opening.lastIndex = close.end;
  }
  return from === 0 ? html : out + html.slice(from);
}

/**
 * The line start before `at`, white space aside, as `(^|\n|<br>|<p …>|<div …>)\s*` would find it: where it begins
 * and where the text after it begins; undefined when there is none.
 */
function lineStartBefore(html: string, at: number): { start: number; after: number } | undefined {
  let spaceStart = at;
  while (spaceStart > 0 && at - spaceStart < MAX_LEADING_SPACE && /\s/.test(html[spaceStart - 1]!)) spaceStart--;
  if (spaceStart === 0) return { start: 0, after: 0 };
  const tag = LINE_START.exec(html.slice(Math.max(0, spaceStart - 400), spaceStart));
  if (tag) return { start: spaceStart - tag[0].length, after: spaceStart };
  const lineBreak = html.indexOf('\n', spaceStart);
  return lineBreak >= 0 && lineBreak < at ? { start: lineBreak, after: lineBreak + 1 } : undefined;
}

/**
 * Cuts a body at the first sign of quoted history: the first of each kind of sign, where it is not at the very start
 * (there is nothing before it to keep).
 */
function withoutQuotedHistory(html: string): string {
  let cut = html.length;
  const consider = (index: number) => {
    if (index > 0 && index < cut) cut = index;
  };
  // The first tag of each kind (<blockquote>, a quote <div> by class, one by id), as a search for each finds it.
  const found = { blockquote: false, byClass: false, byId: false };
  QUOTE_TAGS.lastIndex = 0;
  for (
    let match = QUOTE_TAGS.exec(html);
    match && !(found.blockquote && found.byClass && found.byId);
    match = QUOTE_TAGS.exec(html)
  ) {
    if (match[1]!.toLowerCase() === 'blockquote') {
      if (!found.blockquote) consider(match.index);
      found.blockquote = true;
      continue;
    }
    if (!found.byClass && QUOTE_DIV_CLASS.test(match[0])) {
      consider(match.index);
      found.byClass = true;
    }
    if (!found.byId && QUOTE_DIV_ID.test(match[0])) {
      consider(match.index);
      found.byId = true;
    }
  }
  const original = ORIGINAL_MESSAGE.exec(html);
  if (original) consider(original.index);
  for (const pattern of [ON_WROTE, FROM_SENT]) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(html); match; match = pattern.exec(html)) {
      const line = lineStartBefore(html, match.index);
      if (line === undefined) continue;
      if (line.start > 0) consider(line.after);
      break;
    }
  }
  return html.slice(0, cut);
}

/** Removes the closing phrase and what follows it (a signature), looking only at the last lines. */
function withoutConclusion(html: string): string {
  const lines = html.split(/(?<=<\/(?:p|div)>|<br\s*\/?>|\n)/i);
  for (let index = lines.length - 1; index >= Math.max(0, lines.length - 12); index--) {
    const text = lines[index]!.replace(/<[^>]*>/g, '')
      .replace(/&nbsp;/g, ' ')
      .trim();
    if (CONCLUSION.test(text)) return lines.slice(0, index).join('');
  }
  return html;
}

/** Simple HTML → Markdown-flavoured text: headings, emphasis, links, list items, paragraphs. */
function toMarkdown(html: string): string {
  let text = replaceElements(
    html,
    /<(h[1-6])[^>]*>/gi,
    (_tag, content, name) => `\n${'#'.repeat(Number(name.slice(1)))} ${content}\n\n`,
  );
  text = replaceElements(text, /<(b|strong)\b[^>]*>/gi, (_tag, content) => `**${content}**`);
  text = replaceElements(text, /<(i|em)\b[^>]*>/gi, (_tag, content) => `*${content}*`);
  text = replaceElements(text, /<(a)\b[^>]*>/gi, (tag, content) => {
    const href = /\bhref=["']([^"']*)["']/i.exec(tag);
    return href ? `[${content}](${href[1]})` : tag + content + '</a>';
  });
  return decodeEntities(
    text
      .replace(/<li\b[^>]*>/gi, '\n- ')
      .replace(/<\/p>/gi, '\n\n')
      .replace(BLOCK_END, '\n')
      .replace(/<[^>]*>/g, ''),
  )
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function decodeEntities(text: string): string {
  return text
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** HTML comments removed; one left open hides the rest, as a browser reads it. */
function withoutComments(html: string): string {
  let out = '';
  let from = 0;
  for (let open = html.indexOf('<!--'); open >= 0; open = html.indexOf('<!--', from)) {
    const close = html.indexOf('-->', open + 4);
    if (close < 0) return out + html.slice(from, open);
    out += html.slice(from, open);
    from = close + 3;
  }
  return from === 0 ? html : out + html.slice(from);
}

/** `text` without the `<br>` tags (and white space) at its end. */
function withoutTrailingBreaks(text: string): string {
  let end = text.length;
  for (;;) {
    let at = end;
    while (at > 0 && /\s/.test(text[at - 1]!)) at--;
    const tail = /<br\s*\/?>$/i.exec(text.slice(Math.max(0, at - 64), at));
    if (!tail) return text.slice(0, end);
    end = at - tail[0].length;
  }
}

/**
 * The HTML of a body that is cleaned, in characters: the conversation is the start of a body (quoted history and
 * signatures follow it), and the cleaning, linear as it is, would otherwise hold the event loop for about a second
 * on a 40 MB body (and up to 0.3 s on 1 MB of hostile markup).
 */
export const MAX_CLEANED_HTML = 512 * 1024;

/** The cleaned conversation of one HTML body (its first {@link MAX_CLEANED_HTML} characters). */
export function cleanConversation(body: string, options: CleanOptions = {}): string {
  const html = body.length > MAX_CLEANED_HTML ? body.slice(0, MAX_CLEANED_HTML) : body;
  const ignoreLinks = options.ignoreLinks ?? true;
  const ignoreImages = options.ignoreImages ?? true;
  const imagesAsMarkdown = options.imagesAsMarkdown ?? true;
  const ignoreTables = options.ignoreTables ?? true;
  const removeConclusion = options.removeConclusionPhrases ?? true;
  let out = closeStrayTags(withoutComments(html));
  out = replaceElements(out, /<(script|style|head|title)\b[^>]*>/gi, () => '').replace(
    /<\/?(html|body|meta|link)\b[^>]*>/gi,
    '',
  );
  out = withoutQuotedHistory(out);
  if (imagesAsMarkdown) {
    out = out.replace(/<img\b[^>]*>/gi, (tag) => {
      const src = /\bsrc=["']([^"']*)["']/i.exec(tag)?.[1] ?? '';
      const alt = /\balt=["']([^"']*)["']/i.exec(tag)?.[1] ?? '';
      return ignoreImages && src.startsWith('cid:') ? '' : `![${alt}](${src})`;
    });
  } else if (ignoreImages) {
    out = out.replace(/<img\b[^>]*>/gi, '');
  }
  if (ignoreLinks) out = replaceElements(out, /<(a)\b[^>]*>/gi, (_tag, content) => content);
  if (ignoreTables) {
    out = out
      .replace(/<\/tr>/gi, '<br>')
      .replace(/<\/t[dh]>/gi, ' ')
      .replace(/<\/?(table|thead|tbody|tfoot|tr|td|th|colgroup|col)\b[^>]*>/gi, '');
  }
  if (removeConclusion) out = withoutConclusion(out);
  if (options.htmlAsMarkdown) return toMarkdown(out);
  return withoutTrailingBreaks(out).trim();
}
