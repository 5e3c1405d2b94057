/**
 * @module calendar/hold-store
 * The reads and writes of tentative holds (`calendar_holds`, `calendar_hold_slots`; ./hold-service.ts): a hold with
 * its slot rows, the live slots of some addresses in a window (the busy reads), state changes guarded by the
 * status so a confirmation, a release and an expiry never both win.
 */
import { and, asc, eq, gt, inArray, lte } from 'drizzle-orm';
import { onClockOf, tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';

type Db = CoreDeps['db'];
export type HoldRow = typeof tables.calendarHolds.$inferSelect;
type HoldStatus = HoldRow['status'];

const holds = tables.calendarHolds;
const slots = tables.calendarHoldSlots;

/** Inserts a hold and one slot row per address and slot. */
export async function insertHold(tx: Tx, row: HoldRow): Promise<void> {
  await tx.insert(holds).values(row);
  await insertSlots(tx, row);
}

async function insertSlots(tx: Tx, row: HoldRow): Promise<void> {
  const values = row.participants.flatMap(({ email }) =>
    row.slots.map((slot) => ({
      holdId: row.id,
      applicationId: row.applicationId,
      email,
      startTime: slot.start_time,
      endTime: slot.end_time,
      expiresAt: row.expiresAt,
    })),
  );
  if (values.length > 0) await tx.insert(slots).values(values);
}

/** One hold of the application, or undefined. */
export async function findHold(db: Db, applicationId: string, id: string): Promise<HoldRow | undefined> {
  const [row] = await db.orm
    .select()
    .from(holds)
    .where(and(eq(holds.applicationId, applicationId), eq(holds.id, id)));
  return row;
}

/**
 * Moves a hold from `held` to `status` if it is still held (and, unless `anyExpiry`, not past `now`), dropping its
 * slot rows. The changed row, or undefined when another change won.
 */
export async function closeHold(
  tx: Tx,
  id: string,
  status: Exclude<HoldStatus, 'held'>,
  now: number,
  changes: { eventId?: string } = {},
): Promise<HoldRow | undefined> {
  const live = status === 'expired' ? lte(holds.expiresAt, now) : gt(holds.expiresAt, now);
  const [row] = await tx
    .update(holds)
    .set({ status, updatedAt: now, ...changes })
    .where(and(eq(holds.id, id), eq(holds.status, 'held'), live))
    .returning();
  if (row) await tx.delete(slots).where(eq(slots.holdId, id));
  return row;
}

/** Puts a hold back to `held` (a confirmation whose event could not be made). */
export async function reopenHold(tx: Tx, row: HoldRow, now: number): Promise<void> {
  await tx.update(holds).set({ status: 'held', eventId: null, updatedAt: now }).where(eq(holds.id, row.id));
  await insertSlots(tx, row);
}

/**
 * Up to `limit` holds still `held` past their expiry, oldest expiry first: of one application (a test-mode one, whose
 * test clock asks), or of every production application (the worker's pass: a test-mode application's holds expire by
 * its test clock only).
 */
export async function lapsedHolds(
  db: Db,
  now: number,
  limit: number,
  applicationId: string | undefined,
): Promise<HoldRow[]> {
  return db.orm
    .select()
    .from(holds)
    .where(and(eq(holds.status, 'held'), lte(holds.expiresAt, now), ofClock(db, applicationId)))
    .orderBy(asc(holds.expiresAt))
    .limit(limit);
}

/** The earliest expiry (unix seconds) of a live hold of one application, for its test clock. */
export async function nextHoldExpiry(db: Db, applicationId: string): Promise<number | undefined> {
  const [row] = await db.orm
    .select({ at: holds.expiresAt })
    .from(holds)
    .where(and(eq(holds.status, 'held'), eq(holds.applicationId, applicationId)))
    .orderBy(asc(holds.expiresAt))
    .limit(1);
  return row?.at;
}

/** One application's holds, or (undefined) those of production applications: not on a test clock. */
function ofClock(db: Db, applicationId: string | undefined) {
  return onClockOf(db.orm, holds.applicationId, applicationId);
}

/** The live held slots of some addresses of one application overlapping `[from, to)`. */
export async function liveSlots(
  db: Db,
  applicationId: string,
  emails: string[],
  from: number,
  to: number,
  now: number,
): Promise<{ holdId: string; email: string; startTime: number; endTime: number }[]> {
  if (emails.length === 0) return [];
  const rows = await db.orm
    .select({ holdId: slots.holdId, email: slots.email, startTime: slots.startTime, endTime: slots.endTime })
    .from(slots)
    .where(
      and(
        eq(slots.applicationId, applicationId),
        inArray(slots.email, emails),
        gt(slots.endTime, from),
        gt(slots.expiresAt, now),
      ),
    );
  return rows.filter((row) => row.startTime < to);
}

/** Records the event a confirmed hold made. */
export async function setHoldEvent(tx: Tx, id: string, eventId: string): Promise<void> {
  await tx.update(holds).set({ eventId }).where(eq(holds.id, id));
}
