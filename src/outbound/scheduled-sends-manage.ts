/**
 * @module outbound/scheduled-sends-manage
 * The scheduled sends of a mailbox (./scheduled-sends.ts): listed, read, and stopped (the job cancelled, the draft
 * removed unless it was kept).
 */
import { and, asc, desc, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { invalid, notFound } from '../errors.js';
import type { ScheduledMessage, ScheduledMessageRefInput } from '../schemas/send.js';
import { SCHEDULED_SEND_JOB, type ScheduledSendsState } from './scheduled-sends-state.js';

type ScheduleRow = typeof tables.scheduledMessages.$inferSelect;

const SCHEDULE_DESCRIPTIONS: Record<ScheduleRow['status'], string> = {
  pending: 'schedule send awaiting send at time',
  sending: 'schedule send in progress',
  success: 'schedule send succeeded',
  failed: 'schedule send failed',
  cancelled: 'schedule send cancelled',
};

function toScheduled(row: ScheduleRow): ScheduledMessage {
  return {
    schedule_id: row.id,
    status: {
      code: row.status,
      description: row.error ? `${SCHEDULE_DESCRIPTIONS[row.status]}: ${row.error}` : SCHEDULE_DESCRIPTIONS[row.status],
    },
    send_at: row.sendAt,
    ...(row.closeTime !== null ? { close_time: row.closeTime } : {}),
    ...(row.status === 'pending' ? { draft_id: row.draftId } : {}),
    ...(row.sentMessageId !== null ? { message_id: row.sentMessageId } : {}),
  };
}

/** Scheduled sends of a mailbox, the latest send time first (at most 200). */
export async function listScheduled(
  state: ScheduledSendsState,
  principal: Principal,
  input: { grant_id: string },
): Promise<ScheduledMessage[]> {
  const { db, grants } = state;
  const grant = await grants.require(principal, input.grant_id);
  const rows = await db.orm
    .select()
    .from(tables.scheduledMessages)
    .where(eq(tables.scheduledMessages.grantId, grant.id))
    .orderBy(desc(tables.scheduledMessages.sendAt), asc(tables.scheduledMessages.id))
    .limit(200);
  return rows.map(toScheduled);
}

/** One scheduled send. */
export async function findScheduled(
  state: ScheduledSendsState,
  principal: Principal,
  input: ScheduledMessageRefInput,
): Promise<ScheduledMessage> {
  const { db, grants } = state;
  const grant = await grants.require(principal, input.grant_id);
  const [row] = await db.orm
    .select()
    .from(tables.scheduledMessages)
    .where(and(eq(tables.scheduledMessages.grantId, grant.id), eq(tables.scheduledMessages.id, input.schedule_id)));
  if (!row) throw notFound('Scheduled message', input.schedule_id);
  return toScheduled(row);
}

/** Stops a pending scheduled send. A send already made is a 400. */
export async function stopScheduled(
  state: ScheduledSendsState,
  principal: Principal,
  input: ScheduledMessageRefInput,
): Promise<{ message: string }> {
  const { db, grants, store, now } = state;
  const { findDraft } = state.versions;
  const grant = await grants.require(principal, input.grant_id);
  return db.write(async (tx) => {
    const [row] = await tx
      .select()
      .from(tables.scheduledMessages)
      .where(and(eq(tables.scheduledMessages.grantId, grant.id), eq(tables.scheduledMessages.id, input.schedule_id)));
    if (!row) throw notFound('Scheduled message', input.schedule_id);
    if (row.status === 'success' || row.status === 'failed') {
      throw invalid(
        'schedule_id',
        `this scheduled send already ${row.status === 'success' ? 'went out' : 'failed'} (status ${row.status}); there is nothing to stop.`,
      );
    }
    if (row.status !== 'cancelled') {
      await tx
        .update(tables.scheduledMessages)
        .set({ status: 'cancelled', closeTime: now(), updatedAt: now() })
        .where(eq(tables.scheduledMessages.id, row.id));
      await tx.delete(tables.jobs).where(eq(tables.jobs.dedupeKey, `${SCHEDULED_SEND_JOB}:${row.id}`));
      const record = await findDraft(tx, grant.id, row.draftId);
      if (record && !row.keepDraft) await store.destroy(tx, [record.row]);
      else if (record)
        await tx.update(tables.draftDetails).set({ sendAt: null }).where(eq(tables.draftDetails.id, record.details.id));
    }
    return { message: 'requested cancelation for workflow' };
  });
}
