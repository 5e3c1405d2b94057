/**
 * @module calendar/availability-reads
 * The busy time of the availability service (./availability-service.ts): the busy events of some grants'
 * calendars, read by ./availability-store.ts, as intervals for the pure engine (./availability.ts), recurring
 * series expanded in the window.
 */
import type { CoreDeps } from '../ports/index.js';
import { allDayInterval, type BusyInterval } from './availability.js';
import { calendarsOfGrants, seriesGroups, singleEventGroups, type BusyWhere } from './availability-store.js';
import { eventTimeOf, type EventRow } from './event-mapper.js';
import { isAllDay, shiftTo, utcRange } from './event-time.js';
import { requestExpansionBudget } from './ical.js';
import { instanceId, seriesStarts } from './recurrence.js';
import { normalizeTimeZone } from '../time-zones.js';

type Db = CoreDeps['db'];

const DAY = 86_400;
const none: ReadonlySet<number> = new Set();

/** A grant whose calendars are read, and which of its calendars count. */
export interface CalendarOwner {
  grantId: string;
  email: string;
  /** Calendar ids to read; undefined = every calendar of the grant. */
  calendarIds?: string[];
}

/** Options of a busy-time read. */
export interface BusyOptions {
  tentativeAsBusy: boolean;
  /** Read event ids too (explanations name them); otherwise timed events come back without ids. */
  withEventIds: boolean;
}

/**
 * Busy intervals of each owner overlapping `[from, to)`: busy, non-cancelled events (tentative ones only
 * with `tentativeAsBusy`) that the owner has not declined, with recurring series expanded. All-day events
 * cover their dates in their calendar's time zone. Keys are grant ids.
 *
 * Three queries whatever the number of owners, each returning one JSON array per calendar: materialising a row
 * object per event costs the client several times what SQLite spends finding it (issue 6's benchmark reads
 * about 20,000 events per request).
 */
export async function busyIntervals(
  db: Db,
  owners: CalendarOwner[],
  from: number,
  to: number,
  options: BusyOptions,
): Promise<Map<string, BusyInterval[]>> {
  const result = new Map<string, BusyInterval[]>(owners.map((owner) => [owner.grantId, []]));
  if (owners.length === 0) return result;
  const calendars = await calendarsOfGrants(
    db,
    owners.map((owner) => owner.grantId),
  );
  const wanted = new Map<string, { grantId: string; zone: string }>();
  for (const owner of owners) {
    for (const calendar of calendars) {
      if (
        calendar.grantId === owner.grantId &&
        (owner.calendarIds === undefined || owner.calendarIds.includes(calendar.id))
      ) {
        wanted.set(calendar.id, { grantId: calendar.grantId, zone: normalizeTimeZone(calendar.timezone) ?? 'UTC' });
      }
    }
  }
  if (wanted.size === 0) return result;

  // All-day rows carry UTC-day ranges; a day of margin finds those whose local day reaches the window.
  const queryFrom = from - DAY;
  const queryTo = to + DAY;
  const where: BusyWhere = {
    calendarIds: [...wanted.keys()],
    queryFrom,
    queryTo,
    tentativeAsBusy: options.tentativeAsBusy,
  };
  // One expansion allowance for all the series of the request (ical-expand.ts, REQUEST_EXPANSION_LIMITS).
  const budget = requestExpansionBudget();
  const add = (grantId: string, start: number, end: number, eventId?: string) => {
    if (start < to && end > from)
      result.get(grantId)?.push(eventId === undefined ? { start, end } : { start, end, eventId });
  };
  type SingleRow = [EventRow['whenType'], number | null, number | null, string | null, string | null, string?];
  const addSingle = (
    calendar: { grantId: string; zone: string },
    [whenType, startTime, endTime, startDate, endDate, id]: SingleRow,
  ) => {
    if (whenType === 'date' || whenType === 'datespan') {
      const first = startDate ?? '1970-01-01';
      const interval = allDayInterval(first, (whenType === 'datespan' ? endDate : null) ?? first, calendar.zone);
      add(calendar.grantId, interval.start, interval.end, id);
    } else {
      add(calendar.grantId, startTime ?? 0, endTime ?? startTime ?? 0, id);
    }
  };

  // Single events and overrides (rows without recurrence lines), one JSON array per calendar of
  // [when_type, start_time, end_time, start_date, end_date(, id)]: first those no participant could have
  // declined (read from the index alone), then the few others.
  for (const declinable of [false, true]) {
    const groups = await singleEventGroups(db, where, options.withEventIds, declinable);
    for (const group of groups) {
      const calendar = wanted.get(group.calendarId)!;
      for (const row of JSON.parse(group.rows) as SingleRow[]) addSingle(calendar, row);
    }
  }

  // Rows with recurrence lines: series masters, each with the original starts of its stored overrides (changed,
  // moved or cancelled: their own rows stand instead), expanded in the window. A row with lines that is not a
  // master (an override, or empty lines) counts as a single event.
  const masters = await seriesGroups(db, where);
  for (const group of masters) {
    const calendar = wanted.get(group.calendarId)!;
    // The lines stay JSON text: the prepared series is found by it, without parsing them again.
    type MasterRow = [
      string,
      string | null,
      EventRow['whenType'],
      number | null,
      number | null,
      string | null,
      string | null,
      string | null,
      string | null,
      string,
      number | null,
      (number | null)[],
    ];
    for (const [
      id,
      masterEventId,
      whenType,
      startTime,
      endTime,
      startTimezone,
      endTimezone,
      startDate,
      endDate,
      recurrence,
      lineCount,
      replaced,
    ] of JSON.parse(group.rows) as MasterRow[]) {
      if (masterEventId !== null || !lineCount) {
        addSingle(calendar, [
          whenType,
          startTime,
          endTime,
          startDate,
          endDate,
          ...(options.withEventIds ? [id] : []),
        ] as SingleRow);
        continue;
      }
      const time = eventTimeOf({ whenType, startTime, endTime, startTimezone, endTimezone, startDate, endDate });
      const overridden =
        replaced.length === 0 ? none : new Set(replaced.filter((start): start is number => start !== null));
      const { starts } = seriesStarts(time, recurrence, { start: queryFrom, end: queryTo }, overridden, budget);
      if (isAllDay(time)) {
        for (const start of starts) {
          const instance = shiftTo(time, start);
          const interval =
            instance.kind === 'date'
              ? allDayInterval(instance.date, instance.date, calendar.zone)
              : instance.kind === 'datespan'
                ? allDayInterval(instance.startDate, instance.endDate, calendar.zone)
                : utcRange(instance);
          add(calendar.grantId, interval.start, interval.end, instanceId(id, start));
        }
        continue;
      }
      const range = utcRange(time);
      const duration = range.end - range.start;
      for (const start of starts)
        add(calendar.grantId, start, start + duration, options.withEventIds ? instanceId(id, start) : undefined);
    }
  }
  return result;
}
