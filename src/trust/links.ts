/**
 * @module trust/links
 * Links that show one domain and open another: `<a href="https://evil.example/login">https://paypal.com</a>`. The HTML
 * is read once by htmlparser2's streaming parser (a linear tokenizer; no DOM is built), the visible text of each anchor
 * kept up to {@link MAX_ANCHOR_TEXT} characters.
 */
import { Parser } from 'htmlparser2';
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

/** Counts the anchors of an HTML body whose visible text names a domain other than their target's organisation. */
export function linkMismatches(html: string | undefined): LinkMismatch {
  const result: LinkMismatch = { count: 0, examples: [] };
  if (!html) return result;
  let href: string | undefined;
  let text = '';
  let skipping = 0;
  const close = () => {
    if (href === undefined) return;
    const shown = domainInText(text.trim());
    const target = hrefDomain(href);
    href = undefined;
    if (!shown || !target) return;
    const shownOrganisation = registrableDomain(asciiDomain(shown.domain));
    if (shownOrganisation === registrableDomain(asciiDomain(target.domain))) return;
    if (redirectsTo(target.url, shownOrganisation)) return;
    result.count++;
    if (result.examples.length < MAX_LINK_EXAMPLES)
      result.examples.push({
        text: text.trim().replace(/\s+/g, ' ').slice(0, MAX_EXAMPLE_TEXT),
        text_domain: unicodeDomain(shown.domain),
        href_domain: unicodeDomain(target.domain),
      });
  };
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'script' || name === 'style' || name === 'title') skipping++;
        if (name !== 'a') return;
        close(); // an anchor inside another closes it, as browsers do
        const value = attributes.href;
        if (value !== undefined) {
          href = value;
          text = '';
        }
      },
      ontext(data) {
        if (href === undefined || skipping > 0 || text.length >= MAX_ANCHOR_TEXT) return;
        text += data.slice(0, MAX_ANCHOR_TEXT - text.length);
      },
      onclosetag(name) {
        if (name === 'script' || name === 'style' || name === 'title') skipping = Math.max(0, skipping - 1);
        else if (name === 'a') close();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  close();
  return result;
}
