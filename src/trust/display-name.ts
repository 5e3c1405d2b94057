/**
 * @module trust/display-name
 * Whether the From display name imitates someone its address is not: a known contact (same name, an address in
 * another organisation), the mailbox's own organisation, a well-known brand, or an address or domain written into the
 * name itself (`"support@paypal.com" <x@evil.example>`). Names are compared by confusable skeleton, words sorted, so
 * `Smith, Alice`, `alice smith` and `Аlice Smith` (Cyrillic А) are one name.
 */
import type { DisplayNameSpoof, TrustAddress, TrustMailbox } from './contracts.js';
import { MAX_KNOWN_CONTACTS } from './contracts.js';
import {
  MAILBOX_PROVIDERS,
  MAX_NAME_CHARS,
  asciiDomain,
  domainOfAddress,
  registrableDomain,
  registrableLabel,
  skeleton,
  unicodeDomain,
} from './domains.js';
import { domainOfToken } from './link-text.js';

/**
 * Brands most imitated in phishing (the APWG and vendors' yearly lists), by the words of their name as a display name
 * shows them, with the registrable labels they really send from. Only names that are not also common first names or
 * words: `Chase`, `Apple` and `Zoom` alone would match people and shops.
 */
export const BRANDS: readonly { name: string; labels: readonly string[] }[] = [
  { name: 'paypal', labels: ['paypal', 'paypal-communications', 'paypalobjects'] },
  {
    name: 'microsoft',
    labels: ['microsoft', 'office', 'office365', 'outlook', 'live', 'microsoftonline', 'sharepoint'],
  },
  { name: 'office 365', labels: ['microsoft', 'office', 'office365', 'microsoftonline'] },
  { name: 'outlook', labels: ['microsoft', 'outlook', 'live', 'office365'] },
  { name: 'sharepoint', labels: ['microsoft', 'sharepoint', 'sharepointonline'] },
  { name: 'onedrive', labels: ['microsoft', 'onedrive', 'live'] },
  { name: 'apple support', labels: ['apple', 'icloud'] },
  { name: 'apple id', labels: ['apple', 'icloud'] },
  { name: 'icloud', labels: ['apple', 'icloud'] },
  { name: 'google', labels: ['google', 'gmail', 'youtube', 'googlemail', 'withgoogle'] },
  { name: 'gmail', labels: ['google', 'gmail', 'googlemail'] },
  { name: 'amazon', labels: ['amazon', 'amazonaws', 'amazonses', 'amazon-corp'] },
  { name: 'docusign', labels: ['docusign'] },
  { name: 'dropbox', labels: ['dropbox', 'dropboxmail'] },
  { name: 'netflix', labels: ['netflix'] },
  { name: 'linkedin', labels: ['linkedin'] },
  { name: 'facebook', labels: ['facebook', 'facebookmail', 'meta'] },
  { name: 'instagram', labels: ['instagram', 'facebookmail', 'meta'] },
  { name: 'whatsapp', labels: ['whatsapp', 'facebookmail', 'meta'] },
  { name: 'dhl', labels: ['dhl'] },
  { name: 'fedex', labels: ['fedex'] },
  { name: 'adobe', labels: ['adobe', 'adobesign', 'echosign'] },
  { name: 'coinbase', labels: ['coinbase'] },
  { name: 'binance', labels: ['binance'] },
  { name: 'wells fargo', labels: ['wellsfargo', 'wf'] },
  { name: 'bank of america', labels: ['bankofamerica', 'bofa', 'ealerts'] },
  { name: 'american express', labels: ['americanexpress', 'aexp', 'amex'] },
  { name: 'github', labels: ['github'] },
  { name: 'okta', labels: ['okta', 'oktapreview'] },
  { name: 'stripe', labels: ['stripe'] },
];

/** The brands' real registrable labels, for the lookalike check (`paypa1.com` beside `paypal`). */
export function brandDomains(): string[] {
  const domains = new Set<string>();
  for (const brand of BRANDS) for (const label of brand.labels) if (label.length >= 4) domains.add(`${label}.com`);
  return [...domains];
}

/** Words of a name in skeleton form, without punctuation, at most 12. */
function wordsOf(name: string): string[] {
  const words: string[] = [];
  for (const raw of skeleton(name).split(/[\s,.;:()"'<>[\]/\\|_+-]+/)) {
    if (raw.length > 0) words.push(raw);
    if (words.length >= 12) break;
  }
  return words;
}

/** A name's identity: its skeleton words sorted, for names of two words or more (one word names too many people). */
export function nameKey(name: string): string | undefined {
  const words = wordsOf(name).filter((word) => word.length >= 2);
  if (words.length < 2) return undefined;
  return words.sort().join(' ');
}

/** Whether `phrase` (skeleton words) occurs as whole consecutive words of `words`. */
function containsWords(words: readonly string[], phrase: readonly string[]): boolean {
  if (phrase.length === 0) return false;
  for (let at = 0; at + phrase.length <= words.length; at++) {
    let all = true;
    for (let k = 0; k < phrase.length && all; k++) all = words[at + k] === phrase[k];
    if (all) return true;
  }
  return false;
}

/** Addresses and domains written into a display name (`support@paypal.com`, `paypal.com`), at most 4. */
function embeddedDomains(name: string): { shown: string; domain: string }[] {
  const found: { shown: string; domain: string }[] = [];
  for (const token of name.split(/[\s<>()"',;[\]]+/)) {
    if (token.length === 0) continue;
    const domain = domainOfToken(token);
    if (domain) found.push({ shown: token, domain });
    if (found.length >= 4) break;
  }
  return found;
}

/** What the spoof check reads besides the sender. */
export interface DisplayNameContext {
  mailbox?: TrustMailbox | undefined;
  knownContacts?: readonly TrustAddress[] | undefined;
  /**
   * The message's Reply-To addresses. A name whose contact is among them is not a spoof: calendar and document
   * services send as `Marco Rossi <calendar-notification@google.com>` with the person in Reply-To, and a spoofer wants
   * the answers.
   */
  replyTo?: readonly TrustAddress[] | undefined;
}

const NOT_DETECTED: DisplayNameSpoof = { detected: false };

/** A contact as the check compares it: address, name key, organisation. */
interface PreparedContact {
  email: string;
  key: string | undefined;
  organisation: string;
}

/** Contacts prepared once per list the caller keeps (the messages of a page share it). */
const PREPARED = new WeakMap<readonly TrustAddress[], PreparedContact[]>();

/** The contacts' keys, at most {@link MAX_KNOWN_CONTACTS}. */
function prepared(contacts: readonly TrustAddress[]): PreparedContact[] {
  const kept = PREPARED.get(contacts);
  if (kept) return kept;
  const out: PreparedContact[] = [];
  for (let index = 0; index < contacts.length && index < MAX_KNOWN_CONTACTS; index++) {
    const contact = contacts[index]!;
    const email = contact.email.trim().toLowerCase();
    out.push({
      email,
      key: contact.name ? nameKey(contact.name) : undefined,
      organisation: registrableDomain(asciiDomain(domainOfAddress(email))),
    });
  }
  PREPARED.set(contacts, out);
  return out;
}

/**
 * Whether the From display name imitates someone the address is not. Checked in order: an address or domain in the
 * name whose organisation is not the sender's; the name of a known contact, none of whose addresses is in the sender's
 * organisation; the mailbox's own organisation name or domain label from outside its domains; a brand from outside
 * its domains.
 */
export function displayNameSpoof(from: TrustAddress | undefined, context: DisplayNameContext): DisplayNameSpoof {
  const name = from?.name?.slice(0, MAX_NAME_CHARS).trim();
  if (!from || !name) return NOT_DETECTED;
  const senderAddress = from.email.trim().toLowerCase();
  const senderDomain = registrableDomain(asciiDomain(domainOfAddress(senderAddress)));

  for (const embedded of embeddedDomains(name)) {
    if (registrableDomain(asciiDomain(embedded.domain)) !== senderDomain)
      return { detected: true, reason: 'embedded_address', imitates: embedded.shown.slice(0, 320) };
  }

  const key = nameKey(name);
  if (key) {
    const replyTo = new Set((context.replyTo ?? []).slice(0, 16).map((address) => address.email.trim().toLowerCase()));
    let imitated: string | undefined;
    for (const contact of prepared(context.knownContacts ?? [])) {
      if (contact.email === senderAddress) return NOT_DETECTED; // the sender is known by this very address
      if (contact.key !== key) continue;
      if (replyTo.has(contact.email)) return NOT_DETECTED;
      if (contact.organisation === senderDomain) return NOT_DETECTED;
      imitated ??= contact.email;
    }
    if (imitated) return { detected: true, reason: 'known_contact', imitates: imitated };
  }

  const words = wordsOf(name);
  const mailbox = context.mailbox;
  if (mailbox) {
    const ownDomains = [domainOfAddress(mailbox.email), ...(mailbox.domains ?? [])]
      .filter((domain) => domain.length > 0)
      .map((domain) => registrableDomain(asciiDomain(domain)));
    if (!ownDomains.includes(senderDomain)) {
      // The organisation's name, or its first word when distinctive enough ("Northwind" of "Northwind Traders").
      const organisation = mailbox.organisation ? wordsOf(mailbox.organisation) : [];
      const first = organisation[0];
      if (
        organisation.length > 0 &&
        (containsWords(words, organisation) || (first !== undefined && first.length >= 4 && words.includes(first)))
      )
        return { detected: true, reason: 'own_organisation', imitates: mailbox.organisation!.slice(0, 320) };
      // The domain's label as a word, or a word of 5 letters or more it starts with ("northwind" of northwindtraders).
      for (const own of ownDomains) {
        if (MAILBOX_PROVIDERS.has(own)) continue;
        const label = skeleton(registrableLabel(unicodeDomain(own)));
        if (label.length < 4) continue;
        if (words.some((word) => word === label || (word.length >= 5 && label.startsWith(word))))
          return { detected: true, reason: 'own_organisation', imitates: own };
      }
    }
  }

  const senderLabel = registrableLabel(senderDomain);
  for (const brand of BRANDS) {
    if (!containsWords(words, brand.name.split(' '))) continue;
    if (brand.labels.includes(senderLabel)) return NOT_DETECTED;
    return { detected: true, reason: 'brand', imitates: brand.name };
  }
  return NOT_DETECTED;
}
