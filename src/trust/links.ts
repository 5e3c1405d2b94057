/**
 * @module trust/links
 * Links that show one domain and open another: `<a href="https://evil.example/login">https://paypal.com</a>`. The
 * links come from src/reading's HTML reader (its tokenizer keeps its own stack: linear on deep unclosed markup, where
 * htmlparser2's `Parser` is quadratic); the visible text of each is read up to {@link MAX_ANCHOR_TEXT} characters.
 */
import type { ReadLink } from '../reading/index.js';
import type { LinkMismatch } from './contracts.js';
import { asciiDomain, registrableDomain, unicodeDomain } from './domains.js';
import { domainInText, domainOfToken } from './link-text.js';

/** Visible text of one anchor kept: enough for the words that name a domain. */
const MAX_ANCHOR_TEXT = 512;
/** Longest href parsed (real tracking links run to 2 KB; the host is at the start). */
const MAX_HREF = 8192;
/** Examples returned at most (the wire schema's bound). */
export const MAX_LINK_EXAMPLES = 5;
/** Query parameters of a link read for a redirect target at most. */
const MAX_REDIRECT_PARAMETERS = 32;
/** Text of an example shown at most. */
const MAX_EXAMPLE_TEXT = 200;

/** The domain a link opens (lower case): the host of an http(s) URL, the domain of a mailto address. */
function hrefDomain(href: string): { domain: string; url: URL | undefined } | undefined {
  const value = href.slice(0, MAX_HREF).trim();
  if (/^mailto:/i.test(value)) {
    const domain = domainOfToken(value.replace(/\?.*$/s, ''));
    return domain ? { domain, url: undefined } : undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  return url.hostname ? { domain: url.hostname.toLowerCase(), url } : undefined;
}

/**
 * Whether a link is a redirect to the shown domain: a query parameter whose value is a URL (or a host) in the same
 * organisation, as click trackers and safe-link wrappers write them (`?url=https%3A%2F%2Fwww.acme.com%2F…`).
 */
function redirectsTo(url: URL | undefined, organisation: string): boolean {
  if (!url) return false;
  let seen = 0;
  for (const value of url.searchParams.values()) {
    if (++seen > MAX_REDIRECT_PARAMETERS) break;
    const domain = domainOfToken(value.slice(0, MAX_HREF));
    if (domain && registrableDomain(asciiDomain(domain)) === organisation) return true;
  }
  return false;
}

/** A link as src/reading found it: its visible text, where it leads (a redirect resolved) and the href as written. */
export type TrustLink = Pick<ReadLink, 'text' | 'url' | 'original'>;

/**
 * Counts the links whose visible text names a domain other than their target's organisation. The links are the ones
 * src/reading's HTML reader found (visible anchors only, in body order, at most 1,000), so the HTML is read once for
 * the body, the hidden text and the links together, by a reader linear on any markup.
 */
export function linkMismatches(links: readonly TrustLink[] | undefined): LinkMismatch {
  const result: LinkMismatch = { count: 0, examples: [] };
  if (!links) return result;
  for (const link of links) {
    const text = link.text.slice(0, MAX_ANCHOR_TEXT).trim();
    const shown = domainInText(text);
    if (!shown) continue;
    const target = hrefDomain(link.url);
    if (!target) continue;
    const shownOrganisation = registrableDomain(asciiDomain(shown.domain));
    if (shownOrganisation === registrableDomain(asciiDomain(target.domain))) continue;
    if (redirectsTo(target.url, shownOrganisation)) continue;
    // Written as a redirect the reader did not unwrap: the wrapper's own query may still name the shown domain.
    if (link.original !== undefined && redirectsTo(hrefDomain(link.original)?.url, shownOrganisation)) continue;
    result.count++;
    if (result.examples.length < MAX_LINK_EXAMPLES)
      result.examples.push({
        text: text.replace(/\s+/g, ' ').slice(0, MAX_EXAMPLE_TEXT),
        text_domain: unicodeDomain(shown.domain),
        href_domain: unicodeDomain(target.domain),
      });
  }
  return result;
}
