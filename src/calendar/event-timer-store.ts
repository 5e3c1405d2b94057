/**
 * @module calendar/event-timer-store
 * The reads and writes of the calendar timers (./event-timers.ts): how far a runner has run, the largest lead of any
 * calendar, the timed events whose start or end falls in a window (by the partial indexes `events_timer_start_idx`,
 * `events_timer_end_idx` and `events_timer_series_idx`, never a scan of every event), which timers already fired,
 * and the firing itself (`INSERT … ON CONFLICT DO NOTHING`: of two processes, one inserts and records).
 */
import { and, asc, eq, gt, inArray, lt, lte, ne, or, sql, type SQL } from 'drizzle-orm';
import { onClockOf, tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { EventRow } from './contracts.js';

type Db = CoreDeps['db'];
type TimerKind = (typeof tables.calendarTimerFirings.$inferSelect)['kind'];

const { events, calendars, grants, calendarTimerFirings: firings, calendarTimerMarks: marks } = tables;

/** The columns the timers are computed from; the full row is read only for the timers that fire. */
const timingColumns = {
  id: events.id,
  grantId: events.grantId,
  calendarId: events.calendarId,
  recurrence: events.recurrence,
  whenType: events.whenType,
  startTime: events.startTime,
  endTime: events.endTime,
  startTimezone: events.startTimezone,
  endTimezone: events.endTimezone,
  startDate: events.startDate,
  endDate: events.endDate,
};
export type TimingRow = Pick<EventRow, keyof typeof timingColumns>;

/** A timed event with what its timers need: its application and its calendar's lead (null: the default). */
export interface TimerCandidate {
  row: TimingRow;
  applicationId: string;
  leadMinutes: number | null;
}

/** Where the runner of `scope` stopped last (unix seconds), or undefined before its first run. */
export async function markOf(db: Db, scope: string): Promise<number | undefined> {
  const [row] = await db.orm.select().from(marks).where(eq(marks.scope, scope));
  return row?.ranUntil;
}

/** Moves the runner of `scope` to `until` (never back: two processes may run at once). */
export async function advanceMark(db: Db, scope: string, until: number): Promise<void> {
  await db.write((tx) =>
    tx
      .insert(marks)
      .values({ scope, ranUntil: until })
      .onConflictDoUpdate({ target: marks.scope, set: { ranUntil: sql`max(${marks.ranUntil}, excluded.ran_until)` } }),
  );
}

/** The largest lead any calendar set, in minutes (null when none set one); the end of `calendars_notify_before_idx`. */
export async function largestLeadMinutes(db: Db): Promise<number | null> {
  const [row] = await db.orm
    .select({ lead: sql<number | null>`max(${calendars.notifyBeforeStartMinutes})` })
    .from(calendars);
  return row?.lead ?? null;
}

// Written as the partial indexes' own WHERE, so SQLite sees that the query implies it and walks the index.
const singleTimed = sql`${events.recurrence} is null and ${events.whenType} in ('time', 'timespan')`;
const seriesTimed = sql`${events.recurrence} is not null and ${events.whenType} in ('time', 'timespan')`;

const candidateColumns = {
  row: timingColumns,
  applicationId: grants.applicationId,
  leadMinutes: calendars.notifyBeforeStartMinutes,
};

/** Live timed events of calendars with timers on (of one application when given) meeting `where`, one page. */
async function candidates(
  db: Db,
  where: SQL,
  order: SQL | undefined,
  applicationId: string | undefined,
  limit: number,
  timersOnly = true,
): Promise<TimerCandidate[]> {
  const rows = await db.orm
    .select(candidateColumns)
    .from(events)
    .innerJoin(calendars, eq(calendars.id, events.calendarId))
    .innerJoin(grants, eq(grants.id, events.grantId))
    .where(
      and(
        where,
        ne(events.status, 'cancelled'),
        timersOnly ? eq(calendars.eventTimers, true) : undefined,
        // The service's clock runs production applications only: a test-mode one's timers wait for its test clock.
        onClockOf(db.orm, grants.applicationId, applicationId),
      ),
    )
    .orderBy(...(order ? [order] : []), asc(events.id))
    .limit(limit);
  return rows;
}

/** Keyset position of a page: the time column's value and the id of the last row read. */
export interface PagePosition {
  time: number;
  id: string;
}

/** Single timed events whose `column` (start or end) is in `(after, until]`, from `position` on, one page. */
export function singlesBetween(
  db: Db,
  column: 'startTime' | 'endTime',
  after: number,
  until: number,
  applicationId: string | undefined,
  limit: number,
  position?: PagePosition,
): Promise<TimerCandidate[]> {
  const time = events[column];
  const from = position
    ? or(gt(time, position.time), and(eq(time, position.time), gt(events.id, position.id)))
    : gt(time, after);
  return candidates(db, and(singleTimed, from, lte(time, until))!, asc(time), applicationId, limit);
}

/** Series masters (timed) whose range overlaps `(after, until]`, from the id `afterId` on, one page. */
export function seriesBetween(
  db: Db,
  after: number,
  until: number,
  applicationId: string | undefined,
  limit: number,
  afterId?: string,
): Promise<TimerCandidate[]> {
  return candidates(
    db,
    and(
      seriesTimed,
      gt(events.rangeEnd, after),
      lte(events.rangeStart, until),
      afterId !== undefined ? gt(events.id, afterId) : undefined,
    )!,
    undefined,
    applicationId,
    limit,
    // Kept expanded across runs (./event-timers.ts): a calendar's setting is read fresh when its instances are due.
    false,
  );
}

/**
 * What changes when a series that {@link seriesBetween} reads changes (made, edited, cancelled, deleted, ended): how
 * many there are and the sum of their update times. Read from the rows of the series index's range, no JSON decoded.
 */
export async function seriesFingerprint(db: Db, after: number): Promise<string> {
  const [row] = await db.orm
    .select({ count: sql<number>`count(*)`, updated: sql<number>`total(${events.updatedAt})` })
    .from(events)
    .where(and(seriesTimed, gt(events.rangeEnd, after), ne(events.status, 'cancelled')));
  return `${row?.count ?? 0}:${row?.updated ?? 0}`;
}

/** The timer settings of these calendars, by id: the lead (null: the default) and whether timers are on. */
export async function calendarTimerSettings(
  db: Db,
  calendarIds: readonly string[],
): Promise<Map<string, { leadMinutes: number | null; eventTimers: boolean }>> {
  const settings = new Map<string, { leadMinutes: number | null; eventTimers: boolean }>();
  const unique = [...new Set(calendarIds)];
  for (let index = 0; index < unique.length; index += 500) {
    const rows = await db.orm
      .select({ id: calendars.id, leadMinutes: calendars.notifyBeforeStartMinutes, eventTimers: calendars.eventTimers })
      .from(calendars)
      .where(inArray(calendars.id, unique.slice(index, index + 500)));
    for (const { id, ...setting } of rows) settings.set(id, setting);
  }
  return settings;
}

/** The full rows of these events, by id. */
export async function eventRows(db: Db, ids: readonly string[]): Promise<Map<string, EventRow>> {
  const rows = new Map<string, EventRow>();
  const unique = [...new Set(ids)];
  for (let index = 0; index < unique.length; index += 500) {
    const chunk = await db.orm
      .select()
      .from(events)
      .where(inArray(events.id, unique.slice(index, index + 500)));
    for (const row of chunk) rows.set(row.id, row);
  }
  return rows;
}

/** The original starts of the stored overrides of these series, by series. */
export async function overriddenStarts(db: Db, masterIds: string[]): Promise<Map<string, Set<number>>> {
  const byMaster = new Map<string, Set<number>>();
  if (masterIds.length === 0) return byMaster;
  const rows = await db.orm
    .select({ masterEventId: events.masterEventId, originalStartTime: events.originalStartTime })
    .from(events)
    .where(inArray(events.masterEventId, masterIds));
  for (const { masterEventId, originalStartTime } of rows) {
    if (masterEventId === null || originalStartTime === null) continue;
    const set = byMaster.get(masterEventId) ?? new Set<number>();
    set.add(originalStartTime);
    byMaster.set(masterEventId, set);
  }
  return byMaster;
}

/** A timer to fire: the event (the series' master for an instance), its kind and the time it is for. */
export interface TimerKey {
  eventId: string;
  kind: TimerKind;
  occursAt: number;
}

const keyText = (key: TimerKey) => `${key.eventId}\u0000${key.kind}\u0000${key.occursAt}`;

/** The keys of these timers that already fired. */
export async function firedAmong(db: Db, keys: readonly TimerKey[]): Promise<Set<string>> {
  const fired = new Set<string>();
  for (let index = 0; index < keys.length; index += 400) {
    const chunk = keys.slice(index, index + 400);
    const rows = await db.orm
      .select({ eventId: firings.eventId, kind: firings.kind, occursAt: firings.occursAt })
      .from(firings)
      .where(
        and(
          inArray(firings.eventId, [...new Set(chunk.map((key) => key.eventId))]),
          inArray(firings.occursAt, [...new Set(chunk.map((key) => key.occursAt))]),
        ),
      );
    for (const row of rows) fired.add(keyText(row));
  }
  return fired;
}

export { keyText as timerKeyText };

/** Marks a timer fired; false when it already was (another process fired it first). */
export async function markFired(tx: Tx, key: TimerKey, at: number): Promise<boolean> {
  const inserted = await tx
    .insert(firings)
    .values({ ...key, firedAt: at })
    .onConflictDoNothing()
    .returning({ eventId: firings.eventId });
  return inserted.length > 0;
}

/** Forgets firings for times before `before` (no run looks back that far). */
export async function pruneFirings(db: Db, before: number): Promise<void> {
  await db.write((tx) => tx.delete(firings).where(lt(firings.occursAt, before)));
}
