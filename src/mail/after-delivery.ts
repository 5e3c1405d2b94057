/**
 * @module mail/after-delivery
 * What follows the storing of an incoming message (from the SMTP listener or local delivery of a send), after
 * its transaction committed: iMIP content (`text/calendar` parts, `.ics` attachments) is applied to each
 * recipient's calendar, and the sender is collected as a contact (source `inbox`). Neither can undo or delay
 * the delivery itself: failures are logged.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { InboundInvitation, InvitationOutcome } from '../calendar/itip-inbound.js';
import type { ContactService } from '../contacts/contact-service.js';
import type { CoreDeps } from '../deps.js';
import type { InboundDelivery } from './inbound.js';
import type { ParsedAttachment, ParsedMessage } from './parse-inbound.js';

/** A message just stored for one or more mailboxes. */
export interface DeliveredMail {
  deliveries: InboundDelivery[];
  parsed: Pick<ParsedMessage, 'from' | 'attachments'>;
  /** The mailboxes of `deliveries` as the inbound path resolved them (read from the database when absent). */
  grants?: GrantRow[];
}

/** How long a sender found in (or added to) a mailbox's contacts is not looked up again for it. */
const KNOWN_SENDER_MS = 60_000;
/** Pairs remembered at most (the memory is emptied when full). */
const KNOWN_SENDERS_REMEMBERED = 10_000;

/** Largest iCalendar part applied (a real invitation is a few KB). */
const MAX_ICS_BYTES = 1024 * 1024;

/**
 * The iCalendar texts of a message, once each: its `text/calendar` parts, or when it has none, its `.ics` /
 * `application/ics` attachments (Google and Outlook send the same object both ways).
 */
export function calendarParts(attachments: ParsedAttachment[]): string[] {
  const isCalendar = (attachment: ParsedAttachment) => /^text\/calendar\b/i.test(attachment.contentType);
  const isIcsFile = (attachment: ParsedAttachment) => /^application\/(ics|calendar)\b/i.test(attachment.contentType) || /\.ics$/i.test(attachment.filename);
  const chosen = attachments.some(isCalendar) ? attachments.filter(isCalendar) : attachments.filter(isIcsFile);
  const seen = new Set<string>();
  const out: string[] = [];
  for (const attachment of chosen) {
    if (attachment.content.length > MAX_ICS_BYTES || seen.has(attachment.hash)) continue;
    seen.add(attachment.hash);
    out.push(attachment.content.toString('utf8'));
  }
  return out;
}

/** What the follow-up needs. */
export interface AfterDeliveryParts {
  contacts: Pick<ContactService, 'collect'>;
  /** The event service's handler of incoming iTIP (late-bound: the event service is built after the inbound path). */
  applyInvitation(grant: GrantRow, invitation: InboundInvitation): Promise<InvitationOutcome[]>;
}

/** Creates the follow-up the inbound service calls after each committed delivery. */
export function createAfterDelivery({ db, logger }: Pick<CoreDeps, 'db' | 'logger'>, parts: AfterDeliveryParts) {
  /**
   * Mailbox and sender pairs found known (or just collected) recently, with when (performance.now(): an age): a
   * busy correspondent costs a read a minute rather than one a message. A contact deleted meanwhile is collected
   * again by the first message after that minute.
   */
  const recentlyKnown = new Map<string, number>();
  const pair = (grantId: string, email: string) => `${grantId}\u0000${email}`;
  const remember = (grantId: string, email: string) => {
    if (recentlyKnown.size >= KNOWN_SENDERS_REMEMBERED) recentlyKnown.clear();
    recentlyKnown.set(pair(grantId, email), performance.now());
  };

  /** Collects the sender for mailboxes that do not know it yet (a read first: most senders are known). */
  async function collectSender(grants: GrantRow[], sender: { name?: string | undefined; email: string }): Promise<void> {
    const email = sender.email.trim().toLowerCase();
    const now = performance.now();
    const toCheck = grants.filter((grant) => grant.email !== email && !(now - (recentlyKnown.get(pair(grant.id, email)) ?? -Infinity) < KNOWN_SENDER_MS));
    if (toCheck.length === 0) return;
    const known = await db.orm
      .select({ grantId: tables.contacts.grantId })
      .from(tables.contacts)
      .where(and(inArray(tables.contacts.grantId, toCheck.map((grant) => grant.id)), eq(tables.contacts.primaryEmail, email)));
    const knownBy = new Set(known.map((row) => row.grantId));
    for (const grantId of knownBy) remember(grantId, email);
    const unknown = toCheck.filter((grant) => !knownBy.has(grant.id));
    if (unknown.length === 0) return;
    await db.write(async (tx) => {
      for (const grant of unknown) await parts.contacts.collect(grant, [sender], tx);
    });
    for (const grant of unknown) remember(grant.id, email);
  }

  return async function afterDelivery(mail: DeliveredMail): Promise<void> {
    const sender = mail.parsed.from[0];
    if (!sender || mail.deliveries.length === 0) return;
    const ids = [...new Set(mail.deliveries.map((delivery) => delivery.grantId))];
    const grants = mail.grants?.filter((grant) => ids.includes(grant.id)) ?? (await db.orm.select().from(tables.grants).where(inArray(tables.grants.id, ids)));
    const calendars = calendarParts(mail.parsed.attachments);
    for (const grant of calendars.length > 0 ? grants : []) {
      for (const ics of calendars) {
        try {
          await parts.applyInvitation(grant, { sender: sender.email, ics });
        } catch (error) {
          logger.warn('calendar part of a delivered message not applied', { grant_id: grant.id, error: error instanceof Error ? error.message : String(error) });
        }
      }
    }
    // Awaited (a read when the sender is known, as it mostly is), so nothing runs on after a shutdown closed the database.
    await collectSender(grants, sender).catch((error: unknown) => logger.warn('sender not collected as a contact', { error: error instanceof Error ? error.message : String(error) }));
  };
}
