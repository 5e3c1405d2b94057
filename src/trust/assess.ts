/**
 * @module trust/assess
 * {@link assessTrust}: the whole `trust` block of one message from plain data the caller gathered (the stored verdict,
 * the addresses, the ids, the bodies). Pure: no table, no clock, no network.
 */
import { authenticationVerdicts } from './authentication.js';
import type { LookalikeDomain, Trust, TrustInput } from './contracts.js';
import { MAX_KNOWN_CONTACTS } from './contracts.js';
import { brandDomains, displayNameSpoof } from './display-name.js';
import { asciiDomain, domainOfAddress, lookalikeOf, registrableDomain, unicodeDomain } from './domains.js';
import { injectionScore } from './injection.js';
import { linkMismatches } from './links.js';
import { forgedThread } from './thread.js';

/** Brands' domains, made once: every mailbox compares senders with them. */
const BRAND_DOMAINS: readonly string[] = brandDomains();

/**
 * The registrable domains a sender might imitate: the mailbox's own, its contacts' (at most
 * {@link MAX_KNOWN_CONTACTS}), and the brands'; Unicode form.
 */
export function referenceDomains(input: Pick<TrustInput, 'mailbox' | 'knownContacts'>): Set<string> {
  const domains = new Set<string>();
  const add = (domain: string) => {
    if (domain.length > 0) domains.add(registrableDomain(unicodeDomain(asciiDomain(domain))));
  };
  if (input.mailbox) {
    add(domainOfAddress(input.mailbox.email));
    for (const domain of input.mailbox.domains ?? []) add(domain);
  }
  const contacts = input.knownContacts ?? [];
  for (let index = 0; index < contacts.length && index < MAX_KNOWN_CONTACTS; index++)
    add(domainOfAddress(contacts[index]!.email));
  for (const domain of BRAND_DOMAINS) add(domain);
  return domains;
}

/** The lookalike verdict of a sender's address against the mailbox's reference domains. */
export function lookalikeDomain(senderEmail: string | undefined, references: ReadonlySet<string>): LookalikeDomain {
  const domain = senderEmail ? domainOfAddress(senderEmail) : '';
  if (domain === '') return { detected: false };
  const match = lookalikeOf(domain, references);
  return match ? { detected: true, ...match } : { detected: false };
}

/** Hidden characters as the wire counts them: a whole number, never negative. */
function hiddenCount(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** The `trust` block of one message. */
export function assessTrust(input: TrustInput): Trust {
  const authentication = authenticationVerdicts(input.authentication);
  const hiddenTextRemoved = hiddenCount(input.hiddenTextRemoved);
  return {
    ...authentication,
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
    link_mismatch: linkMismatches(input.html),
    hidden_text_removed: hiddenTextRemoved,
    injection: injectionScore({
      subject: input.subject,
      text: input.text,
      hiddenText: input.hiddenText,
      hiddenTextRemoved,
    }),
  };
}
