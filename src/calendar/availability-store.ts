/**
 * @module calendar/availability-store
 * The reads of the availability service (./availability-service.ts): the grants and calendars of a request, the busy
 * events of its calendars (one JSON array per calendar, past drizzle's query builder) and the last bookings of a
 * round-robin group.
 */
import { and, eq, gt, inArray, isNotNull, isNull, ne, sql, type SQL } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';

type Db = CoreDeps['db'];

/** The application's grants with these addresses (lower-cased), by address. */
export async function grantsByEmail(
  db: Db,
  principal: Principal,
  emails: string[],
): Promise<Map<string, { id: string; email: string }>> {
  if (emails.length === 0) return new Map();
  const rows = await db.orm
    .select({ id: tables.grants.id, email: tables.grants.email })
    .from(tables.grants)
    .where(and(eq(tables.grants.applicationId, principal.applicationId), inArray(tables.grants.email, emails)));
  // A key scoped to some grants sees the others as it sees strangers' addresses (issue 36).
  const reach = principal.grantIds;
  return new Map(rows.filter((row) => !reach || reach.has(row.id)).map((row) => [row.email, row]));
}

/** The calendars of these grants, with their time zones. */
export async function calendarsOfGrants(db: Db, grantIds: string[]) {
  return db.orm
    .select({ id: tables.calendars.id, grantId: tables.calendars.grantId, timezone: tables.calendars.timezone })
    .from(tables.calendars)
    .where(inArray(tables.calendars.grantId, grantIds));
}

/** The calendars of these grants, with which is primary. */
export async function calendarChoices(db: Db, grantIds: string[]) {
  return db.orm
    .select({ id: tables.calendars.id, grantId: tables.calendars.grantId, isPrimary: tables.calendars.isPrimary })
    .from(tables.calendars)
    .where(inArray(tables.calendars.grantId, grantIds));
}

/** Where the busy events of some calendars are read: the calendars, the window, whether tentative counts. */
export interface BusyWhere {
  calendarIds: string[];
  queryFrom: number;
  queryTo: number;
  tentativeAsBusy: boolean;
}

const events = tables.events;

// Rows overlapping the window, found by range_end, which skips a calendar's history (events_single_busy_idx
// for single events, events_series_range_idx for series): the unary + keeps SQLite from walking the
// range_start index instead.
const common = ({ calendarIds, queryFrom, queryTo, tentativeAsBusy }: BusyWhere): (SQL | undefined)[] => [
  inArray(events.calendarId, calendarIds),
  gt(events.rangeEnd, queryFrom),
  sql`+${events.rangeStart} < ${queryTo}`,
  eq(events.busy, true),
  ne(events.status, 'cancelled'),
  tentativeAsBusy ? undefined : ne(events.status, 'maybe'),
];
// Events the owner declined do not make them busy. The index holds whether the participants mention a "no" at
// all; only rows that do are read, to look for the owner's answer.
const mentionsNo = () => sql`(${events.participants} glob '*"no"*')`;
const notDeclined = () =>
  sql`not exists (select 1 from json_each(${events.participants}) as p where lower(json_extract(p.value, '$.email')) = (select g.email from ${tables.grants} as g where g.id = ${events.grantId}) and json_extract(p.value, '$.status') = 'no')`;

/**
 * Single events and overrides (rows without recurrence lines), one JSON array per calendar of
 * [when_type, start_time, end_time, start_date, end_date(, id)]: those no participant could have declined (read
 * from the index alone), or with `declinable` the few others.
 */
export async function singleEventGroups(
  db: Db,
  where: BusyWhere,
  withEventIds: boolean,
  declinable: boolean,
): Promise<{ calendarId: string; rows: string }[]> {
  const singleFields = {
    calendarId: events.calendarId,
    rows: withEventIds
      ? sql<string>`json_group_array(json_array(${events.whenType}, ${events.startTime}, ${events.endTime}, ${events.startDate}, ${events.endDate}, ${events.id}))`
      : sql<string>`json_group_array(json_array(${events.whenType}, ${events.startTime}, ${events.endTime}, ${events.startDate}, ${events.endDate}))`,
  };
  return db.orm
    .select(singleFields)
    .from(events)
    .where(
      and(
        ...common(where),
        isNull(events.recurrence),
        declinable ? and(sql`${mentionsNo()}`, notDeclined()) : sql`not ${mentionsNo()}`,
      ),
    )
    .groupBy(events.calendarId);
}

/**
 * Rows with recurrence lines, one JSON array per calendar of [id, master_event_id, when_type, start_time,
 * end_time, start_timezone, end_timezone, start_date, end_date, recurrence, line count, original starts of the
 * stored overrides].
 */
export async function seriesGroups(db: Db, where: BusyWhere): Promise<{ calendarId: string; rows: string }[]> {
  // Select fields render columns unqualified, so the correlated subquery names both tables itself.
  const replacedStarts = sql.raw(
    '(select json_group_array(o.original_start_time) from events as o where o.master_event_id = events.id)',
  );
  return db.orm
    .select({
      calendarId: events.calendarId,
      rows: sql<string>`json_group_array(json_array(${events.id}, ${events.masterEventId}, ${events.whenType}, ${events.startTime}, ${events.endTime}, ${events.startTimezone}, ${events.endTimezone}, ${events.startDate}, ${events.endDate}, ${events.recurrence}, json_array_length(${events.recurrence}), ${replacedStarts}))`,
    })
    .from(events)
    .where(and(...common(where), isNotNull(events.recurrence), sql`(not ${mentionsNo()} or ${notDeclined()})`))
    .groupBy(events.calendarId);
}

/** When each grant was last booked for a round-robin group (events whose metadata key5 is the group). */
export async function lastBooked(db: Db, grantIds: string[], group: string | undefined): Promise<Map<string, number>> {
  if (group === undefined || grantIds.length === 0) return new Map();
  const rows = await db.orm
    .select({ grantId: tables.events.grantId, last: sql<number>`max(${tables.events.createdAt})` })
    .from(tables.events)
    .where(
      and(
        inArray(tables.events.grantId, grantIds),
        ne(tables.events.status, 'cancelled'),
        sql`json_extract(${tables.events.metadata}, '$.key5') = ${group}`,
      ),
    )
    .groupBy(tables.events.grantId);
  return new Map(rows.map((row) => [row.grantId, Number(row.last)]));
}
