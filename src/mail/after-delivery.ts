/**
 * @module mail/after-delivery
 * What follows the storing of an incoming message (from the SMTP listener or local delivery of a send). Nothing
 * here runs before the sender is answered: the SMTP 250 waits only for the durable commit.
 *
 * - **Invitations** (`text/calendar` parts, `.ics` attachments) are applied to each recipient's calendar by a
 *   durable job, `mail.invitations`, stored in the same transaction as the message ({@link invitationJobsOf}), so it
 *   exists if and only if the message does, and runs once the message is acknowledged. The iCalendar is parsed under
 *   hard limits, off the event loop. What it did is recorded per copy in `invitation_outcomes` (`applied`, `ignored`
 *   or `unreadable`): a job that runs again after a crash skips the copies already recorded, and a part that cannot
 *   be read, or whose job keeps failing, is recorded `unreadable` and never tried again. The sender's retries never
 *   repeat any of it: the message was acknowledged once.
 * - **Contacts**: the sender is collected as a contact (source `inbox`) after the reply, in the process that stored
 *   the message. It is idempotent and cheap, and deliberately not a durable job: a crash in between loses at most
 *   the collection of that one message's sender, and the next message from them collects it.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { readBlob, tables, type GrantRow } from '../../storage/index.js';
import type { InboundInvitation, InvitationOutcome } from '../calendar/index.js';
import type { ContactService } from '../contacts/contracts.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { Job, JobInput, JobHandler } from '../jobs/index.js';
import type { AfterDelivery, DeliveredMail, StoredCopy } from './contracts.js';
import type { ParsedAttachment, ParsedMessage } from '../mime/index.js';

export type { DeliveredMail, StoredCopy } from './contracts.js';

/** The job kind that applies a received message's iCalendar parts. */
export const INVITATIONS_JOB = 'mail.invitations';

/** What a `mail.invitations` job carries: blob hashes, not the texts (they are stored with the message). */
interface InvitationJobPayload {
  sender: string;
  /** Blob hashes of the iCalendar parts, in message order. */
  parts: string[];
  copies: { grant_id: string; message_id: string }[];
}

/** How long a sender found in (or added to) a mailbox's contacts is not looked up again for it. */
const KNOWN_SENDER_MS = 60_000;
/** Pairs remembered at most (the memory is emptied when full). */
const KNOWN_SENDERS_REMEMBERED = 10_000;

/** Largest iCalendar part applied (a real invitation is a few KB). */
const MAX_ICS_BYTES = 1024 * 1024;
/** iCalendar parts of one message applied at most (Google and Outlook send one object, twice at most). */
const MAX_ICS_PARTS = 4;

/**
 * Runs of one invitation job, this one included, after which its copies not yet recorded are recorded `unreadable`
 * without another try: a part that failed (or took the process down) this often is not tried again.
 */
export const MAX_INVITATION_ATTEMPTS = 3;

/**
 * The iCalendar parts of a message, once each: its `text/calendar` parts, or when it has none, its `.ics` /
 * `application/ics` attachments (Google and Outlook send the same object both ways).
 */
export function calendarParts<
  T extends Pick<ParsedAttachment, 'contentType' | 'filename' | 'hash'> & { content: { length: number } },
>(attachments: T[]): T[] {
  const isCalendar = (attachment: T) => /^text\/calendar\b/i.test(attachment.contentType);
  const isIcsFile = (attachment: T) =>
    /^application\/(ics|calendar)\b/i.test(attachment.contentType) || /\.ics$/i.test(attachment.filename);
  const chosen = attachments.some(isCalendar) ? attachments.filter(isCalendar) : attachments.filter(isIcsFile);
  const seen = new Set<string>();
  const out: T[] = [];
  for (const attachment of chosen) {
    if (attachment.content.length > MAX_ICS_BYTES || seen.has(attachment.hash)) continue;
    seen.add(attachment.hash);
    out.push(attachment);
    if (out.length === MAX_ICS_PARTS) break;
  }
  return out;
}

/**
 * The jobs to store with a message: one `mail.invitations` job for all its copies when it has iCalendar parts and a
 * sender, none otherwise (most mail).
 */
export function invitationJobsOf(
  parsed: Pick<ParsedMessage, 'from' | 'attachments'>,
  copies: StoredCopy[],
): JobInput[] {
  const sender = parsed.from[0]?.email;
  if (!sender || copies.length === 0 || parsed.attachments.length === 0) return [];
  const parts = calendarParts(parsed.attachments);
  if (parts.length === 0) return [];
  const payload: InvitationJobPayload = {
    sender: sender.trim().toLowerCase(),
    parts: parts.map((part) => part.hash),
    copies: copies.map((copy) => ({ grant_id: copy.grantId, message_id: copy.messageId })),
  };
  return [
    {
      kind: INVITATIONS_JOB,
      payload: payload as unknown as Record<string, unknown>,
      dedupeKey: `${INVITATIONS_JOB}:${copies[0]!.messageId}`,
    },
  ];
}

/** What the follow-up needs. */
export interface AfterDeliveryParts {
  contacts: Pick<ContactService, 'collect'>;
  /** The event service's handler of incoming iTIP (late-bound: the event service is built after the inbound path). */
  applyInvitation(grant: GrantRow, invitation: InboundInvitation): Promise<InvitationOutcome[]>;
}

/** Creates the follow-up of deliveries: the invitation job's handler and the collection of senders. */
export function createAfterDelivery(
  { db, logger, clock }: Pick<CoreDeps, 'db' | 'logger' | 'clock'>,
  parts: AfterDeliveryParts,
): AfterDelivery {
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
  async function collectSender(
    grants: GrantRow[],
    sender: { name?: string | undefined; email: string },
  ): Promise<void> {
    const email = sender.email.trim().toLowerCase();
    const now = performance.now();
    const toCheck = grants.filter(
      (grant) =>
        grant.email !== email && !(now - (recentlyKnown.get(pair(grant.id, email)) ?? -Infinity) < KNOWN_SENDER_MS),
    );
    if (toCheck.length === 0) return;
    const known = await db.orm
      .select({ grantId: tables.contacts.grantId })
      .from(tables.contacts)
      .where(
        and(
          inArray(
            tables.contacts.grantId,
            toCheck.map((grant) => grant.id),
          ),
          eq(tables.contacts.primaryEmail, email),
        ),
      );
    const knownBy = new Set(known.map((row) => row.grantId));
    for (const grantId of knownBy) remember(grantId, email);
    const unknown = toCheck.filter((grant) => !knownBy.has(grant.id));
    if (unknown.length === 0) return;
    await db.write(async (tx) => {
      for (const grant of unknown) await parts.contacts.collect(grant, [sender], tx);
    });
    for (const grant of unknown) remember(grant.id, email);
  }

  /** Records what the invitation did for one copy (a copy already recorded keeps its first record). */
  async function record(
    copy: InvitationJobPayload['copies'][number],
    status: 'applied' | 'ignored' | 'unreadable',
    detail: InvitationOutcome[],
  ): Promise<void> {
    await db.write((tx) =>
      tx
        .insert(tables.invitationOutcomes)
        .values({
          messageId: copy.message_id,
          grantId: copy.grant_id,
          status,
          detail: detail.map(({ action, eventId, reason }) => ({
            action,
            ...(eventId ? { eventId } : {}),
            ...(reason ? { reason } : {}),
          })),
          createdAt: unixSeconds(clock.now()),
        })
        .onConflictDoNothing(),
    );
  }

  /**
   * Applies one copy's invitation parts to its mailbox's calendar. Bad input is an outcome (`unreadable`: not
   * iCalendar, over the limits, or a parse that was stopped), never a throw; a throw is a fault (the database) and
   * the job is retried.
   */
  async function applyCopy(
    grant: GrantRow,
    sender: string,
    texts: string[],
  ): Promise<{ status: 'applied' | 'ignored' | 'unreadable'; detail: InvitationOutcome[] }> {
    const detail: InvitationOutcome[] = [];
    for (const ics of texts) detail.push(...(await parts.applyInvitation(grant, { sender, ics })));
    if (detail.some((outcome) => outcome.action === 'unreadable')) return { status: 'unreadable', detail };
    return { status: detail.some((outcome) => outcome.action !== 'ignored') ? 'applied' : 'ignored', detail };
  }

  const runInvitations: JobHandler = async (job: Job) => {
    const payload = job.payload as unknown as InvitationJobPayload;
    const recorded = new Set(
      (
        await db.orm
          .select({ messageId: tables.invitationOutcomes.messageId })
          .from(tables.invitationOutcomes)
          .where(
            inArray(
              tables.invitationOutcomes.messageId,
              payload.copies.map((copy) => copy.message_id),
            ),
          )
      ).map((row) => row.messageId),
    );
    const pending = payload.copies.filter((copy) => !recorded.has(copy.message_id));
    if (pending.length === 0) return;
    if (job.attempts > MAX_INVITATION_ATTEMPTS) {
      const reason = `the invitation could not be processed in ${MAX_INVITATION_ATTEMPTS} attempts`;
      logger.warn('invitation given up', { job_id: job.id, reason, last_error: job.lastError });
      for (const copy of pending) await record(copy, 'unreadable', [{ action: 'unreadable', reason }]);
      return;
    }
    // The parts are the message's own attachments: gone only when every copy of the message was deleted.
    const texts: string[] = [];
    for (const hash of payload.parts) {
      const bytes = await readBlob(db.orm, hash);
      if (bytes) texts.push(bytes.toString('utf8'));
    }
    const grants = await db.orm
      .select()
      .from(tables.grants)
      .where(
        inArray(
          tables.grants.id,
          pending.map((copy) => copy.grant_id),
        ),
      );
    for (const copy of pending) {
      const grant = grants.find((row) => row.id === copy.grant_id);
      if (!grant) continue;
      const { status, detail } = await applyCopy(grant, payload.sender, texts);
      await record(copy, status, detail);
    }
  };

  return {
    /** Job handlers by kind, for the background worker. */
    handlers: { [INVITATIONS_JOB]: runInvitations },

    /** Runs after the delivery was answered: the sender is collected as a contact. Never throws. */
    async followUp(mail: DeliveredMail): Promise<void> {
      const sender = mail.parsed.from[0];
      if (!sender || mail.grants.length === 0) return;
      await collectSender(mail.grants, sender).catch((error: unknown) =>
        logger.warn('sender not collected as a contact', {
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    },
  };
}

export type { AfterDelivery } from './contracts.js';
