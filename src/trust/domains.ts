/**
 * @module trust/domains
 * Domain names as a reader sees them: the registrable domain (a bounded rule, no public-suffix download), the Unicode
 * form of `xn--` labels (node:url), a confusable skeleton after UTS #39 for the common Latin, Cyrillic and Greek
 * lookalikes, and an edit distance with a cut-off. Every function is linear in its input (labels are at most 63
 * characters, names are cut to {@link MAX_NAME_CHARS}).
 */
import { domainToASCII, domainToUnicode } from 'node:url';

/** Display names and domains read at most (a display name is a phrase; RFC 5321 caps a domain at 255). */
export const MAX_NAME_CHARS = 256;

/**
 * Second-level labels under a two-letter country code that are public suffixes in practice (`co.uk`, `com.au`,
 * `ac.jp`, `gov.br`…): the registrable domain is then the last three labels. A bounded stand-in for the Public Suffix
 * List, enough for the question asked here (which organisation a name belongs to); a wrong guess only makes a
 * lookalike comparison use one label too many or too few.
 */
const SECOND_LEVEL = new Set([
  'co',
  'com',
  'net',
  'org',
  'gov',
  'ac',
  'edu',
  'ne',
  'or',
  'go',
  'gob',
  'mil',
  'nic',
  'ltd',
  'plc',
  'sch',
  'gv',
  'in',
]);

/** A domain lower-cased, without a trailing dot, its `xn--` labels decoded (the input when it does not parse). */
export function unicodeDomain(domain: string): string {
  const lower = domain.slice(0, MAX_NAME_CHARS).trim().toLowerCase().replace(/\.$/, '');
  if (!lower.includes('xn--')) return lower;
  const decoded = domainToUnicode(lower);
  return decoded === '' ? lower : decoded;
}

/** A domain in ASCII (punycode) form, lower-cased; the input lower-cased when it is not a valid name. */
export function asciiDomain(domain: string): string {
  const lower = domain.slice(0, MAX_NAME_CHARS).trim().toLowerCase().replace(/\.$/, '');
  const ascii = domainToASCII(lower);
  return ascii === '' ? lower : ascii;
}

/** The registrable domain ("organisational domain") of a name: `mail.example.co.uk` → `example.co.uk`. */
export function registrableDomain(domain: string): string {
  const labels = domain.split('.').filter((label) => label.length > 0);
  if (labels.length <= 2) return labels.join('.');
  const tld = labels[labels.length - 1]!;
  const second = labels[labels.length - 2]!;
  const take = tld.length === 2 && SECOND_LEVEL.has(second) ? 3 : 2;
  return labels.slice(-take).join('.');
}

/** The label an organisation chose: `example` of `mail.example.co.uk`. */
export function registrableLabel(domain: string): string {
  return registrableDomain(domain).split('.')[0] ?? '';
}

/** The domain of an address (after its last `@`), lower-cased; empty when there is none. */
export function domainOfAddress(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0
    ? ''
    : address
        .slice(at + 1)
        .trim()
        .replace(/>$/, '')
        .toLowerCase();
}

/**
 * Characters that look like a Latin letter or digit, mapped to it: the lower-case rows of Unicode's confusables.txt
 * (UTS #39) for Cyrillic, Greek, Armenian and Latin look-alikes most used in homograph domains, plus the digits and
 * letters that pass for one another (0/o, 1/l, and capital I, which lower-cases to i but is read as l in many fonts,
 * is already gone by then). Bounded on purpose: the full table has 6,000 rows, mostly for scripts no domain mixes.
 */
const CONFUSABLE_CHARS: Readonly<Record<string, string>> = {
  // Cyrillic
  а: 'a',
  в: 'b',
  с: 'c',
  ԁ: 'd',
  е: 'e',
  ё: 'e',
  һ: 'h',
  і: 'i',
  ї: 'i',
  ј: 'j',
  к: 'k',
  ӏ: 'l',
  м: 'm',
  п: 'n',
  о: 'o',
  р: 'p',
  ԛ: 'q',
  г: 'r',
  ѕ: 's',
  т: 't',
  ц: 'u',
  ѵ: 'v',
  ԝ: 'w',
  х: 'x',
  у: 'y',
  ү: 'y',
  // Greek
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  γ: 'y',
  ω: 'w',
  // Armenian
  օ: 'o',
  ս: 'u',
  հ: 'h',
  ո: 'n',
  // Latin look-alikes
  ı: 'i',
  ɩ: 'i',
  ɡ: 'g',
  ɑ: 'a',
  ʟ: 'l',
  ꞁ: 'l',
  ɴ: 'n',
  ʀ: 'r',
  ѡ: 'w',
  // Digits and letters read as one another
  '0': 'o',
  '1': 'l',
  '|': 'l',
  '!': 'l',
};

/**
 * Letter pairs read as one letter (UTS #39 maps `rn` to `m`; `vv` and `cl` are their kin in small type). Applied after
 * the single characters, left to right, each a linear `replaceAll`.
 */
const CONFUSABLE_PAIRS: readonly (readonly [string, string])[] = [
  ['rn', 'm'],
  ['vv', 'w'],
  ['cl', 'd'],
];

/**
 * Greek and Cyrillic capitals that look like Latin capitals, mapped before lower-casing (their small forms differ:
 * capital Upsilon looks like Y, small upsilon like u).
 */
const CONFUSABLE_CAPITALS: Readonly<Record<string, string>> = {
  Α: 'a',
  Β: 'b',
  Ε: 'e',
  Ζ: 'z',
  Η: 'h',
  Ι: 'i',
  Κ: 'k',
  Μ: 'm',
  Ν: 'n',
  Ο: 'o',
  Ρ: 'p',
  Τ: 't',
  Υ: 'y',
  Χ: 'x',
  А: 'a',
  В: 'b',
  Е: 'e',
  К: 'k',
  М: 'm',
  Н: 'h',
  О: 'o',
  Р: 'p',
  С: 'c',
  Т: 't',
  У: 'y',
  Х: 'x',
  І: 'i',
  Ј: 'j',
  Ѕ: 's',
};

/** Combining marks (accents): `pаypàl` and `paypal` read alike. */
const COMBINING_MARKS = /[\u0300-\u036f]/g;

/**
 * The confusable skeleton of a string (UTS #39 section 4, bounded): compatibility forms folded (NFKC: full-width
 * letters), lower case, accents dropped, each look-alike character replaced by its Latin letter, look-alike pairs by
 * their letter. Two strings with the same skeleton read alike.
 */
export function skeleton(value: string): string {
  let capitals = '';
  for (const char of value.slice(0, MAX_NAME_CHARS).normalize('NFKC')) capitals += CONFUSABLE_CAPITALS[char] ?? char;
  const folded = capitals.toLowerCase().normalize('NFD').replace(COMBINING_MARKS, '');
  let mapped = '';
  for (const char of folded) mapped += CONFUSABLE_CHARS[char] ?? char;
  for (const [pair, letter] of CONFUSABLE_PAIRS) mapped = mapped.replaceAll(pair, letter);
  return mapped;
}

/** Whether a string holds a character outside ASCII. */
export function hasNonAscii(value: string): boolean {
  for (let at = 0; at < value.length; at++) if (value.charCodeAt(at) > 0x7f) return true;
  return false;
}

/**
 * Levenshtein distance between two strings when it is at most `limit`, else `limit + 1`: strings whose lengths differ
 * by more are not compared, and a row whose band (2·limit+1 around the diagonal) exceeds the limit ends it. O(n·m) at
 * worst, for labels of at most 63 characters (names cut to {@link MAX_NAME_CHARS}).
 */
export function boundedEditDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const width = b.length;
  let previous = new Array<number>(width + 1);
  let current = new Array<number>(width + 1);
  for (let j = 0; j <= width; j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - limit);
    const to = Math.min(width, i + limit);
    current.fill(limit + 1);
    current[0] = i;
    let rowMin = from === 1 ? i : limit + 1;
    for (let j = from; j <= to; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const value = Math.min(previous[j - 1]! + cost, previous[j]! + 1, current[j - 1]! + 1);
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return limit + 1;
    [previous, current] = [current, previous];
  }
  return Math.min(previous[width]!, limit + 1);
}

/**
 * Domains of the big mailbox providers: real, unrelated organisations whose names happen to be a letter apart
 * (`mail.com` and `gmail.com`, `gmx.de`/`gmx.net`), so a sender there is never called an edit-distance lookalike.
 */
export const MAILBOX_PROVIDERS = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'yahoo.com',
  'ymail.com',
  'aol.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'mail.com',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  'proton.me',
  'protonmail.com',
  'pm.me',
  'yandex.ru',
  'yandex.com',
  'mail.ru',
  'qq.com',
  '163.com',
  '126.com',
  'zoho.com',
  'fastmail.com',
  'tutanota.com',
  'hey.com',
]);

/** The verdict of {@link lookalikeOf}. */
export interface LookalikeMatch {
  reason: 'confusable' | 'character_swap' | 'edit_distance';
  domain: string;
  resembles: string;
}

/** Shortest registrable label compared by edit distance at all, and the shortest allowed two edits. */
const MIN_LABEL_FOR_ONE_EDIT = 4;
const MIN_LABEL_FOR_TWO_EDITS = 8;

/**
 * Whether `senderDomain` is a lookalike of one of `references` (registrable domains the mailbox knows: its own, its
 * contacts', well-known brands'). Not when the sender's registrable domain is itself one of them. Otherwise, in this
 * order: the same skeleton with non-ASCII or `xn--` labels (`confusable`), the same skeleton in ASCII (`character_swap`:
 * `rn`→`m`, `0`→`o`, `1`→`l`), or a registrable label one edit away (two for labels of 8 or more), unless the sender is
 * a big mailbox provider (`edit_distance`).
 */
/** Registrable domains a sender might imitate, each with its label's skeleton (made once per mailbox). */
export type ReferenceDomains = ReadonlyMap<string, { label: string; skeleton: string }>;

/** {@link ReferenceDomains} of a list of domains (any form: they are made registrable and Unicode). */
export function referenceDomainsOf(domains: Iterable<string>): Map<string, { label: string; skeleton: string }> {
  const out = new Map<string, { label: string; skeleton: string }>();
  for (const domain of domains) {
    if (domain.length === 0) continue;
    const registrable = registrableDomain(unicodeDomain(asciiDomain(domain)));
    if (out.has(registrable)) continue;
    const label = registrableLabel(registrable);
    out.set(registrable, { label, skeleton: skeleton(label) });
  }
  return out;
}

export function lookalikeOf(senderDomain: string, references: ReferenceDomains): LookalikeMatch | undefined {
  const unicode = unicodeDomain(senderDomain);
  if (unicode === '') return undefined;
  const registrable = registrableDomain(unicode);
  if (references.has(registrable)) return undefined;
  const label = registrableLabel(unicode);
  const labelSkeleton = skeleton(label);
  const exotic = hasNonAscii(label) || senderDomain.toLowerCase().includes('xn--');
  const provider = MAILBOX_PROVIDERS.has(registrable);
  let best: LookalikeMatch | undefined;
  for (const [reference, { label: referenceLabel, skeleton: referenceSkeleton }] of references) {
    if (referenceLabel === label) continue; // the same name under another suffix: amazon.de and amazon.com
    if (referenceSkeleton === labelSkeleton)
      return { reason: exotic ? 'confusable' : 'character_swap', domain: unicode, resembles: reference };
    if (best || provider) continue;
    const shorter = Math.min(label.length, referenceLabel.length);
    if (shorter < MIN_LABEL_FOR_ONE_EDIT) continue;
    const limit = shorter >= MIN_LABEL_FOR_TWO_EDITS ? 2 : 1;
    if (boundedEditDistance(labelSkeleton, referenceSkeleton, limit) <= limit)
      best = { reason: exotic ? 'confusable' : 'edit_distance', domain: unicode, resembles: reference };
  }
  return best;
}
