/**
 * @module reading/links
 * Where a link leads. Mail wraps links in redirects (a sender's click tracking, a gateway's URL rewriting such as
 * Microsoft Safe Links or Proofpoint URL Defense, Google's `/url?q=`); a model reading the redirect cannot tell
 * where the link goes. When the redirect carries its target in the URL, the target is returned instead. A share or
 * login link whose `url=` names a page (facebook.com/sharer.php?u=…) is not a redirect and is left alone: only known
 * redirectors, and click-tracking paths of any host, are unwrapped.
 */
import type { LinkOptions } from './contracts.js';

/** Hosts (or host suffixes) that only redirect, and the query parameter that carries the target. */
const KNOWN_REDIRECTORS: ReadonlyArray<{ host: string; path?: string; parameters: readonly string[] }> = [
  { host: 'safelinks.protection.outlook.com', parameters: ['url'] },
  { host: 'google.com', path: '/url', parameters: ['q', 'url'] },
  { host: 'l.facebook.com', parameters: ['u'] },
  { host: 'lm.facebook.com', parameters: ['u'] },
  { host: 'l.instagram.com', parameters: ['u'] },
  { host: 'l.messenger.com', parameters: ['u'] },
  { host: 'youtube.com', path: '/redirect', parameters: ['q'] },
  { host: 'linkedin.com', path: '/redir/redirect', parameters: ['url'] },
  { host: 'out.reddit.com', parameters: ['url'] },
  { host: 'slack-redir.net', parameters: ['url'] },
  { host: 'vk.com', path: '/away.php', parameters: ['to'] },
  { host: 'steamcommunity.com', path: '/linkfilter/', parameters: ['url', 'u'] },
  { host: 't.umblr.com', parameters: ['z'] },
  { host: 'urldefense.proofpoint.com', parameters: ['u'] },
  { host: 'mandrillapp.com', path: '/track/click', parameters: ['url'] },
  { host: 'emailtracking.hubspot.com', parameters: ['url'] },
];

/** Path segments of click-tracking endpoints (`/ls/click`, `/track/click`, `/redirect`, `/r/…`, `/out`). */
const TRACKING_SEGMENTS = new Set([
  'click',
  'clicks',
  'track',
  'tracking',
  'trk',
  'redirect',
  'redir',
  'r',
  'out',
  'away',
  'l',
  'ls',
  'link',
  'links',
  'c',
  'ct',
  'cl',
  'wf',
  'e',
  'mk',
]);

/** Query parameters that carry a redirect's target, on a click-tracking path of any host. */
const TARGET_PARAMETERS = [
  'url',
  'u',
  'redirect',
  'redirect_url',
  'redirect_uri',
  'redirecturl',
  'target',
  'dest',
  'destination',
  'goto',
  'link',
  'to',
  'q',
  'r',
  'href',
];

/** Redirects inside redirects are unwrapped this many times at most. */
const MAX_UNWRAP = 4;
/** Longer URLs are not unwrapped (they are kept whole, as written). */
const MAX_URL = 8192;

function isWebUrl(value: string): boolean {
  return /^https?:\/\/[^\s/]/i.test(value);
}

function hostMatches(host: string, suffix: string): boolean {
  return host === suffix || host.endsWith(`.${suffix}`);
}

/** Proofpoint URL Defense v2 (`u=https-3A__example.com_path`) and v3 (`/v3/__https://example.com__;…`). */
function proofpointTarget(url: URL): string | undefined {
  if (url.pathname.startsWith('/v3/__')) {
    const raw = url.href.slice(url.href.indexOf('/v3/__') + 6);
    const end = raw.indexOf('__;');
    return end > 0 ? raw.slice(0, end) : undefined;
  }
  const encoded = url.searchParams.get('u');
  if (encoded === null) return undefined;
  const decoded = encoded
    .replace(/_/g, '/')
    .replace(/-([0-9A-F]{2})/g, (_whole, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return isWebUrl(decoded) ? decoded : undefined;
}

/** The target a redirect URL carries, or undefined when it is not a redirect that carries one. */
function unwrapOnce(href: string, options: LinkOptions): string | undefined {
  const own = options.ownTracking;
  if (own !== undefined && own.clickPrefix.length > 0 && href.startsWith(own.clickPrefix)) {
    const token = href.slice(own.clickPrefix.length).split(/[?#]/)[0] ?? '';
    const target = token.length > 0 ? own.resolve?.(token) : undefined;
    return target !== undefined && isWebUrl(target) ? target : undefined;
  }
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return undefined;
  }
  const host = url.hostname.toLowerCase();
  if (hostMatches(host, 'urldefense.proofpoint.com') || hostMatches(host, 'urldefense.com')) {
    return proofpointTarget(url);
  }
  for (const redirector of KNOWN_REDIRECTORS) {
    if (!hostMatches(host, redirector.host)) continue;
    if (redirector.path !== undefined && !url.pathname.startsWith(redirector.path)) continue;
    for (const parameter of redirector.parameters) {
      const value = url.searchParams.get(parameter);
      if (value !== null && isWebUrl(value)) return value;
    }
    return undefined;
  }
  if (url.search.length === 0) return undefined;
  const segments = url.pathname.toLowerCase().split('/');
  if (!segments.some((segment) => TRACKING_SEGMENTS.has(segment.replace(/\.(php|aspx?|html?)$/, '')))) {
    return undefined;
  }
  for (const parameter of TARGET_PARAMETERS) {
    const value = url.searchParams.get(parameter);
    if (value !== null && isWebUrl(value)) return value;
  }
  return undefined;
}

/**
 * Where a link leads: `href` itself, or the target of the redirects it is wrapped in when they carry it. `resolved`
 * says whether a redirect was unwrapped.
 */
export function resolveLink(href: string, options: LinkOptions = {}): { url: string; resolved: boolean } {
  if (options.resolveRedirects === false || href.length > MAX_URL) return { url: href, resolved: false };
  let url = href;
  for (let round = 0; round < MAX_UNWRAP; round++) {
    const target = unwrapOnce(url, options);
    if (target === undefined || target === url) break;
    url = target.trim();
  }
  return { url, resolved: url !== href };
}

/** What a link's `href` is to a reader: a web, mail or phone link to keep, or nothing to link (`#top`, `javascript:`). */
export function linkable(href: string): boolean {
  return /^(https?:\/\/|mailto:|tel:|sms:|ftp:\/\/)/i.test(href);
}

/**
 * The URL written as a Markdown link destination: whole (never shortened), with the characters that would end or
 * break the destination (spaces, parentheses, angle brackets) percent-encoded.
 */
export function markdownDestination(url: string): string {
  return url.replace(/[\s()<>]/g, (character) =>
    character === ' ' ? '%20' : `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}
