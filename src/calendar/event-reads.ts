/**
 * @module calendar/event-reads
 * The event service's reads (./event-service.ts): a page of a calendar's events (series once, or expanded into
 * their instances in a window), one event or instance, the calendar's iCalendar feed, and the instances of a grant's
 * events for free/busy and availability.
 */
import { and, asc, eq, gt, inArray, isNull, ne, or, type SQL } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';
import type { Event, EventRefInput, ListEventsInput } from '../schemas/events.js';
import { MAX_EXPANDED_WINDOW_DAYS } from '../schemas/events.js';
import type { CalendarRow } from './calendar-service.js';
import { eventTimeOf, toCalendarEventData, toEvent } from './event-mapper.js';
import {
  expandedWindowCondition,
  expansionColumns,
  filterConditions,
  overlapCondition,
  overrideStartsOf,
  rowsByIds,
  type ExpansionRow,
} from './event-store.js';
import { utcRange, type EventTime } from './event-time.js';
import { buildCalendarFeed, requestExpansionBudget } from './ical.js';
import { seriesInstances } from './recurrence.js';
import { bad, context, locate, type EventState } from './event-state.js';

/** Default list window when `end` is not given: 30 days after `start`. */
const DEFAULT_WINDOW_SECONDS = 30 * 86_400;
/** Rows read for one expanded list (series plus single events in the window). */
const MAX_EXPANDED_ROWS = 10_000;
/** Events in one calendar feed. */
const MAX_FEED_EVENTS = 10_000;

/** One event or instance of an expanded window, with its UTC range; its wire form is built only when returned. */
interface ExpandedItem {
  id: string;
  start: number;
  end: number;
  row: ExpansionRow;
  instance?: { id: string; originalStart: number; when: EventTime };
}

/** Expands stored rows into events for a window: series into instances (minus overrides), others as they are. */
async function expandRows(
  state: EventState,
  grant: GrantRow,
  rows: ExpansionRow[],
  window: { start: number; end: number },
): Promise<ExpandedItem[]> {
  const masters = rows.filter((row) => row.masterEventId === null && row.recurrence && row.recurrence.length > 0);
  const overridden = new Map<string, Set<number>>();
  for (let index = 0; index < masters.length; index += 500) {
    const ids = masters.slice(index, index + 500).map((row) => row.id);
    const overrides = await overrideStartsOf(state.db, grant.id, ids);
    for (const override of overrides) {
      if (override.masterEventId === null || override.originalStartTime === null) continue;
      const set = overridden.get(override.masterEventId) ?? new Set<number>();
      set.add(override.originalStartTime);
      overridden.set(override.masterEventId, set);
    }
  }
  const items: ExpandedItem[] = [];
  // One allowance for the whole request: many series cannot each spend the per-series caps.
  const budget = requestExpansionBudget();
  for (const row of rows) {
    if (row.masterEventId === null && row.recurrence && row.recurrence.length > 0) {
      const { instances, truncated } = seriesInstances(
        row.id,
        eventTimeOf(row),
        row.recurrence,
        window,
        overridden.get(row.id) ?? new Set(),
        budget,
      );
      if (truncated)
        state.logger.warn('recurring event expansion capped', {
          event_id: row.id,
          window_start: window.start,
          window_end: window.end,
        });
      for (const instance of instances) items.push({ id: instance.id, ...utcRange(instance.when), row, instance });
    } else {
      items.push({ id: row.id, ...utcRange(eventTimeOf(row)), row });
    }
  }
  return items.sort((a, b) => a.start - b.start || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * A page of a calendar's events overlapping the window (`start` default now, `end` default start + 30
 * days; not applied with `metadata_pair`). Series appear once, or per instance with `expand_recurring`.
 */
export async function listEvents(
  state: EventState,
  principal: Principal,
  input: ListEventsInput,
): Promise<{ data: Event[]; next_cursor?: string }> {
  const { db, now } = state;
  const { grant, calendar } = await context(state, principal, input);
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const start = input.start ?? now();
  const end = input.end ?? start + DEFAULT_WINDOW_SECONDS;
  if (end <= start)
    throw bad('end', `the window ends (${end}) at or before it starts (${start}); end must be after start.`);
  if (input.expand_recurring && input.metadata_pair)
    throw bad('expand_recurring', 'cannot be combined with metadata_pair; filter by metadata without expanding.');
  if (input.expand_recurring && end - start > MAX_EXPANDED_WINDOW_DAYS * 86_400) {
    throw bad(
      'end',
      `with expand_recurring the window may span at most ${MAX_EXPANDED_WINDOW_DAYS} days (it spans ${Math.ceil((end - start) / 86_400)}); list it in several windows.`,
    );
  }
  const conditions: SQL[] = [
    eq(tables.events.grantId, grant.id),
    eq(tables.events.calendarId, calendar.id),
    ...filterConditions(input),
  ];
  if (!input.metadata_pair)
    conditions.push(input.expand_recurring ? expandedWindowCondition(start, end) : overlapCondition(start, end));

  if (!input.expand_recurring) {
    conditions.push(
      input.master_event_id
        ? eq(tables.events.masterEventId, input.master_event_id)
        : isNull(tables.events.masterEventId),
    );
    const after = decodeCursor(input.page_token, 2);
    if (after) {
      const [cursorStart, cursorId] = after as [number, string];
      conditions.push(
        or(
          gt(tables.events.rangeStart, cursorStart),
          and(eq(tables.events.rangeStart, cursorStart), gt(tables.events.id, cursorId)),
        )!,
      );
    }
    const rows = await db.orm
      .select()
      .from(tables.events)
      .where(and(...conditions))
      .orderBy(asc(tables.events.rangeStart), asc(tables.events.id))
      .limit(limit + 1);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page[page.length - 1];
    return {
      data: page.map((row) => toEvent(row)),
      ...(more && last ? { next_cursor: encodeCursor([last.rangeStart, last.id]) } : {}),
    };
  }

  if (input.master_event_id)
    conditions.push(
      or(eq(tables.events.id, input.master_event_id), eq(tables.events.masterEventId, input.master_event_id))!,
    );
  const rows = await db.orm
    .select(expansionColumns)
    .from(tables.events)
    .where(and(...conditions))
    .orderBy(asc(tables.events.rangeStart), asc(tables.events.id))
    .limit(MAX_EXPANDED_ROWS);
  let items = await expandRows(state, grant, rows, { start, end });
  const after = decodeCursor(input.page_token, 2);
  if (after) {
    const [cursorStart, cursorId] = after as [number, string];
    items = items.filter((item) => item.start > cursorStart || (item.start === cursorStart && item.id > cursorId));
  }
  const more = items.length > limit;
  const page = items.slice(0, limit);
  const last = page[page.length - 1];
  const full = await rowsByIds(db, grant.id, [...new Set(page.map((item) => item.row.id))]);
  // A row deleted between the two reads is left out of the page.
  const data = page.flatMap((item) => {
    const row = full.get(item.row.id);
    return row ? [toEvent(row, item.instance)] : [];
  });
  return { data, ...(more && last ? { next_cursor: encodeCursor([last.start, last.id]) } : {}) };
}

/** One event, or one instance of a series by its instance id. */
export async function findEvent(state: EventState, principal: Principal, input: EventRefInput): Promise<Event> {
  const { grant, calendar } = await context(state, principal, input);
  const located = await locate(state, grant, calendar, input.event_id);
  return toEvent(located.row, located.instance);
}

/** The calendar as an iCalendar feed (METHOD:PUBLISH): every event, series with their EXDATEs and changed instances. */
export async function exportCalendar(
  state: EventState,
  principal: Principal,
  input: { grant_id: string; calendar_id: string },
): Promise<{ calendar: CalendarRow; ics: string }> {
  const { db, clock } = state;
  const { grant, calendar } = await context(state, principal, input);
  const rows = await db.orm
    .select()
    .from(tables.events)
    .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.calendarId, calendar.id)))
    .orderBy(asc(tables.events.rangeStart), asc(tables.events.id))
    .limit(MAX_FEED_EVENTS);
  // Overrides follow their series, as RFC 5545 readers expect.
  const ordered = [
    ...rows.filter((row) => row.masterEventId === null),
    ...rows.filter((row) => row.masterEventId !== null),
  ];
  const ics = buildCalendarFeed({
    name: calendar.name,
    timezone: calendar.timezone,
    events: ordered.map(toCalendarEventData),
    now: clock.now(),
  });
  return { calendar, ics };
}

/**
 * Every instance of the grant's events overlapping `[start, end)` (series expanded, cancelled left out),
 * for free/busy and availability. `calendarIds` limits the calendars (default: all of the grant's).
 */
export async function occurrences(
  state: EventState,
  grantId: string,
  window: { start: number; end: number },
  calendarIds?: string[],
): Promise<
  {
    eventId: string;
    calendarId: string;
    start: number;
    end: number;
    busy: boolean;
    status: string;
    allDay: boolean;
  }[]
> {
  const { db } = state;
  const grant = await db.orm.query.grants.findFirst({ where: eq(tables.grants.id, grantId) });
  if (!grant) return [];
  const conditions: SQL[] = [
    eq(tables.events.grantId, grant.id),
    overlapCondition(window.start, window.end),
    ne(tables.events.status, 'cancelled'),
  ];
  if (calendarIds) conditions.push(inArray(tables.events.calendarId, calendarIds));
  const rows = await db.orm
    .select(expansionColumns)
    .from(tables.events)
    .where(and(...conditions))
    .limit(MAX_EXPANDED_ROWS);
  const items = await expandRows(state, grant, rows, window);
  return items.map(({ id, start, end, row }) => ({
    eventId: id,
    calendarId: row.calendarId,
    start,
    end,
    busy: row.busy,
    status: row.status,
    allDay: row.whenType === 'date' || row.whenType === 'datespan',
  }));
}
