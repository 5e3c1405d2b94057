/**
 * @module calendar/event-store
 * Writes of event rows inside a caller's transaction, each with its outbox event (`event.created`,
 * `event.updated`, `event.deleted`) in the same transaction. Shared by the API service and the handling
 * of incoming invitations. And the event service's reads that go past drizzle's query builder: the filters of a
 * list, the window conditions, the overrides of series and rows by id.
 */
import { and, eq, gt, gte, inArray, lt, ne, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { eventRecorder } from '../outbox/index.js';
import type { ListEventsInput } from '../schemas/events.js';
import { metadataMatches } from './calendar-service.js';
import type { EventInsert, EventRow, EventStore } from './contracts.js';
import { toEvent } from './event-mapper.js';

type Db = CoreDeps['db'];

/** Creates the store. */
export function createEventStore({ newId, clock }: Pick<CoreDeps, 'newId' | 'clock'>): EventStore {
  const record = eventRecorder({ newId, clock });
  const outbox = (
    tx: Tx,
    grant: GrantRow,
    type: 'event.created' | 'event.updated' | 'event.deleted',
    row: EventRow,
    at: number,
  ) =>
    record(tx, {
      applicationId: grant.applicationId,
      grantId: grant.id,
      type,
      objectId: row.id,
      object: toEvent(row),
      createdAt: at,
    });

  return {
    /** Inserts an event row. */
    async insert(tx: Tx, grant: GrantRow, values: EventInsert): Promise<EventRow> {
      const [row] = await tx.insert(tables.events).values(values).returning();
      await outbox(tx, grant, 'event.created', row!, values.updatedAt);
      return row!;
    },

    /** Changes an event row (`updatedAt` in the patch). */
    async update(
      tx: Tx,
      grant: GrantRow,
      row: EventRow,
      patch: Partial<EventInsert> & { updatedAt: number },
    ): Promise<EventRow> {
      const [updated] = await tx
        .update(tables.events)
        .set(patch)
        .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.id, row.id)))
        .returning();
      await outbox(tx, grant, 'event.updated', updated!, patch.updatedAt);
      return updated!;
    },

    /** Deletes an event row, and a series master's overrides with it (one `event.deleted` for the event). */
    async remove(tx: Tx, grant: GrantRow, row: EventRow, at: number): Promise<void> {
      if (row.masterEventId === null) {
        await tx
          .delete(tables.events)
          .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.masterEventId, row.id)));
      }
      await tx.delete(tables.events).where(and(eq(tables.events.grantId, grant.id), eq(tables.events.id, row.id)));
      await outbox(tx, grant, 'event.deleted', row, at);
    },

    /** The overrides stored for a series. */
    async overridesOf(tx: Tx, grant: GrantRow, masterId: string): Promise<EventRow[]> {
      return tx
        .select()
        .from(tables.events)
        .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.masterEventId, masterId)));
    },
  };
}

export type { EventStore } from './contracts.js';

function likeCondition(column: AnyColumn, text: string): SQL {
  const escaped = text.toLowerCase().replace(/[\\%_]/g, (character) => `\\${character}`);
  return sql`lower(${column}) like ${`%${escaped}%`} escape '\\'`;
}

/** The SQL filters of a list request (everything but the window, the series rule and the cursor). */
export function filterConditions(input: ListEventsInput): SQL[] {
  const conditions: SQL[] = [];
  if (input.title) conditions.push(likeCondition(tables.events.title, input.title));
  if (input.description) conditions.push(likeCondition(tables.events.description, input.description));
  if (input.location) conditions.push(likeCondition(tables.events.location, input.location));
  if (input.ical_uid) conditions.push(eq(tables.events.icalUid, input.ical_uid));
  if (input.busy !== undefined) conditions.push(eq(tables.events.busy, input.busy));
  if (input.updated_after !== undefined) conditions.push(gt(tables.events.updatedAt, input.updated_after));
  if (input.updated_before !== undefined) conditions.push(lt(tables.events.updatedAt, input.updated_before));
  if (input.metadata_pair) conditions.push(metadataMatches(tables.events.metadata, input.metadata_pair));
  if (!input.show_cancelled) conditions.push(ne(tables.events.status, 'cancelled'));
  if (input.attendees && input.attendees.length > 0) {
    const emails = input.attendees.map((email) => email.trim().toLowerCase());
    conditions.push(
      sql`exists (select 1 from json_each(${tables.events.participants}) where lower(json_extract(json_each.value, '$.email')) in (${sql.join(
        emails.map((email) => sql`${email}`),
        sql`, `,
      )}))`,
    );
  }
  return conditions;
}

/** Rows overlapping `[start, end)`: ranges are half-open, zero-length events count when they start inside. */
export function overlapCondition(start: number, end: number): SQL {
  return and(
    lt(tables.events.rangeStart, end),
    or(gt(tables.events.rangeEnd, start), gte(tables.events.rangeStart, start)),
  )!;
}

/**
 * The columns an expanded window is computed from. Full rows (some 35 columns, JSON among them) are read only
 * for the page returned: decoding them for every row of a busy month cost more than expanding its series.
 */
export const expansionColumns = {
  id: tables.events.id,
  calendarId: tables.events.calendarId,
  masterEventId: tables.events.masterEventId,
  recurrence: tables.events.recurrence,
  whenType: tables.events.whenType,
  startTime: tables.events.startTime,
  endTime: tables.events.endTime,
  startTimezone: tables.events.startTimezone,
  endTimezone: tables.events.endTimezone,
  startDate: tables.events.startDate,
  endDate: tables.events.endDate,
  busy: tables.events.busy,
  status: tables.events.status,
};
export type ExpansionRow = Pick<EventRow, keyof typeof expansionColumns>;

/**
 * {@link overlapCondition} for reads that sort in memory (expanded windows): `range_end >= start` (implied, as
 * ranges never end before they start) lets SQLite walk events_calendar_range_end_idx, skipping the calendar's
 * history; the unary + keeps it off the range_start index, which would walk that history.
 */
export function expandedWindowCondition(start: number, end: number): SQL {
  return and(
    gte(tables.events.rangeEnd, start),
    sql`+${tables.events.rangeStart} < ${end}`,
    or(gt(tables.events.rangeEnd, start), gte(tables.events.rangeStart, start)),
  )!;
}

/** The original starts of the overrides of these series (`masterIds`) of the grant. */
export async function overrideStartsOf(
  db: Db,
  grantId: string,
  masterIds: string[],
): Promise<{ masterEventId: string | null; originalStartTime: number | null }[]> {
  return (
    db.orm
      .select({ masterEventId: tables.events.masterEventId, originalStartTime: tables.events.originalStartTime })
      .from(tables.events)
      // Unary +: the lookup goes by events_master_idx, not by the grant's index (all of its rows).
      .where(and(sql`+${tables.events.grantId} = ${grantId}`, inArray(tables.events.masterEventId, masterIds)))
  );
}

/** The grant's full rows with these ids, by id. */
export async function rowsByIds(db: Db, grantId: string, ids: string[]): Promise<Map<string, EventRow>> {
  const rows = new Map<string, EventRow>();
  for (let index = 0; index < ids.length; index += 500) {
    const chunk = await db.orm
      .select()
      .from(tables.events)
      // Unary +: by primary key, not by the grant's index (all of its rows).
      .where(
        and(sql`+${tables.events.grantId} = ${grantId}`, inArray(tables.events.id, ids.slice(index, index + 500))),
      );
    for (const row of chunk) rows.set(row.id, row);
  }
  return rows;
}
