/**
 * @module grants/grant-suspension
 * The kill switch (issue 37, docs/oversight.md "The kill switch"): suspending a grant stops every send, scheduled
 * send and agent write for it at once, each refusal naming the reason (src/oversight's `suspended` guard and
 * `assertWritable`, src/operations' admission of writes); resuming restores them. Scheduled sends that fell due while
 * the grant was suspended waited (src/outbound/scheduled-sends-run.ts): resuming makes their jobs due now, in the
 * same transaction, so they leave at once. Each change is a `grant.suspended` or `grant.resumed` webhook.
 */
import { and, eq, inArray, isNotNull, isNull, lte } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { notFound } from '../errors.js';
import type { Grant } from '../schemas/grants.js';
import { grantOf } from './grant-mapper.js';
import { requireGrant, type GrantState } from './grant-state.js';

/** The job kind of a scheduled send (src/outbound/scheduled-sends-state.ts names it; the grants area cannot import it). */
const SCHEDULED_SEND_JOB = 'mail.send_scheduled';

/** Suspends a grant with a reason (shown in every refusal). Suspending again replaces the reason, keeps the time. */
export async function suspendGrant(
  state: GrantState,
  principal: Principal,
  input: { grant_id: string; reason: string },
): Promise<Grant> {
  const { db, now } = state;
  const current = await requireGrant(state, principal, input.grant_id);
  return db.write(async (tx) => {
    const at = now();
    const [row] = await tx
      .update(tables.grants)
      .set({
        suspendedAt: current.suspendedAt ?? at,
        suspendedReason: input.reason,
        updatedAt: at,
      })
      .where(and(eq(tables.grants.id, current.id), eq(tables.grants.applicationId, principal.applicationId)))
      .returning();
    if (!row) throw notFound('Grant', input.grant_id);
    return announce(state, tx, row, 'grant.suspended');
  });
}

/**
 * Resumes a suspended grant (nothing changes for one that is not). The scheduled sends of the grant that are due
 * and still pending get their jobs due now, so they leave after the resume, in their order.
 */
export async function resumeGrant(state: GrantState, principal: Principal, ref: string): Promise<Grant> {
  const { db, now, hooks } = state;
  const current = await requireGrant(state, principal, ref);
  const result = await db.write(async (tx) => {
    const at = now();
    const [row] = await tx
      .update(tables.grants)
      .set({ suspendedAt: null, suspendedReason: null, updatedAt: at })
      .where(
        and(
          eq(tables.grants.id, current.id),
          eq(tables.grants.applicationId, principal.applicationId),
          isNotNull(tables.grants.suspendedAt),
        ),
      )
      .returning();
    if (!row) return { grant: await grantOf(tx, current), resumed: false };
    await wakeDueSchedules(tx, row.id, at);
    return { grant: await announce(state, tx, row, 'grant.resumed'), resumed: true };
  });
  if (result.resumed) hooks.onResumed?.(current.id);
  return result.grant;
}

/** Makes the jobs of a grant's pending scheduled sends due by `at` (unix seconds) run now (unleased ones). */
async function wakeDueSchedules(tx: Tx, grantId: string, at: number): Promise<void> {
  const due = await tx
    .select({ id: tables.scheduledMessages.id })
    .from(tables.scheduledMessages)
    .where(
      and(
        eq(tables.scheduledMessages.grantId, grantId),
        eq(tables.scheduledMessages.status, 'pending'),
        lte(tables.scheduledMessages.sendAt, at),
      ),
    );
  if (due.length === 0) return;
  const keys = due.map((schedule) => `${SCHEDULED_SEND_JOB}:${schedule.id}`);
  for (let start = 0; start < keys.length; start += 500)
    await tx
      .update(tables.jobs)
      .set({ runAt: at * 1000 })
      .where(
        and(
          eq(tables.jobs.kind, SCHEDULED_SEND_JOB),
          inArray(tables.jobs.dedupeKey, keys.slice(start, start + 500)),
          isNull(tables.jobs.leaseOwner),
        ),
      );
}

/** The grant's wire form, with the webhook of the change recorded. */
async function announce(
  state: GrantState,
  tx: Tx,
  row: GrantRow,
  type: 'grant.suspended' | 'grant.resumed',
): Promise<Grant> {
  const grant = await grantOf(tx, row);
  await state.record(tx, {
    applicationId: row.applicationId,
    grantId: row.id,
    type,
    objectId: row.id,
    object: grant,
    createdAt: row.updatedAt,
  });
  return grant;
}
