/**
 * @module reading/render-body
 * A message's body as a model should read it, in the format asked for: Markdown (the agent default) or text from
 * the HTML body when there is one (else the text body), hidden text removed and counted, quoted history, signatures
 * and disclaimers collapsed; or the HTML itself with its hidden parts cut out.
 */
import type { BodySource, HiddenTextCounts, RenderBodyOptions, RenderedBody } from './contracts.js';
import { DEFAULT_MAX_CHARS, htmlToMarkdown, visibleHtml } from './html-to-markdown.js';
import { removeInvisibleCharacters } from './invisible.js';
import { collapseQuotes } from './quotes.js';

/** A text body is read up to this many characters (as the HTML bound of reading/html-to-markdown). */
const MAX_TEXT_INPUT = 4 * 1024 * 1024;

function noHidden(): HiddenTextCounts {
  return { css: 0, sameColour: 0, comments: 0, invisibleCharacters: 0 };
}

function total(hidden: HiddenTextCounts): number {
  return hidden.css + hidden.sameColour + hidden.comments + hidden.invisibleCharacters;
}

/** `text` cut to `max` characters (never inside a surrogate pair), and whether it was cut. */
function bounded(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), truncated: true };
}

/**
 * A text/plain body as a model should read it: invisible characters removed (counted), quoted history, signatures
 * and disclaimers collapsed (a text body's `>` lines are quotes without an attribution).
 */
export function readPlainText(
  text: string,
  options: Omit<RenderBodyOptions, 'format'> = {},
): { text: string; hidden: HiddenTextCounts; stats: ReturnType<typeof collapseQuotes>; truncated: boolean } {
  const input = bounded(text, MAX_TEXT_INPUT);
  const cleaned = removeInvisibleCharacters(input.text.replace(/\r\n?/g, '\n'));
  const hidden = noHidden();
  hidden.invisibleCharacters = cleaned.removed;
  const stats = collapseQuotes(cleaned.text, { bareQuotes: true, ...options });
  return { text: stats.text, hidden, stats, truncated: input.truncated };
}

/**
 * Renders a message's body for a model (see the module comment). `text` is the Markdown reading without its markup
 * (links as `text (url)`); `html` is the HTML body with hidden elements, same-colour text, comments and scripts cut
 * out (quoted history is left as written), or the text body (format `text`) when there is no HTML.
 */
export function renderBody(message: BodySource, options: RenderBodyOptions): RenderedBody {
  const max = options.maxChars ?? DEFAULT_MAX_CHARS;
  const html = message.html ?? '';
  const text = message.text ?? '';
  const useHtml = html.trim().length > 0 && !(options.preferText === true && text.trim().length > 0);
  const empty: RenderedBody = {
    body: '',
    format: options.format,
    source: 'none',
    hiddenTextRemoved: 0,
    hidden: noHidden(),
    quotedCollapsed: 0,
    inlineAnswers: 0,
    signaturesCollapsed: 0,
    disclaimersCollapsed: 0,
    links: [],
    linksResolved: 0,
    truncated: false,
    charsBefore: 0,
    charsAfter: 0,
  };
  if (!useHtml && text.trim().length === 0) return empty;

  if (options.format === 'html' && useHtml) {
    const visible = visibleHtml(html);
    const cleaned = removeInvisibleCharacters(visible.html);
    const hidden = { ...visible.tree.hidden, invisibleCharacters: cleaned.removed };
    const body = bounded(cleaned.text, max);
    return {
      ...empty,
      body: body.text,
      source: 'html',
      hidden,
      hiddenTextRemoved: total(hidden),
      truncated: body.truncated || visible.tree.truncated,
      charsBefore: html.length,
      charsAfter: body.text.length,
    };
  }

  if (!useHtml) {
    const read = readPlainText(text, options);
    const body = bounded(read.text, max);
    return {
      ...empty,
      body: body.text,
      format: options.format === 'html' ? 'text' : options.format,
      source: 'text',
      hidden: read.hidden,
      hiddenTextRemoved: total(read.hidden),
      quotedCollapsed: read.stats.quotedCollapsed,
      inlineAnswers: read.stats.inlineAnswers,
      signaturesCollapsed: read.stats.signaturesCollapsed,
      disclaimersCollapsed: read.stats.disclaimersCollapsed,
      truncated: body.truncated || read.truncated,
      charsBefore: text.length,
      charsAfter: body.text.length,
    };
  }

  const conversion = htmlToMarkdown(html, {
    ...options,
    flavour: options.format === 'text' ? 'text' : 'markdown',
    // Collapsing shortens: read a little more than the bound, then cut what is returned.
    maxChars: Math.min(max * 4, DEFAULT_MAX_CHARS * 4),
  });
  const collapsed = collapseQuotes(conversion.markdown, {
    ...options,
    bareQuotes: options.bareQuotes ?? conversion.quotesAttributed,
  });
  const body = bounded(collapsed.text, max);
  return {
    ...empty,
    body: body.text,
    source: 'html',
    hidden: conversion.hidden,
    hiddenTextRemoved: conversion.hiddenTextRemoved,
    quotedCollapsed: collapsed.quotedCollapsed,
    inlineAnswers: collapsed.inlineAnswers,
    signaturesCollapsed: collapsed.signaturesCollapsed,
    disclaimersCollapsed: collapsed.disclaimersCollapsed,
    links: conversion.links,
    linksResolved: conversion.linksResolved,
    truncated: body.truncated || conversion.truncated,
    charsBefore: html.length,
    charsAfter: body.text.length,
  };
}

/** Whether a stored body is HTML (a plain-text draft's body is its text); tags of ordinary mail HTML decide. */
export function looksLikeHtml(body: string): boolean {
  return /<(html|body|div|p|br|table|span|a|b|i|blockquote|img|font|head|meta)\b/i.test(body.slice(0, 100_000));
}
