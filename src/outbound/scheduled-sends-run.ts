/**
 * @module outbound/scheduled-sends-run
 * The `mail.send_scheduled` job (./scheduled-sends.ts): the held draft sent through `accept` when its time comes,
 * the schedule's state checked again inside the sending transaction; or why it could not be sent recorded.
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import type { Job, JobOutcome } from '../jobs/index.js';
import { StaleError } from './draft-versions.js';
import { removeDraft, type ScheduledSendsState } from './scheduled-sends-state.js';

/** The `mail.send_scheduled` handler: sends the held draft, or records why it could not be sent. */
export async function runSchedule(state: ScheduledSendsState, job: Job): Promise<JobOutcome | void> {
  const { db, logger, accept, now } = state;
  const { findDraft, assertCurrent, compositionOf } = state.versions;
  const scheduleId = String(job.payload.schedule_id);
  const [row] = await db.orm.select().from(tables.scheduledMessages).where(eq(tables.scheduledMessages.id, scheduleId));
  if (!row || row.status !== 'pending') return { type: 'done' };
  const fail = (error: string) =>
    db.write(async (tx) => {
      await tx
        .update(tables.scheduledMessages)
        .set({ status: 'failed', error: error.slice(0, 1000), closeTime: now(), updatedAt: now() })
        .where(and(eq(tables.scheduledMessages.id, scheduleId), eq(tables.scheduledMessages.status, 'pending')));
      await tx.update(tables.draftDetails).set({ sendAt: null }).where(eq(tables.draftDetails.id, row.draftId));
    });
  const record = await findDraft(db.orm, row.grantId, row.draftId);
  const [grant] = await db.orm.select().from(tables.grants).where(eq(tables.grants.id, row.grantId));
  if (!record || !grant) {
    await fail(!grant ? 'the mailbox was deleted' : 'the draft holding the message was deleted');
    return { type: 'done' };
  }
  const principal: Principal = { applicationId: row.applicationId, via: 'local' };
  try {
    const composition = await compositionOf(principal, grant, record, {}, 'send');
    await accept(composition, {
      headerMessageId: record.details.headerMessageId,
      // Who scheduled it made the send.
      provenance: row.provenance ?? undefined,
      before: async (tx) => {
        const [current] = await tx
          .select()
          .from(tables.scheduledMessages)
          .where(eq(tables.scheduledMessages.id, scheduleId));
        if (current?.status !== 'pending') throw new StaleError('the schedule was stopped');
        await assertCurrent(tx, record);
      },
      after: async (tx, sentMessageId) => {
        await tx
          .update(tables.scheduledMessages)
          .set({ status: 'success', sentMessageId, closeTime: now(), updatedAt: now() })
          .where(eq(tables.scheduledMessages.id, scheduleId));
        await removeDraft(state, tx, record, scheduleId);
      },
    });
  } catch (error) {
    if (error instanceof StaleError) return { type: 'done' };
    if (error instanceof AppError && error.code !== 'internal' && error.code !== 'unavailable') {
      logger.warn('scheduled send failed', { schedule_id: scheduleId, error: error.message });
      await fail(error.message);
      return { type: 'done' };
    }
    throw error;
  }
  return { type: 'done' };
}
