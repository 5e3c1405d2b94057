/**
 * @module outbound/outbound-store
 * The reads and writes of outbound mail that need SQL beyond drizzle's operators: the delivery state and the
 * reports of the sender's copies among many messages (ids as one JSON array, each statement built once), a
 * recipient's attempt counted, a grant's sends of a day counted, and the addresses a grant sends to remembered.
 */
import { and, asc, eq, inArray, lte, min, sql } from 'drizzle-orm';
import { preparedRead, tables, type Executor, type Orm, type Tx } from '../../storage/index.js';
import type { DeliveryStatus } from '../schemas/messages.js';

/** One recipient of a message in the queue. */
type RecipientRow = typeof tables.outboundRecipients.$inferSelect;

/**
 * The recipients and tracking options of the sender's copies among messages, the ids given as one JSON array: asked
 * on every page of messages, so its SQL is built once.
 */
export const sentStateOf = preparedRead((orm: Orm) =>
  orm
    .select({
      messageId: tables.outboundMessages.messageId,
      trackingOptions: tables.outboundMessages.trackingOptions,
      provenance: tables.outboundMessages.provenance,
      recipient: tables.outboundRecipients,
    })
    .from(tables.outboundMessages)
    .innerJoin(tables.outboundRecipients, eq(tables.outboundRecipients.outboundId, tables.outboundMessages.id))
    .where(sql`${tables.outboundMessages.messageId} IN (SELECT value FROM json_each(${sql.placeholder('ids')}))`),
);

/** The bounces and complaints recorded against the sender's copies among messages (ids as one JSON array), oldest first. */
export const reportsOf = preparedRead((orm: Orm) =>
  orm
    .select({ messageId: tables.outboundMessages.messageId, report: tables.deliveryReports })
    .from(tables.outboundMessages)
    .innerJoin(tables.deliveryReports, eq(tables.deliveryReports.outboundId, tables.outboundMessages.id))
    .where(sql`${tables.outboundMessages.messageId} IN (SELECT value FROM json_each(${sql.placeholder('ids')}))`)
    .orderBy(tables.deliveryReports.at),
);

/**
 * Records an attempt of a recipient still queued or deferred: its status, reply and next attempt (none once
 * final), one attempt more; the rows changed (none when the recipient was settled meanwhile).
 */
export function recordRecipientAttempt(
  tx: Tx,
  outboundId: string,
  email: string,
  attempt: {
    status: DeliveryStatus['status'];
    code: RecipientRow['lastCode'];
    response: string;
    nextAttemptAt: number | null;
    at: number;
    final: boolean;
  },
): Promise<RecipientRow[]> {
  return tx
    .update(tables.outboundRecipients)
    .set({
      status: attempt.status,
      attempts: sql`${tables.outboundRecipients.attempts} + 1`,
      lastCode: attempt.code,
      lastResponse: attempt.response.slice(0, 1000),
      nextAttemptAt: attempt.nextAttemptAt,
      updatedAt: attempt.at,
      finalAt: attempt.final ? attempt.at : null,
    })
    .where(
      and(
        eq(tables.outboundRecipients.outboundId, outboundId),
        eq(tables.outboundRecipients.email, email),
        inArray(tables.outboundRecipients.status, ['queued', 'deferred']),
      ),
    )
    .returning();
}

/** Adds one to the grant's sends of `day` and returns the count before it. */
export async function countGrantSend(tx: Tx, grantId: string, day: number): Promise<number> {
  const [row] = await tx
    .insert(tables.grantDailyUsage)
    .values({ grantId, day, sent: 1 })
    .onConflictDoUpdate({
      target: [tables.grantDailyUsage.grantId, tables.grantDailyUsage.day],
      set: { sent: sql`${tables.grantDailyUsage.sent} + 1` },
    })
    .returning({ sent: tables.grantDailyUsage.sent });
  return (row?.sent ?? 1) - 1;
}

/** Pending scheduled sends of an application's grants: through the grants' index (no index by application). */
function pendingSchedulesOf(orm: Executor, applicationId: string) {
  const grantsOf = orm
    .select({ id: tables.grants.id })
    .from(tables.grants)
    .where(eq(tables.grants.applicationId, applicationId));
  return and(
    inArray(tables.scheduledMessages.grantId, grantsOf),
    eq(tables.scheduledMessages.status, 'pending'),
    eq(tables.scheduledMessages.applicationId, applicationId),
  );
}

/** A test-mode application's pending scheduled sends due by `at` (unix seconds), earliest first (its test clock). */
export async function dueSchedules(db: { orm: Orm }, applicationId: string, at: number) {
  return db.orm
    .select({
      id: tables.scheduledMessages.id,
      sendAt: tables.scheduledMessages.sendAt,
      createdAt: tables.scheduledMessages.createdAt,
    })
    .from(tables.scheduledMessages)
    .where(and(pendingSchedulesOf(db.orm, applicationId), lte(tables.scheduledMessages.sendAt, at)))
    .orderBy(asc(tables.scheduledMessages.sendAt), asc(tables.scheduledMessages.createdAt));
}

/** The earliest `send_at` (unix seconds) of an application's pending scheduled sends, if any. */
export async function nextScheduleDue(db: { orm: Orm }, applicationId: string): Promise<number | undefined> {
  const [row] = await db.orm
    .select({ at: min(tables.scheduledMessages.sendAt) })
    .from(tables.scheduledMessages)
    .where(pendingSchedulesOf(db.orm, applicationId));
  return row?.at ?? undefined;
}

/**
 * Records the addresses of a grant's send as its correspondents (the first time only: a known address writes
 * nothing), which `new_recipients_per_day` reads (src/oversight/budget-store.ts).
 */
export async function rememberCorrespondents(
  tx: Tx,
  grantId: string,
  recipients: readonly { email: string }[],
  at: number,
): Promise<void> {
  for (let index = 0; index < recipients.length; index += 100)
    await tx
      .insert(tables.grantCorrespondents)
      .values(recipients.slice(index, index + 100).map(({ email }) => ({ grantId, email, firstAt: at })))
      .onConflictDoNothing();
}
