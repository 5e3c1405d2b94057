/**
 * @module reading/contracts
 * The declared types of src/reading/: bodies as a model should read them (HTML → Markdown or text with every link,
 * hidden text removed and counted, quoted history, signatures and disclaimers collapsed).
 */

/** How a body is returned: Markdown (the agent default), plain text, or the HTML itself (hidden parts removed). */
export type BodyFormat = 'markdown' | 'text' | 'html';

/** What to do with quoted history, signatures or disclaimers: a one-line marker, nothing at all, or as written. */
export type CollapseMode = 'collapse' | 'remove' | 'keep';

/** Characters of hidden text removed, by the reason they were hidden. */
export interface HiddenTextCounts {
  /** Hidden by CSS or markup: display:none, visibility:hidden, opacity:0, font-size:0, zero size, off-screen, `hidden`. */
  css: number;
  /** Text of the same colour as its background (white on white), or a fully transparent colour. */
  sameColour: number;
  /** Text inside HTML comments (Outlook's conditional comments, `<!--[if mso]>`, are removed but not counted). */
  comments: number;
  /** Zero-width, bidi-control, Unicode tag and other invisible characters. */
  invisibleCharacters: number;
}

/** A link as the reader sees it. */
export interface ReadLink {
  /** The link's text (an image's alt text when the link is an image), as shown. */
  text: string;
  /** Where the link leads: the tracking redirect resolved when the URL carries its target. */
  url: string;
  /** The URL as written in the mail, when it differs from `url` (a resolved redirect). */
  original?: string;
}

/** Options of {@link HtmlToMarkdownOptions} and renderBody that shape links. */
export interface LinkOptions {
  /** `keep` (default): `[text](url)`; `drop`: the text only (as /v3 messages/clean's ignore_links). */
  links?: 'keep' | 'drop';
  /** Resolve tracking redirects to their target where the URL carries it (default true). */
  resolveRedirects?: boolean;
  /**
   * This installation's own click-tracking links (`<tracking url>/t/l/<token>`): the prefix before the token and,
   * when the caller can look one up, the recorded URL of a token. Unresolved ones are kept as written.
   */
  ownTracking?: { clickPrefix: string; resolve?: (token: string) => string | undefined };
}

/** Options of htmlToMarkdown. */
export interface HtmlToMarkdownOptions extends LinkOptions {
  /** `markdown` (default) or `text` (the same reading without markup: links as `text (url)`). */
  flavour?: 'markdown' | 'text';
  /** Images: their alt text (default) or nothing. */
  images?: 'alt' | 'drop';
  /** Data tables as Markdown tables (default) or flattened to their text, as layout tables always are. */
  tables?: 'markdown' | 'flatten';
  /** At most this many characters of output (default 200,000); `truncated` says when it was reached. */
  maxChars?: number;
  /** At most this many characters of HTML are read (default 4 MiB); the rest is cut and `truncated` is set. */
  maxInputChars?: number;
}

/** What htmlToMarkdown returns. */
export interface HtmlConversion {
  /** The Markdown (or text), whitespace normalised: no trailing spaces, at most one blank line in a row. */
  markdown: string;
  /** Characters of hidden text removed in all. */
  hiddenTextRemoved: number;
  hidden: HiddenTextCounts;
  /** The hidden text itself (not the invisible characters), pieces joined by newlines, at most 16 KiB. */
  hiddenText: string;
  /** Links in body order (at most 1,000). */
  links: ReadLink[];
  /** How many links were tracking redirects resolved to their target. */
  linksResolved: number;
  /** True when the input or the output bound was reached. */
  truncated: boolean;
  /** True when the body looks like a reply that quotes with HTML (an attribution, a cite blockquote, Outlook's header). */
  quotesAttributed: boolean;
}

/** Options of collapseQuotes. */
export interface CollapseOptions {
  /** Quoted history (default collapse). */
  quoted?: CollapseMode;
  /** Signatures: a `-- ` block, a sign-off's contact block, "Sent from my iPhone" (default collapse). */
  signatures?: CollapseMode;
  /**
   * With `signatures: 'remove'`: `remove` also drops a closing phrase ("Best,", "Regards") in the last 15 lines and
   * everything after it, the name too (/v3 messages/clean's remove_conclusion_phrases); `keep` (default) keeps the
   * sign-off and the name.
   */
  signOff?: 'keep' | 'remove';
  /** Legal disclaimers and confidentiality notices (default collapse). */
  disclaimers?: CollapseMode;
  /**
   * A forwarded message (`---------- Forwarded message ---------`, Apple's `Begin forwarded message:`): `keep`
   * (default) shows its header as one line and keeps its text (what the sender asks about), its own quoted history
   * collapsed; `collapse` treats it as quoted history.
   */
  forwarded?: 'keep' | 'collapse';
  /**
   * Whether `>` lines count as quoted history without an attribution (`On … wrote:`, `From: … Sent: …`) before
   * them: true for text/plain bodies (default), false for HTML where a `<blockquote>` may be a testimonial.
   */
  bareQuotes?: boolean;
}

/** What collapseQuotes returns. */
export interface CollapsedText {
  text: string;
  /** Lines of quoted history collapsed or removed (non-blank lines). */
  quotedCollapsed: number;
  /** Answers a person wrote between quoted lines, kept with the quoted line they answer. */
  inlineAnswers: number;
  /** Signature lines collapsed or removed. */
  signaturesCollapsed: number;
  /** Disclaimer lines collapsed or removed. */
  disclaimersCollapsed: number;
}

/** A message as renderBody reads it: its HTML body, its text body, or both. */
export interface BodySource {
  html?: string | null | undefined;
  text?: string | null | undefined;
}

/** Options of renderBody. */
export interface RenderBodyOptions extends LinkOptions, CollapseOptions {
  format: BodyFormat;
  images?: 'alt' | 'drop';
  tables?: 'markdown' | 'flatten';
  /** Read the text body even when there is an HTML one (default false: the HTML is what a person sees). */
  preferText?: boolean;
  /** Bound of the body returned, in characters (default 200,000). */
  maxChars?: number;
}

/** What renderBody returns. */
export interface RenderedBody {
  body: string;
  /** The format of `body`: the one asked for, except `text` when `html` was asked of a message without HTML. */
  format: BodyFormat;
  /** Which body was read. */
  source: 'html' | 'text' | 'none';
  hiddenTextRemoved: number;
  hidden: HiddenTextCounts;
  quotedCollapsed: number;
  inlineAnswers: number;
  signaturesCollapsed: number;
  disclaimersCollapsed: number;
  links: ReadLink[];
  linksResolved: number;
  truncated: boolean;
  /** Characters of the body read (HTML or text) and of the body returned. */
  charsBefore: number;
  charsAfter: number;
}
