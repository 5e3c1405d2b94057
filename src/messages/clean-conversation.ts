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
 * Where quoted history starts: a Gmail or Outlook quote block, a blockquote, an "On … wrote:" line, an Outlook
 * "-----Original Message-----" or "From: … Sent:" header. Everything from there on is the earlier conversation.
 */
const QUOTE_STARTS = [
  /<div[^>]*class=["'][^"']*(gmail_quote|moz-cite-prefix|yahoo_quoted)[^"']*["'][^>]*>/i,
  /<div[^>]*id=["'](divRplyFwdMsg|appendonsend)["'][^>]*>/i,
  /<blockquote\b[^>]*>/i,
  /(^|\n|<br\s*\/?>|<p[^>]*>|<div[^>]*>)\s*On\s[^<\n]{1,300}\swrote:/i,
  /-{2,}\s*Original Message\s*-{2,}/i,
  /(^|\n|<br\s*\/?>|<p[^>]*>|<div[^>]*>)\s*(<b>)?From:(<\/b>)?\s[^<\n]{1,300}(<br\s*\/?>|\n)\s*(<b>)?Sent:/i,
];

/** Closing phrases that start a signature; the line and everything after it go with remove_conclusion_phrases. */
const CONCLUSION = /^(best( regards| wishes)?|kind regards|warm regards|regards|many thanks|thanks( again| so much)?|thank you|cheers|sincerely|yours( truly| sincerely)?|all the best|talk soon|--)[\s,.!]*$/i;

/** Block-level tags after which text continues on a new line (for splitting into lines). */
const BLOCK_END = /<\/(p|div|li|tr|h[1-6]|table|ul|ol)>|<br\s*\/?>/gi;

/** Cuts a body at the first sign of quoted history. */
function withoutQuotedHistory(html: string): string {
  let cut = html.length;
  for (const pattern of QUOTE_STARTS) {
    const match = pattern.exec(html);
    if (match && match.index < cut && match.index > 0) cut = match.index + (match[1]?.length ?? 0);
  }
  return html.slice(0, cut);
}

/** Removes the closing phrase and what follows it (a signature), looking only at the last lines. */
function withoutConclusion(html: string): string {
  const lines = html.split(/(?<=<\/(?:p|div)>|<br\s*\/?>|\n)/i);
  for (let index = lines.length - 1; index >= Math.max(0, lines.length - 12); index--) {
    const text = lines[index]!.replace(/<[^>]*>/g, '').replace(/&nbsp;/g, ' ').trim();
    if (CONCLUSION.test(text)) return lines.slice(0, index).join('');
  }
  return html;
}

/** Simple HTML → Markdown-flavoured text: headings, emphasis, links, list items, paragraphs. */
function toMarkdown(html: string): string {
  return decodeEntities(
    html
      .replace(/<h([1-6])[^>]*>([\s\S]*?)<\/h\1>/gi, (_all, level: string, text: string) => `\n${'#'.repeat(Number(level))} ${text}\n\n`)
      .replace(/<(b|strong)\b[^>]*>([\s\S]*?)<\/\1>/gi, '**$2**')
      .replace(/<(i|em)\b[^>]*>([\s\S]*?)<\/\1>/gi, '*$2*')
      .replace(/<a\b[^>]*href=["']([^"']*)["'][^>]*>([\s\S]*?)<\/a>/gi, '[$2]($1)')
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

/** The cleaned conversation of one HTML body. */
export function cleanConversation(html: string, options: CleanOptions = {}): string {
  const ignoreLinks = options.ignoreLinks ?? true;
  const ignoreImages = options.ignoreImages ?? true;
  const imagesAsMarkdown = options.imagesAsMarkdown ?? true;
  const ignoreTables = options.ignoreTables ?? true;
  const removeConclusion = options.removeConclusionPhrases ?? true;
  let out = html
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(script|style|head|title)\b[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<\/?(html|body|meta|link)\b[^>]*>/gi, '');
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
  if (ignoreLinks) out = out.replace(/<a\b[^>]*>([\s\S]*?)<\/a>/gi, '$1');
  if (ignoreTables) {
    out = out
      .replace(/<\/tr>/gi, '<br>')
      .replace(/<\/t[dh]>/gi, ' ')
      .replace(/<\/?(table|thead|tbody|tfoot|tr|td|th|colgroup|col)\b[^>]*>/gi, '');
  }
  if (removeConclusion) out = withoutConclusion(out);
  if (options.htmlAsMarkdown) return toMarkdown(out);
  return out.replace(/(<br\s*\/?>\s*)+$/i, '').trim();
}
