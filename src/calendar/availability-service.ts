/**
 * @module calendar/availability-service
 * Free/busy and availability over the calendars this service hosts: reads the busy events of the grants of
 * the calling application (busy, not cancelled, not declined; recurring series expanded in the window) and
 * hands them, as intervals, to the pure engine in availability.ts.
 */
import { and, eq, gt, inArray, isNotNull, isNull, ne, sql, type SQL } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import type { Availability, GetAvailabilityInput, OpenHours } from '../schemas/availability.js';
import { MAX_AVAILABILITY_WINDOW_DAYS, MAX_EXPLANATIONS } from '../schemas/availability.js';
import type { FreeBusyEntry, FreeBusyList, GetFreeBusyInput } from '../schemas/free-busy.js';
import { MAX_FREE_BUSY_WINDOW_DAYS } from '../schemas/free-busy.js';
import {
  allDayInterval,
  computeAvailability,
  freeBusy,
  type AvailabilityParticipant,
  type BusyInterval,
  type ExclusionReason,
  type OpenHoursRule,
} from './availability.js';
import type { AvailabilityService } from './contracts.js';
import { eventTimeOf, type EventRow } from './event-mapper.js';
import { isAllDay, shiftTo, utcRange } from './event-time.js';
import { requestExpansionBudget } from './ical.js';
import { instanceId, seriesStarts } from './recurrence.js';
import { normalizeTimeZone } from '../time-zones.js';

const DAY = 86_400;
const none: ReadonlySet<number> = new Set();
/** Bounds the work and the answer of one availability request: window minutes / interval minutes. */
const MAX_CANDIDATE_STARTS = 50_000;

/** A grant whose calendars are read, and which of its calendars count. */
interface CalendarOwner {
  grantId: string;
  email: string;
  /** Calendar ids to read; undefined = every calendar of the grant. */
  calendarIds?: string[];
}

/** Options of a busy-time read. */
interface BusyOptions {
  tentativeAsBusy: boolean;
  /** Read event ids too (explanations name them); otherwise timed events come back without ids. */
  withEventIds: boolean;
}

function invalid(field: string, message: string): AppError {
  return new AppError('invalid_request', `${field}: ${message}`, { field });
}

function checkWindow(startTime: number, endTime: number, maxDays: number): void {
  if (endTime <= startTime) throw invalid('end_time', 'must be after start_time.');
  if (endTime - startTime > maxDays * DAY)
    throw invalid('end_time', `the window may span at most ${maxDays} days; split the search into several requests.`);
}

/** Creates the availability service. */
export function createAvailabilityService({ db }: CoreDeps, grants: GrantService): AvailabilityService {
  /** The application's grants with these addresses (lower-cased), by address. */
  async function grantsByEmail(
    principal: Principal,
    emails: string[],
  ): Promise<Map<string, { id: string; email: string }>> {
    if (emails.length === 0) return new Map();
    const rows = await db.orm
      .select({ id: tables.grants.id, email: tables.grants.email })
      .from(tables.grants)
      .where(and(eq(tables.grants.applicationId, principal.applicationId), inArray(tables.grants.email, emails)));
    return new Map(rows.map((row) => [row.email, row]));
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
  async function busyIntervals(
    owners: CalendarOwner[],
    from: number,
    to: number,
    options: BusyOptions,
  ): Promise<Map<string, BusyInterval[]>> {
    const result = new Map<string, BusyInterval[]>(owners.map((owner) => [owner.grantId, []]));
    if (owners.length === 0) return result;
    const calendars = await db.orm
      .select({ id: tables.calendars.id, grantId: tables.calendars.grantId, timezone: tables.calendars.timezone })
      .from(tables.calendars)
      .where(
        inArray(
          tables.calendars.grantId,
          owners.map((owner) => owner.grantId),
        ),
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
    const events = tables.events;
    // Rows overlapping the window, found by range_end, which skips a calendar's history (events_single_busy_idx
    // for single events, events_series_range_idx for series): the unary + keeps SQLite from walking the
    // range_start index instead.
    const common: (SQL | undefined)[] = [
      inArray(events.calendarId, [...wanted.keys()]),
      gt(events.rangeEnd, queryFrom),
      sql`+${events.rangeStart} < ${queryTo}`,
      eq(events.busy, true),
      ne(events.status, 'cancelled'),
      options.tentativeAsBusy ? undefined : ne(events.status, 'maybe'),
    ];
    // Events the owner declined do not make them busy. The index holds whether the participants mention a "no" at
    // all; only rows that do are read, to look for the owner's answer.
    const mentionsNo = sql`(${events.participants} glob '*"no"*')`;
    const notDeclined = sql`not exists (select 1 from json_each(${events.participants}) as p where lower(json_extract(p.value, '$.email')) = (select g.email from ${tables.grants} as g where g.id = ${events.grantId}) and json_extract(p.value, '$.status') = 'no')`;
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
    const singleFields = {
      calendarId: events.calendarId,
      rows: options.withEventIds
        ? sql<string>`json_group_array(json_array(${events.whenType}, ${events.startTime}, ${events.endTime}, ${events.startDate}, ${events.endDate}, ${events.id}))`
        : sql<string>`json_group_array(json_array(${events.whenType}, ${events.startTime}, ${events.endTime}, ${events.startDate}, ${events.endDate}))`,
    };
    for (const declinable of [false, true]) {
      const groups = await db.orm
        .select(singleFields)
        .from(events)
        .where(
          and(
            ...common,
            isNull(events.recurrence),
            declinable ? and(sql`${mentionsNo}`, notDeclined) : sql`not ${mentionsNo}`,
          ),
        )
        .groupBy(events.calendarId);
      for (const group of groups) {
        const calendar = wanted.get(group.calendarId)!;
        for (const row of JSON.parse(group.rows) as SingleRow[]) addSingle(calendar, row);
      }
    }

    // Rows with recurrence lines: series masters, each with the original starts of its stored overrides (changed,
    // moved or cancelled: their own rows stand instead), expanded in the window. A row with lines that is not a
    // master (an override, or empty lines) counts as a single event.
    // Select fields render columns unqualified, so the correlated subquery names both tables itself.
    const replacedStarts = sql.raw(
      '(select json_group_array(o.original_start_time) from events as o where o.master_event_id = events.id)',
    );
    const masters = await db.orm
      .select({
        calendarId: events.calendarId,
        rows: sql<string>`json_group_array(json_array(${events.id}, ${events.masterEventId}, ${events.whenType}, ${events.startTime}, ${events.endTime}, ${events.startTimezone}, ${events.endTimezone}, ${events.startDate}, ${events.endDate}, ${events.recurrence}, json_array_length(${events.recurrence}), ${replacedStarts}))`,
      })
      .from(events)
      .where(and(...common, isNotNull(events.recurrence), sql`(not ${mentionsNo} or ${notDeclined})`))
      .groupBy(events.calendarId);
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

  /** When each grant was last booked for a round-robin group (events whose metadata key5 is the group). */
  async function lastBooked(grantIds: string[], group: string | undefined): Promise<Map<string, number>> {
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

  const toRules = (hours: OpenHours[] | undefined): OpenHoursRule[] | undefined =>
    hours?.map((rule) => ({
      days: rule.days,
      timezone: normalizeTimeZone(rule.timezone) ?? rule.timezone,
      start: rule.start,
      end: rule.end,
      ...(rule.exdates ? { exdates: rule.exdates } : {}),
    }));

  const toWireReason = (
    reason: ExclusionReason,
  ): NonNullable<Availability['explanations']>[number]['reasons'][number] =>
    reason.type === 'busy' || reason.type === 'buffer'
      ? { type: reason.type, email: reason.email, event_ids: reason.eventIds }
      : reason.type === 'outside_open_hours'
        ? { type: reason.type, email: reason.email }
        : { type: 'past_window' };

  return {
    /**
     * Busy blocks of each address in the window. Addresses that are not grants of the caller's application
     * get an inline error entry, as Nylas answers for addresses it cannot read.
     */
    async freeBusy(principal: Principal, input: GetFreeBusyInput): Promise<FreeBusyList> {
      await grants.require(principal, input.grant_id);
      checkWindow(input.start_time, input.end_time, MAX_FREE_BUSY_WINDOW_DAYS);
      const emails = input.emails.map((email) => email.trim().toLowerCase());
      const known = await grantsByEmail(principal, [...new Set(emails)]);
      const owners = [...known.values()].map((grant) => ({ grantId: grant.id, email: grant.email }));
      const busy = await busyIntervals(owners, input.start_time, input.end_time, {
        tentativeAsBusy: input.tentative_as_busy ?? true,
        withEventIds: false,
      });
      const data = input.emails.map((original, index): FreeBusyEntry => {
        const grant = known.get(emails[index]!);
        if (!grant) {
          return {
            email: original,
            object: 'error',
            error: `${original} is not an Agent Account of this application; free/busy can only read calendars this service hosts.`,
          };
        }
        const blocks = freeBusy({ startTime: input.start_time, endTime: input.end_time }, busy.get(grant.id) ?? []);
        return {
          email: original,
          object: 'free_busy',
          time_slots: blocks.map((block) => ({
            start_time: block.startTime,
            end_time: block.endTime,
            status: 'busy' as const,
            object: 'time_slot' as const,
          })),
        };
      });
      return { data };
    },

    /** Bookable slots for the participants (all grants of the caller's application), per availability.ts. */
    async find(principal: Principal, input: GetAvailabilityInput): Promise<Availability> {
      checkWindow(input.start_time, input.end_time, MAX_AVAILABILITY_WINDOW_DAYS);
      const interval = input.interval_minutes ?? input.duration_minutes;
      if ((input.end_time - input.start_time) / 60 / interval > MAX_CANDIDATE_STARTS) {
        throw invalid(
          'interval_minutes',
          `${interval} minutes is too fine for this window (at most ${MAX_CANDIDATE_STARTS} candidate starts); use a larger interval or a shorter window.`,
        );
      }
      const rules = input.availability_rules ?? {};
      const emails = input.participants.map((participant) => participant.email.trim().toLowerCase());
      const seen = new Set<string>();
      emails.forEach((email, index) => {
        if (seen.has(email)) throw invalid(`participants[${index}].email`, `${email} is listed twice.`);
        seen.add(email);
      });
      const known = await grantsByEmail(principal, emails);
      emails.forEach((email, index) => {
        if (!known.has(email)) {
          throw invalid(
            `participants[${index}].email`,
            `${email} is not an Agent Account of this application; every participant must be a grant of the calling application.`,
          );
        }
      });

      // Calendars: the primary unless calendar_ids names others ("primary" allowed); each must be the participant's.
      const grantIds = emails.map((email) => known.get(email)!.id);
      const calendarRows = await db.orm
        .select({ id: tables.calendars.id, grantId: tables.calendars.grantId, isPrimary: tables.calendars.isPrimary })
        .from(tables.calendars)
        .where(inArray(tables.calendars.grantId, grantIds));
      const owners: CalendarOwner[] = input.participants.map((participant, index) => {
        const grantId = grantIds[index]!;
        const own = calendarRows.filter((row) => row.grantId === grantId);
        const requested =
          participant.calendar_ids && participant.calendar_ids.length > 0 ? participant.calendar_ids : ['primary'];
        const calendarIds = requested.map((id) => {
          const calendar = id === 'primary' ? own.find((row) => row.isPrimary) : own.find((row) => row.id === id);
          if (!calendar)
            throw invalid(
              `participants[${index}].calendar_ids`,
              `${id} is not a calendar of ${emails[index]}; list its calendars with GET /v3/grants/${emails[index]}/calendars.`,
            );
          return calendar.id;
        });
        return { grantId, email: emails[index]!, calendarIds };
      });

      const duration = input.duration_minutes * 60;
      const before = (rules.buffer?.before ?? 0) * 60;
      const after = (rules.buffer?.after ?? 0) * 60;
      // Buffers reach into the window from events outside it; explanations look up to one meeting past its end.
      const busy = await busyIntervals(owners, input.start_time - after, input.end_time + duration + before, {
        tentativeAsBusy: rules.tentative_as_busy ?? true,
        withEventIds: input.explain === true,
      });
      const group = rules.round_robin_group_id ?? rules.round_robin_event_id;
      const method = rules.availability_method ?? 'collective';
      const booked = method === 'collective' ? new Map<string, number>() : await lastBooked(grantIds, group);

      const participants: AvailabilityParticipant[] = input.participants.map((participant, index) => {
        const grantId = grantIds[index]!;
        return {
          email: emails[index]!,
          busy: busy.get(grantId) ?? [],
          ...(participant.open_hours && participant.open_hours.length > 0
            ? { openHours: toRules(participant.open_hours) }
            : {}),
          ...(participant.specific_time_availability
            ? {
                specificTimeAvailability: participant.specific_time_availability.map((entry) => ({
                  date: entry.date,
                  start: entry.start,
                  end: entry.end,
                  ...(entry.timezone ? { timezone: normalizeTimeZone(entry.timezone) ?? entry.timezone } : {}),
                })),
              }
            : {}),
          ...(participant.only_specific_time_availability ? { onlySpecificTimeAvailability: true } : {}),
          lastBookedAt: booked.get(grantId) ?? null,
        };
      });
      const defaultOpenHours = toRules(rules.default_open_hours);
      let result;
      try {
        result = computeAvailability({
          startTime: input.start_time,
          endTime: input.end_time,
          durationMinutes: input.duration_minutes,
          ...(input.interval_minutes !== undefined ? { intervalMinutes: input.interval_minutes } : {}),
          roundTo: input.round_to ?? (input.round_to_30_minutes ? 30 : 15),
          method,
          buffer: { before: rules.buffer?.before ?? 0, after: rules.buffer?.after ?? 0 },
          ...(defaultOpenHours ? { defaultOpenHours } : {}),
          participants,
          explain: input.explain === true,
          explainLimit: MAX_EXPLANATIONS,
        });
      } catch (error) {
        if (error instanceof RangeError) throw new AppError('invalid_request', `availability: ${error.message}.`);
        throw error;
      }
      // Slots list participants by the addresses the caller sent.
      const original = new Map(emails.map((email, index) => [email, input.participants[index]!.email]));
      const name = (email: string) => original.get(email) ?? email;
      return {
        order: result.order.map(name),
        time_slots: result.timeSlots.map((slot) => ({
          emails: slot.emails.map(name),
          start_time: slot.startTime,
          end_time: slot.endTime,
        })),
        ...(result.explanations
          ? {
              explanations: result.explanations.map((explanation) => ({
                start_time: explanation.startTime,
                end_time: explanation.endTime,
                reasons: explanation.reasons.map((reason) => {
                  const wire = toWireReason(reason);
                  return 'email' in wire ? { ...wire, email: name(wire.email) } : wire;
                }),
              })),
            }
          : {}),
        ...(result.explanationsTruncated ? { explanations_truncated: true } : {}),
      };
    },
  };
}

export type { AvailabilityService } from './contracts.js';
