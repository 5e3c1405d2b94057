/**
 * @module outbound/scheduled-sends-run
 * The `mail.send_scheduled` job (./scheduled-sends.ts): the held draft sent through `accept` when its time comes,
 * the schedule's state checked again inside the sending transaction; or why it could not be sent recorded.
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { RateLimitDetails } from '../access.js';
import { AppError } from '../errors.js';
import type { Job, JobOutcome } from '../jobs/index.js';
import { StaleError } from './draft-versions.js';
import { removeDraft, type ScheduledSendsState } from './scheduled-sends-state.js';

/**
 * How long a scheduled send that fell due on a suspended grant waits before it looks again; resuming the grant makes
 * it due at once (src/grants/grant-suspension.ts), so this only bounds a resume whose wake-up was lost.
 */
const SUSPENDED_RECHECK_MS = 5 * 60_000;

/** Thrown inside the sending transaction when the grant was suspended after the send was checked. */
class SuspendedMeanwhile extends Error {}

/**
 * When a refusal of a scheduled send means "not now" rather than "never": the grant is suspended (it waits for the
 * resume) or a budget is spent (it waits for the window the 429 names). Unix ms of the next look, or undefined.
 */
function waitUntil(error: unknown, now: number): number | undefined {
  if (error instanceof SuspendedMeanwhile) return now + SUSPENDED_RECHECK_MS;
  if (!(error instanceof AppError)) return undefined;
  if (error.type === 'grant_suspended') return now + SUSPENDED_RECHECK_MS;
  const retryAfter = (error.details as Partial<RateLimitDetails> | undefined)?.retryAfterSeconds;
  if (error.code === 'rate_limited' && typeof retryAfter === 'number') return now + Math.max(1, retryAfter) * 1000;
  return undefined;
}

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
  const nowMs = () => state.clock.now().getTime();
  // The kill switch: a send due while its grant is suspended waits for the resume (which makes its job due again).
  if (grant.suspendedAt !== null)
    return { type: 'retry', at: new Date(nowMs() + SUSPENDED_RECHECK_MS), error: 'the grant is suspended' };
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
        // Suspended after the send was checked: the send stops here, in the transaction that would commit it.
        const [owner] = await tx
          .select({ suspendedAt: tables.grants.suspendedAt })
          .from(tables.grants)
          .where(eq(tables.grants.id, row.grantId));
        if (owner?.suspendedAt != null) throw new SuspendedMeanwhile('the grant was suspended');
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
    const at = waitUntil(error, nowMs());
    if (at !== undefined)
      return { type: 'retry', at: new Date(at), error: error instanceof Error ? error.message : String(error) };
    if (error instanceof AppError && error.code !== 'internal' && error.code !== 'unavailable') {
      logger.warn('scheduled send failed', { schedule_id: scheduleId, error: error.message });
      await fail(error.message);
      return { type: 'done' };
    }
    throw error;
  }
  return { type: 'done' };
}
