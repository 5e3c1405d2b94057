/**
 * @module trust/assess
 * {@link assessTrust}: the whole `trust` block of one message from plain data the caller gathered (the stored verdict,
 * the addresses, the ids, the bodies). Pure: no table, no clock, no network.
 */
import { authenticationVerdicts } from './authentication.js';
import type { LookalikeDomain, Trust, TrustInput } from './contracts.js';
import { MAX_HIDDEN_SCAN, MAX_INJECTION_SCAN, MAX_KNOWN_CONTACTS } from './contracts.js';
import { readTrustBody } from './body.js';
import { brandDomains, displayNameSpoof } from './display-name.js';
import { domainOfAddress, lookalikeOf, referenceDomainsOf, type ReferenceDomains } from './domains.js';
import { injectionScore } from './injection.js';
import { linkMismatches } from './links.js';
import { forgedThread } from './thread.js';

/** Brands' domains, made once: every mailbox compares senders with them. */
const BRAND_DOMAINS: readonly string[] = brandDomains();

/**
 * Reference domains made for a contact list, kept while the caller keeps the list: assessing the messages of a page
 * with the same `knownContacts` array makes them once (a mailbox of 5,000 contacts costs about 20 ms to prepare).
 */
const PREPARED = new WeakMap<readonly unknown[], Map<string, ReferenceDomains>>();
const NO_CONTACTS: readonly never[] = [];

/**
 * The registrable domains a sender might imitate: the mailbox's own, its contacts' (at most
 * {@link MAX_KNOWN_CONTACTS}), and the brands'; Unicode form, with their labels' skeletons.
 */
export function referenceDomains(input: Pick<TrustInput, 'mailbox' | 'knownContacts'>): ReferenceDomains {
  const contacts = input.knownContacts ?? NO_CONTACTS;
  const mailboxKey = input.mailbox ? [input.mailbox.email, ...(input.mailbox.domains ?? [])].join('\n') : '';
  let byMailbox = PREPARED.get(contacts);
  const kept = byMailbox?.get(mailboxKey);
  if (kept) return kept;
  const domains: string[] = [];
  if (input.mailbox) domains.push(domainOfAddress(input.mailbox.email), ...(input.mailbox.domains ?? []));
  for (let index = 0; index < contacts.length && index < MAX_KNOWN_CONTACTS; index++)
    domains.push(domainOfAddress(contacts[index]!.email));
  domains.push(...BRAND_DOMAINS);
  const references = referenceDomainsOf(domains);
  if (!byMailbox) PREPARED.set(contacts, (byMailbox = new Map<string, ReferenceDomains>()));
  if (byMailbox.size >= 16) byMailbox.clear();
  byMailbox.set(mailboxKey, references);
  return references;
}

/** The lookalike verdict of a sender's address against the mailbox's reference domains. */
export function lookalikeDomain(senderEmail: string | undefined, references: ReferenceDomains): LookalikeDomain {
  const domain = senderEmail ? domainOfAddress(senderEmail) : '';
  if (domain === '') return { detected: false };
  const match = lookalikeOf(domain, references);
  return match ? { detected: true, ...match } : { detected: false };
}

/** Hidden characters as the wire counts them: a whole number, never negative. */
function hiddenCount(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** The verdicts about who sent the message: authentication, display name, domain, thread. Cheap: no body is read. */
export type SenderTrust = Pick<
  Trust,
  'spf' | 'dkim' | 'dmarc' | 'display_name_spoof' | 'lookalike_domain' | 'forged_thread'
>;
/** The verdicts about what the message says: links, hidden text, injection. They depend on the body and subject only. */
export type ContentTrust = Pick<Trust, 'link_mismatch' | 'hidden_text_removed' | 'injection'>;

/** The sender's part of the block (see {@link assessTrust}). */
export function assessSender(input: TrustInput): SenderTrust {
  return {
    ...authenticationVerdicts(input.authentication),
    display_name_spoof: displayNameSpoof(input.from, {
      mailbox: input.mailbox,
      knownContacts: input.knownContacts,
      replyTo: input.replyTo,
    }),
    lookalike_domain: lookalikeDomain(input.from?.email, referenceDomains(input)),
    forged_thread: forgedThread({
      subject: input.subject,
      inReplyTo: input.inReplyTo,
      references: input.references,
      knownMessageId: input.knownMessageId,
    }),
  };
}

/**
 * The content's part of the block (see {@link assessTrust}): a message's body and subject never change, so a reader
 * may keep it. The text is scanned up to {@link MAX_INJECTION_SCAN} characters, the hidden text {@link MAX_HIDDEN_SCAN}.
 */
export function assessContent(input: TrustInput): ContentTrust {
  const hiddenTextRemoved = hiddenCount(input.hiddenTextRemoved);
  const links = input.links ?? (input.html ? readTrustBody(input.html).links : undefined);
  return {
    link_mismatch: linkMismatches(links),
    hidden_text_removed: hiddenTextRemoved,
    injection: injectionScore({
      subject: input.subject,
      text: input.text?.slice(0, MAX_INJECTION_SCAN),
      hiddenText: input.hiddenText?.slice(0, MAX_HIDDEN_SCAN),
      hiddenTextRemoved,
    }),
  };
}

/** The `trust` block of one message. */
export function assessTrust(input: TrustInput): Trust {
  return { ...assessSender(input), ...assessContent(input) };
}
