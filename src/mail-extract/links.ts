/**
 * @module mail-extract/links
 * The links of a mail, ranked for an agent finishing a sign-up: verification, magic sign-in, confirmation and reset
 * links first, then the others, unsubscribe and social links last, each URL once. HTML links come from the reader
 * (src/reading: visible links only, tracking redirects resolved); bare URLs from the plain text and the subject. Pure,
 * linear, bounded: at most {@link MAX_SCANNED} URLs of a text and {@link MAX_LINKS} links returned.
 */
import type { ReadLink } from '../reading/index.js';
import type { ExtractedLink, ExtractedWhere } from './contracts.js';

/** Links returned, at most. */
export const MAX_LINKS = 20;
/** Bare URLs of one text looked at, at most. */
const MAX_SCANNED = 500;
/** Longest URL kept (longer ones are cut off by mail clients and rarely work). */
const MAX_URL_CHARS = 2_048;

const URLS = /\bhttps?:\/\/[^\s<>"'`)\]}]{1,2048}/gi;
const ACTION =
  /verif|confirm|activat|magic|sign[-_ ]?in|signin|log[-_ ]?in|login|reset|password|passwordless|auth|validate|one[-_ ]?click|token=|otp|onboard|invite|accept|get started|finish/i;
const LOW =
  /unsubscribe|opt[-_]?out|preferences|privacy|terms|facebook\.com|twitter\.com|x\.com\/|linkedin\.com|instagram\.com|youtube\.com|help|support|mailto:/i;

/** The bare URLs of a text, as links without text. */
export function urlsIn(text: string, where: ExtractedWhere): ExtractedLink[] {
  const links: ExtractedLink[] = [];
  for (const match of text.matchAll(URLS)) {
    links.push({ url: match[0].replace(/[.,;:!?]+$/, ''), text: '', where });
    if (links.length >= MAX_SCANNED) break;
  }
  return links;
}

/** The rank class of a link: 0 an action (verify, sign in, reset), 2 unsubscribe or social, 1 the rest. */
function rankOf(link: ExtractedLink): number {
  const both = `${link.text} ${link.url}`;
  if (LOW.test(both) && !ACTION.test(link.text)) return 2;
  if (ACTION.test(both)) return 0;
  return 1;
}

/** Ranks the links of a mail: action links first, each URL once (its first text kept), at most {@link MAX_LINKS}. Pure. */
export function rankLinks(html: readonly ReadLink[], bare: readonly ExtractedLink[]): ExtractedLink[] {
  const seen = new Map<string, ExtractedLink>();
  const all: ExtractedLink[] = [
    ...html.map((link): ExtractedLink => ({ url: link.url, text: link.text.trim().slice(0, 200), where: 'body' })),
    ...bare,
  ];
  for (const link of all) {
    if (!/^https?:\/\//i.test(link.url) || link.url.length > MAX_URL_CHARS) continue;
    const known = seen.get(link.url);
    if (known) {
      if (!known.text && link.text) known.text = link.text;
      continue;
    }
    seen.set(link.url, { ...link });
    if (seen.size >= MAX_SCANNED) break;
  }
  const ranked = [...seen.values()].map((link, order) => ({ link, order, rank: rankOf(link) }));
  ranked.sort((left, right) => left.rank - right.rank || left.order - right.order);
  return ranked.slice(0, MAX_LINKS).map(({ link }) => link);
}
