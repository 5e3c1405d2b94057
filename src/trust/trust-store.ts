/**
 * @module trust/trust-store
 * The reads the trust block needs of a mailbox, each bounded: its known contacts, what its messages name in
 * In-Reply-To and References, and which of those ids the mailbox really had.
 */
import { and, eq, inArray, ne } from 'drizzle-orm';
import { tables, type Executor } from '../../storage/index.js';
import { MAX_KNOWN_CONTACTS, MAX_REFERENCED_IDS, type TrustAddress } from './contracts.js';

/**
 * The mailbox's known contacts, at most {@link MAX_KNOWN_CONTACTS} addresses: its address book and its domain's
 * directory. Senders collected from received mail (source `inbox`) are not "known": every sender is collected on
 * delivery, a spoofer too, and would vouch for itself.
 */
export async function knownContactsOf(db: Executor, grantId: string): Promise<TrustAddress[]> {
  const rows = await db
    .select({
      displayName: tables.contacts.displayName,
      givenName: tables.contacts.givenName,
      surname: tables.contacts.surname,
      emails: tables.contacts.emails,
    })
    .from(tables.contacts)
    .where(and(eq(tables.contacts.grantId, grantId), ne(tables.contacts.source, 'inbox')))
    .limit(MAX_KNOWN_CONTACTS);
  const out: TrustAddress[] = [];
  for (const row of rows) {
    const name = row.displayName?.trim() || [row.givenName, row.surname].filter(Boolean).join(' ').trim();
    for (const entry of row.emails) {
      if (out.length >= MAX_KNOWN_CONTACTS) return out;
      out.push(name ? { email: entry.email, name } : { email: entry.email });
    }
  }
  return out;
}

/** What a message names of earlier mail. */
export interface MessageReferences {
  threadId: string;
  inReplyTo: string | null;
  /** Newest last, as stored; at most {@link MAX_REFERENCED_IDS} of the newest. */
  references: string[];
}

/** In-Reply-To and References of messages of one mailbox, by message id. */
export async function referencesOf(
  db: Executor,
  grantId: string,
  messageIds: readonly string[],
): Promise<Map<string, MessageReferences>> {
  const out = new Map<string, MessageReferences>();
  if (messageIds.length === 0) return out;
  const rows = await db
    .select({
      id: tables.messages.id,
      threadId: tables.messages.threadId,
      inReplyTo: tables.messages.inReplyTo,
      references: tables.messages.references,
    })
    .from(tables.messages)
    .where(and(eq(tables.messages.grantId, grantId), inArray(tables.messages.id, [...messageIds])));
  for (const row of rows)
    out.set(row.id, {
      threadId: row.threadId,
      inReplyTo: row.inReplyTo,
      references: row.references.slice(-MAX_REFERENCED_IDS),
    });
  return out;
}

/**
 * Which of the given Message-IDs (as stored) belong to messages of the given threads of the mailbox, as
 * `threadId → lower-cased id`, with
 * the ids of the messages that have each (a message does not vouch for itself). A reply to mail this mailbox had joins
 * that mail's thread on arrival, so the thread is where its ids are; looking there uses the thread index, not a scan
 * of the mailbox.
 */
export async function knownIdsOf(
  db: Executor,
  grantId: string,
  threadIds: readonly string[],
  headerIds: readonly string[],
): Promise<Map<string, Map<string, string[]>>> {
  const out = new Map<string, Map<string, string[]>>();
  if (threadIds.length === 0 || headerIds.length === 0) return out;
  const rows = await db
    .select({
      id: tables.messages.id,
      threadId: tables.messages.threadId,
      headerId: tables.messages.headerMessageId,
    })
    .from(tables.messages)
    .where(
      and(
        inArray(tables.messages.threadId, [...threadIds]),
        eq(tables.messages.grantId, grantId),
        inArray(tables.messages.headerMessageId, [...headerIds]),
      ),
    );
  for (const row of rows) {
    if (row.headerId === null) continue;
    let ids = out.get(row.threadId);
    if (!ids) out.set(row.threadId, (ids = new Map<string, string[]>()));
    // Asked in the normalised form (lower case: src/trust/thread.ts); stored as the header wrote it.
    const key = row.headerId.toLowerCase();
    const holders = ids.get(key);
    if (holders) holders.push(row.id);
    else ids.set(key, [row.id]);
  }
  return out;
}
