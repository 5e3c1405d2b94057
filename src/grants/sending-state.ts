/**
 * @module grants/sending-state
 * A grant's sending state (active, or paused with a reason) as stored on the grant (`sending_paused_at`,
 * `sending_paused_reason`) and as the API shows it (`sending` on the grant object); and the two changes of it, each
 * recorded in `sending_state_changes`: a pause (by the service, on a threshold: ./sending-health.ts) and a resume
 * (by a caller, through `PATCH /v3/grants/{id}`: src/grants/grant-service.ts).
 *
 * Resuming starts the measurement afresh: the per-day counters of the grant's rolling window (`grant_sending_days`:
 * recipients sent, bounces, complaints) are set to zero, so the rates after a resume count only what was sent and
 * reported after it, and a resumed grant is not paused again on the very numbers it was resumed from. What led to the
 * pause stays on record in the pause's `sending_state_changes` row (its reason names the rate).
 */
import { and, eq, gte, isNotNull, isNull } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { IdGenerator } from '../ports/index.js';

/** The sending state on the wire (the grant's `sending`). */
export interface SendingState {
  status: 'active' | 'paused';
  reason?: string;
  /** Unix seconds. */
  paused_at?: number;
}

/** The wire state of a grant row. */
export function sendingStateOf(row: Pick<GrantRow, 'sendingPausedAt' | 'sendingPausedReason'>): SendingState {
  if (row.sendingPausedAt === null) return { status: 'active' };
  return { status: 'paused', reason: row.sendingPausedReason ?? 'sending is paused', paused_at: row.sendingPausedAt };
}

/** How a caller resumes a paused grant, as error messages and docs say it. */
export const RESUME_HINT = 'PATCH /v3/grants/{grant_id} with {"sending": {"status": "active"}}';

/**
 * Pauses a grant's sending (unless it is paused already) and records the change. Returns the updated row, or
 * undefined when it was paused already (nothing changed).
 */
export async function pauseSending(
  tx: Tx,
  newId: IdGenerator,
  grantId: string,
  reason: string,
  at: number,
): Promise<GrantRow | undefined> {
  const [row] = await tx
    .update(tables.grants)
    .set({ sendingPausedAt: at, sendingPausedReason: reason, updatedAt: at })
    .where(and(eq(tables.grants.id, grantId), isNull(tables.grants.sendingPausedAt)))
    .returning();
  if (row) {
    await tx
      .insert(tables.sendingStateChanges)
      .values({ id: newId(), grantId, state: 'paused', reason, actor: 'service', at });
  }
  return row;
}

/** The first UTC day of a rolling window (src/time.ts). */
export { windowStartDay } from '../time.js';
import { windowStartDay } from '../time.js';

/**
 * Resumes a paused grant's sending, in the caller's transaction: clears the pause, resets the counters of the rolling
 * window that ends today (see the module comment) and records the change with `actor` (the request id). Returns the
 * updated row, or undefined when the grant was not paused (nothing changed).
 */
export async function resumeSending(
  tx: Tx,
  newId: IdGenerator,
  grantId: string,
  options: { actor: string; now: Date; windowDays: number },
): Promise<GrantRow | undefined> {
  const at = Math.floor(options.now.getTime() / 1000);
  const [row] = await tx
    .update(tables.grants)
    .set({ sendingPausedAt: null, sendingPausedReason: null, updatedAt: at })
    .where(and(eq(tables.grants.id, grantId), isNotNull(tables.grants.sendingPausedAt)))
    .returning();
  if (!row) return undefined;
  await tx
    .update(tables.grantSendingDays)
    .set({ sent: 0, hardBounces: 0, softBounces: 0, complaints: 0 })
    .where(
      and(
        eq(tables.grantSendingDays.grantId, grantId),
        gte(tables.grantSendingDays.day, windowStartDay(options.now.getTime(), options.windowDays)),
      ),
    );
  await tx
    .insert(tables.sendingStateChanges)
    .values({ id: newId(), grantId, state: 'active', reason: 'resumed through the API', actor: options.actor, at });
  return row;
}
