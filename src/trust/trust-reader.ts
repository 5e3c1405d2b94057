/**
 * @module trust/trust-reader
 * The `trust` block of stored messages, computed when they are read (issue 35, item 5). Read time, not ingest: no
 * migration, ingest throughput unchanged, and verdicts that follow the mailbox (a contact added, a referenced message
 * arriving late) instead of freezing at arrival. What a read costs is kept small:
 * - the body's verdicts (links, hidden text, injection) are kept per message id in a bounded map: a message's body
 *   and subject never change, so a second read of it reads no body;
 * - the mailbox's known contacts are read once per {@link CONTACTS_FRESH_MS} per mailbox, the same array kept so the
 *   reference domains made from it are made once (assess.ts);
 * - the references of a page's messages and which of them the mailbox had are two indexed queries for the page.
 */
import type { Executor } from '../../storage/index.js';
import { assessContent, assessSender, type ContentTrust } from './assess.js';
import { readTrustBody } from './body.js';
import type { StoredAuthentication, Trust, TrustAddress, TrustGrant, TrustMessage, TrustReader } from './contracts.js';
import { knownContactsOf, knownIdsOf, referencesOf } from './trust-store.js';

/** How long a mailbox's contacts are used before they are read again, in milliseconds. */
const CONTACTS_FRESH_MS = 2_000;
/** Mailboxes whose contacts are kept at most. */
const CONTACTS_KEPT = 256;
/** Messages whose body verdicts are kept at most (each a few hundred bytes). */
const CONTENT_KEPT = 20_000;

/** Creates the reader over a database. */
export function createTrustReader({ db }: { db: { orm: Executor } }): TrustReader {
  const contacts = new Map<string, { at: number; value: Promise<TrustAddress[]> }>();
  const content = new Map<string, { length: number; value: ContentTrust }>();

  function contactsOf(grantId: string): Promise<TrustAddress[]> {
    const now = performance.now();
    const kept = contacts.get(grantId);
    if (kept && now - kept.at < CONTACTS_FRESH_MS) return kept.value;
    if (contacts.size >= CONTACTS_KEPT) contacts.clear();
    const value = knownContactsOf(db.orm, grantId);
    contacts.set(grantId, { at: now, value });
    value.catch(() => contacts.delete(grantId));
    return value;
  }

  /** The body's verdicts of a message, kept while the map has room (oldest forgotten first). */
  function contentOf(message: TrustMessage): ContentTrust {
    const body = message.body ?? '';
    const kept = content.get(message.id);
    if (kept && kept.length === body.length) return kept.value;
    const value = assessContent({ subject: message.subject, ...readTrustBody(body) });
    if (content.size >= CONTENT_KEPT) content.delete(content.keys().next().value!);
    content.set(message.id, { length: body.length, value });
    return value;
  }

  return {
    async assess(grant: TrustGrant, messages: readonly TrustMessage[]): Promise<Map<string, Trust>> {
      const out = new Map<string, Trust>();
      if (messages.length === 0) return out;
      const [knownContacts, references] = await Promise.all([
        contactsOf(grant.id),
        referencesOf(
          db.orm,
          grant.id,
          messages.map((message) => message.id),
        ),
      ]);
      const threadIds = new Set<string>();
      const headerIds = new Set<string>();
      for (const entry of references.values()) {
        if (entry.inReplyTo === null && entry.references.length === 0) continue;
        threadIds.add(entry.threadId);
        if (entry.inReplyTo !== null) headerIds.add(entry.inReplyTo);
        for (const id of entry.references) headerIds.add(id);
      }
      const known = await knownIdsOf(db.orm, grant.id, [...threadIds], [...headerIds]);
      const mailbox = { email: grant.email };
      for (const message of messages) {
        const named = references.get(message.id);
        const inThread = named ? known.get(named.threadId) : undefined;
        const from = message.from?.[0];
        const sender = assessSender({
          authentication: { stored: message.authentication_results as StoredAuthentication | undefined },
          from: from ? { email: from.email, name: from.name } : undefined,
          replyTo: message.reply_to,
          subject: message.subject,
          inReplyTo: named?.inReplyTo ?? null,
          references: named?.references ?? [],
          knownMessageId: (id) => inThread?.get(id)?.some((holder) => holder !== message.id) ?? false,
          mailbox,
          knownContacts,
        });
        out.set(message.id, { ...sender, ...contentOf(message) });
      }
      return out;
    },
  };
}
