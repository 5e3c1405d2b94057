/**
 * @module calendar/event-service
 * Events in the Nylas model: create, list (with recurring series expanded into instances on request),
 * find, update, delete, RSVP, and the calendar's iCalendar feed. Every change writes its outbox event in
 * the same transaction; invitations, updates, cancellations and replies are composed as iMIP messages and
 * handed to the {@link InvitationSender} after the commit.
 */
import { and, asc, eq, gt, gte, inArray, isNull, lt, ne, or, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, encodeCursor } from '../pagination.js';
import type {
  CreateEventInput,
  DeleteEventInput,
  Event,
  EventRefInput,
  ListEventsInput,
  SendRsvpInput,
  SendRsvpResult,
  UpdateEventInput,
} from '../schemas/events.js';
import { MAX_EXPANDED_WINDOW_DAYS } from '../schemas/events.js';
import { metadataMatches, type CalendarRow, type CalendarService } from './calendar-service.js';
import {
  eventTimeColumns,
  eventTimeOf,
  toCalendarEventData,
  toEvent,
  type EventInsert,
  type EventRow,
} from './event-mapper.js';
import type { EventService } from './contracts.js';
import { createEventStore } from './event-store.js';
import { readWhen, shiftTo, utcRange, type EventTime } from './event-time.js';
import type { CalendarParser } from './ical-bounded.js';
import {
  buildCalendarFeed,
  parseRecurrence,
  requestExpansionBudget,
  type CalendarEventData,
  type Participant,
  type RecurrenceSet,
} from './ical.js';
import {
  composeCancel,
  composeReply,
  composeRequest,
  type InvitationSender,
  type OutgoingInvitation,
} from './invitation-message.js';
import { createInvitationInbox } from './itip-inbound.js';
import {
  exdateLine,
  instanceId,
  isOccurrence,
  moveSeries,
  parseInstanceId,
  seriesInstances,
  storedRange,
  type SeriesMove,
} from './recurrence.js';

/** Default list window when `end` is not given: 30 days after `start`. */
const DEFAULT_WINDOW_SECONDS = 30 * 86_400;
/** Rows read for one expanded list (series plus single events in the window). */
const MAX_EXPANDED_ROWS = 10_000;
/** Events in one calendar feed. */
const MAX_FEED_EVENTS = 10_000;

type StoredParticipant = EventRow['participants'][number];

/** Whether the grant organizes a stored event (events it made have it as organizer). */
export function organizedBy(grant: Pick<GrantRow, 'email'>, row: Pick<EventRow, 'organizer'>): boolean {
  return !row.organizer || row.organizer.email.toLowerCase() === grant.email.toLowerCase();
}

function bad(field: string, message: string): AppError {
  return new AppError('invalid_request', `${field}: ${message}`, { field });
}

/** Parses recurrence lines of a request, or a 400 naming `recurrence`. */
function readRecurrence(lines: readonly string[], when: EventTime): RecurrenceSet {
  const parsed = parseRecurrence(lines, when);
  if (!parsed.ok) throw bad('recurrence', parsed.error);
  return parsed.value;
}

/** Request participants merged with stored ones: answers are kept unless the request gives one. */
function mergeParticipants(
  input: NonNullable<CreateEventInput['participants']>,
  existing: StoredParticipant[],
): StoredParticipant[] {
  const known = new Map(existing.map((participant) => [participant.email.toLowerCase(), participant]));
  const seen = new Set<string>();
  const result: StoredParticipant[] = [];
  for (const participant of input) {
    const email = participant.email.trim().toLowerCase();
    if (seen.has(email)) continue;
    seen.add(email);
    const previous = known.get(email);
    result.push({
      email,
      status: participant.status ?? previous?.status ?? 'noreply',
      ...(participant.name !== undefined
        ? { name: participant.name }
        : previous?.name !== undefined
          ? { name: previous.name }
          : {}),
      ...(participant.comment !== undefined
        ? { comment: participant.comment }
        : previous?.comment !== undefined
          ? { comment: previous.comment }
          : {}),
      ...(participant.phone_number !== undefined ? { phone_number: participant.phone_number } : {}),
    });
  }
  return result;
}

function readConferencing(input: CreateEventInput['conferencing']): EventInsert['conferencing'] | undefined {
  if (input === undefined) return undefined;
  if (!input.details) {
    throw bad(
      'conferencing',
      input.autocreate !== undefined
        ? 'this service cannot create meetings (autocreate); create the meeting with its provider and pass conferencing.details.url.'
        : 'give conferencing.details with the meeting url.',
    );
  }
  return { provider: input.provider, details: input.details };
}

function likeCondition(column: AnyColumn, text: string): SQL {
  const escaped = text.toLowerCase().replace(/[\\%_]/g, (character) => `\\${character}`);
  return sql`lower(${column}) like ${`%${escaped}%`} escape '\\'`;
}

/** The SQL filters of a list request (everything but the window, the series rule and the cursor). */
function filterConditions(input: ListEventsInput): SQL[] {
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
function overlapCondition(start: number, end: number): SQL {
  return and(
    lt(tables.events.rangeStart, end),
    or(gt(tables.events.rangeEnd, start), gte(tables.events.rangeStart, start)),
  )!;
}

/**
 * The columns an expanded window is computed from. Full rows (some 35 columns, JSON among them) are read only
 * for the page returned: decoding them for every row of a busy month cost more than expanding its series.
 */
const expansionColumns = {
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
type ExpansionRow = Pick<EventRow, keyof typeof expansionColumns>;

/**
 * {@link overlapCondition} for reads that sort in memory (expanded windows): `range_end >= start` (implied, as
 * ranges never end before they start) lets SQLite walk events_calendar_range_end_idx, skipping the calendar's
 * history; the unary + keeps it off the range_start index, which would walk that history.
 */
function expandedWindowCondition(start: number, end: number): SQL {
  return and(
    gte(tables.events.rangeEnd, start),
    sql`+${tables.events.rangeStart} < ${end}`,
    or(gt(tables.events.rangeEnd, start), gte(tables.events.rangeStart, start)),
  )!;
}

/** One event or instance of an expanded window, with its UTC range; its wire form is built only when returned. */
interface ExpandedItem {
  id: string;
  start: number;
  end: number;
  row: ExpansionRow;
  instance?: { id: string; originalStart: number; when: EventTime };
}

/** Whether two event times are the same in every field. */
function sameTime(a: EventTime, b: EventTime): boolean {
  return JSON.stringify(eventTimeColumns(a)) === JSON.stringify(eventTimeColumns(b));
}

/** Whether recurrence lines given in a request are the stored ones (clients often send them back unchanged). */
function sameLines(given: readonly string[], stored: readonly string[] | null): boolean {
  return stored !== null && given.length === stored.length && given.every((line, index) => line === stored[index]);
}

/** An event located by id: a stored row, or a computed instance of a stored series. */
interface Located {
  row: EventRow;
  instance?: { id: string; originalStart: number; when: EventTime };
}

/** Options of {@link createEventService}. */
export interface EventServiceOptions {
  /** Parses incoming invitations (default: the process's shared bounded parser, ical-bounded.ts). */
  calendarParser?: CalendarParser;
}

/** Creates the event service. `invitations` delivers iMIP mail; without it nothing is mailed. */
export function createEventService(
  deps: CoreDeps,
  grants: GrantService,
  calendars: CalendarService,
  invitations?: InvitationSender,
  options: EventServiceOptions = {},
): EventService {
  const { db, clock, newId, logger } = deps;
  const now = () => unixSeconds(clock.now());
  const store = createEventStore(deps);

  async function dispatch(invitation: OutgoingInvitation): Promise<string | undefined> {
    if (invitation.to.length === 0) return undefined;
    if (!invitations) {
      logger.debug('iMIP message not sent: no invitation sender is configured', {
        grant_id: invitation.grantId,
        method: invitation.method,
        event_id: invitation.eventId,
      });
      return 'Outbound calendar email is not configured on this service; the change was saved but no email was sent.';
    }
    try {
      await invitations.send(invitation);
      return undefined;
    } catch (error) {
      logger.warn('iMIP message could not be sent', {
        grant_id: invitation.grantId,
        method: invitation.method,
        event_id: invitation.eventId,
        error: String(error),
      });
      return `The email could not be sent: ${(error as Error).message ?? String(error)}`;
    }
  }

  const others = (grant: GrantRow, participants: StoredParticipant[]) =>
    participants.filter((participant) => participant.email.toLowerCase() !== grant.email.toLowerCase());

  /** Sends the series (master first, then its overrides) as a REQUEST to its participants. */
  async function sendRequest(grant: GrantRow, master: EventRow) {
    const overrides = master.recurrence
      ? await db.orm
          .select()
          .from(tables.events)
          .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.masterEventId, master.id)))
      : [];
    const recipients = others(grant, master.participants);
    await dispatch(
      composeRequest(
        grant_(grant),
        master.id,
        [master, ...overrides].map(toCalendarEventData),
        recipients,
        clock.now(),
      ),
    );
  }

  const grant_ = (grant: GrantRow) => ({
    applicationId: grant.applicationId,
    grantId: grant.id,
    email: grant.email,
    name: grant.name,
  });

  async function locate(grant: GrantRow, calendar: CalendarRow, eventId: string): Promise<Located> {
    const row = await db.orm.query.events.findFirst({
      where: and(
        eq(tables.events.grantId, grant.id),
        eq(tables.events.calendarId, calendar.id),
        eq(tables.events.id, eventId),
      ),
    });
    if (row) return { row };
    const instance = parseInstanceId(eventId);
    if (instance) {
      const master = await db.orm.query.events.findFirst({
        where: and(
          eq(tables.events.grantId, grant.id),
          eq(tables.events.calendarId, calendar.id),
          eq(tables.events.id, instance.masterId),
        ),
      });
      if (
        master?.recurrence &&
        master.masterEventId === null &&
        isOccurrence(eventTimeOf(master), master.recurrence, instance.originalStart)
      ) {
        return {
          row: master,
          instance: {
            id: eventId,
            originalStart: instance.originalStart,
            when: shiftTo(eventTimeOf(master), instance.originalStart),
          },
        };
      }
    }
    throw notFound('Event', eventId);
  }

  async function context(principal: Principal, input: { grant_id: string; calendar_id: string }) {
    const grant = await grants.require(principal, input.grant_id);
    const calendar = await calendars.resolve(grant, input.calendar_id);
    return { grant, calendar };
  }

  /** Expands stored rows into events for a window: series into instances (minus overrides), others as they are. */
  async function expandRows(
    grant: GrantRow,
    rows: ExpansionRow[],
    window: { start: number; end: number },
  ): Promise<ExpandedItem[]> {
    const masters = rows.filter((row) => row.masterEventId === null && row.recurrence && row.recurrence.length > 0);
    const overridden = new Map<string, Set<number>>();
    for (let index = 0; index < masters.length; index += 500) {
      const ids = masters.slice(index, index + 500).map((row) => row.id);
      const overrides = await db.orm
        .select({ masterEventId: tables.events.masterEventId, originalStartTime: tables.events.originalStartTime })
        .from(tables.events)
        // Unary +: the lookup goes by events_master_idx, not by the grant's index (all of its rows).
        .where(and(sql`+${tables.events.grantId} = ${grant.id}`, inArray(tables.events.masterEventId, ids)));
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
          logger.warn('recurring event expansion capped', {
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

  /** The grant's full rows with these ids, by id. */
  async function fullRows(grant: GrantRow, ids: string[]): Promise<Map<string, EventRow>> {
    const rows = new Map<string, EventRow>();
    for (let index = 0; index < ids.length; index += 500) {
      const chunk = await db.orm
        .select()
        .from(tables.events)
        // Unary +: by primary key, not by the grant's index (all of its rows).
        .where(
          and(sql`+${tables.events.grantId} = ${grant.id}`, inArray(tables.events.id, ids.slice(index, index + 500))),
        );
      for (const row of chunk) rows.set(row.id, row);
    }
    return rows;
  }

  /**
   * Re-keys the overrides of a series whose start moved (`move`, from `from`): each takes the original start of its
   * occurrence in the moved series, so its instance id (`<master>_<original start>`) changes: the row is replaced
   * (event.deleted for the old id, event.created for the new). An override whose time is still the computed time
   * of its instance (only other fields, or its status, were changed) moves with the series, to the new time of
   * its occurrence; one given a time of its own keeps it. Two overrides landing on one occurrence: the first kept.
   */
  async function moveOverrides(
    tx: Tx,
    grant: GrantRow,
    master: EventRow,
    from: EventTime,
    to: EventTime,
    move: SeriesMove,
    sequence: number,
    at: number,
  ) {
    const plans = (await store.overridesOf(tx, grant, master.id)).flatMap((row) => {
      if (row.originalStartTime === null) return [];
      const originalStart = move.start(row.originalStartTime);
      const own = eventTimeOf(row);
      const when = sameTime(own, shiftTo(from, row.originalStartTime)) ? shiftTo(to, originalStart) : own;
      return [{ row, originalStart, when, id: instanceId(master.id, originalStart) }];
    });
    const taken = new Set(plans.filter((plan) => plan.id === plan.row.id).map((plan) => plan.id));
    for (const plan of plans) if (plan.id !== plan.row.id) await store.remove(tx, grant, plan.row, at);
    for (const plan of plans) {
      const time = {
        ...eventTimeColumns(plan.when),
        ...storedRange(plan.when, null),
        sequence: Math.max(plan.row.sequence, sequence),
        updatedAt: at,
      };
      if (plan.id === plan.row.id) {
        if (!sameTime(plan.when, eventTimeOf(plan.row))) await store.update(tx, grant, plan.row, time);
        continue;
      }
      if (taken.has(plan.id)) continue;
      taken.add(plan.id);
      await store.insert(tx, grant, { ...plan.row, ...time, id: plan.id, originalStartTime: plan.originalStart });
    }
  }

  const inbox = createInvitationInbox(deps, calendars, store, options.calendarParser);

  return {
    /**
     * A page of a calendar's events overlapping the window (`start` default now, `end` default start + 30
     * days; not applied with `metadata_pair`). Series appear once, or per instance with `expand_recurring`.
     */
    async list(principal: Principal, input: ListEventsInput): Promise<{ data: Event[]; next_cursor?: string }> {
      const { grant, calendar } = await context(principal, input);
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
      let items = await expandRows(grant, rows, { start, end });
      const after = decodeCursor(input.page_token, 2);
      if (after) {
        const [cursorStart, cursorId] = after as [number, string];
        items = items.filter((item) => item.start > cursorStart || (item.start === cursorStart && item.id > cursorId));
      }
      const more = items.length > limit;
      const page = items.slice(0, limit);
      const last = page[page.length - 1];
      const full = await fullRows(grant, [...new Set(page.map((item) => item.row.id))]);
      // A row deleted between the two reads is left out of the page.
      const data = page.flatMap((item) => {
        const row = full.get(item.row.id);
        return row ? [toEvent(row, item.instance)] : [];
      });
      return { data, ...(more && last ? { next_cursor: encodeCursor([last.start, last.id]) } : {}) };
    },

    /** One event, or one instance of a series by its instance id. */
    async find(principal: Principal, input: EventRefInput): Promise<Event> {
      const { grant, calendar } = await context(principal, input);
      const located = await locate(grant, calendar, input.event_id);
      return toEvent(located.row, located.instance);
    },

    /** Creates an event organized by the grant; participants get an iMIP REQUEST unless notify_participants is false. */
    async create(principal: Principal, input: CreateEventInput): Promise<Event> {
      const { grant, calendar } = await context(principal, input);
      const when = readWhen(input.when, calendar.timezone);
      const recurrence =
        input.recurrence && input.recurrence.length > 0 ? readRecurrence(input.recurrence, when) : null;
      const conferencing = readConferencing(input.conferencing);
      const at = now();
      const id = newId();
      const domain = grant.email.slice(grant.email.lastIndexOf('@') + 1);
      const organizer = grant.name ? { email: grant.email, name: grant.name } : { email: grant.email };
      const row = await db.write((tx) =>
        store.insert(tx, grant, {
          id,
          grantId: grant.id,
          calendarId: calendar.id,
          icalUid: `${id}@${domain}`,
          sequence: 0,
          title: input.title ?? null,
          description: input.description ?? null,
          location: input.location ?? null,
          ...eventTimeColumns(when),
          ...storedRange(when, recurrence),
          recurrence: recurrence ? input.recurrence!.map((line) => line.trim()) : null,
          busy: input.busy ?? true,
          status: input.status ?? 'confirmed',
          visibility: input.visibility ?? 'default',
          readOnly: input.read_only ?? false,
          hideParticipants: input.hide_participants ?? false,
          capacity: input.capacity ?? null,
          organizer,
          creator: organizer,
          participants: mergeParticipants(input.participants ?? [], []),
          resources: input.resources ?? null,
          conferencing: conferencing ?? null,
          reminders: input.reminders
            ? { use_default: input.reminders.use_default, overrides: input.reminders.overrides ?? [] }
            : null,
          metadata: input.metadata ?? null,
          createdAt: at,
          updatedAt: at,
        }),
      );
      if (input.notify_participants !== false && row.participants.length > 0) await sendRequest(grant, row);
      return toEvent(row);
    },

    /**
     * Changes an event (top-level fields replace; participants keep their answers). An instance id changes
     * that one instance (stored as an override). Invitations from others accept only local fields.
     */
    async update(principal: Principal, input: UpdateEventInput): Promise<Event> {
      const { grant, calendar } = await context(principal, input);
      const located = await locate(grant, calendar, input.event_id);
      const base = located.row;
      if (!organizedBy(grant, base)) {
        const shared = (
          [
            'when',
            'title',
            'description',
            'location',
            'participants',
            'resources',
            'conferencing',
            'recurrence',
            'status',
            'capacity',
          ] as const
        ).filter((field) => input[field] !== undefined);
        if (shared.length > 0) {
          throw bad(
            shared[0]!,
            `this is an invitation organized by ${base.organizer!.email}; only the organizer can change ${shared.join(', ')}. Answer it with send_rsvp, or change busy, reminders, visibility or metadata on your copy.`,
          );
        }
      }
      if ((located.instance || base.masterEventId !== null) && input.recurrence !== undefined) {
        throw bad(
          'recurrence',
          'this is one instance of a recurring event; change the recurrence on the series (its master_event_id).',
        );
      }
      const currentWhen = located.instance?.when ?? eventTimeOf(base);
      const when = input.when ? readWhen(input.when, calendar.timezone) : currentWhen;
      const givenLines = input.recurrence?.map((line) => line.trim());
      const series =
        !located.instance && base.masterEventId === null && base.recurrence !== null && base.recurrence.length > 0;
      const linesChanged = givenLines !== undefined && !sameLines(givenLines, base.recurrence);
      // A series moved with its lines as they are (not given, or given back unchanged) takes its EXDATEs and
      // overrides along (recurrence.ts, moveSeries); lines given anew are taken as they are.
      const move =
        series && input.when !== undefined && !linesChanged
          ? moveSeries(eventTimeOf(base), when, base.recurrence!)
          : undefined;
      const recurrenceLines = move
        ? move.lines
        : givenLines !== undefined
          ? givenLines
          : located.instance
            ? null
            : base.recurrence;
      const recurrence =
        recurrenceLines && recurrenceLines.length > 0 && !located.instance && base.masterEventId === null
          ? readRecurrence(recurrenceLines, when)
          : null;
      const conferencing = readConferencing(input.conferencing);
      const significant = (
        ['when', 'title', 'description', 'location', 'participants', 'conferencing', 'recurrence', 'status'] as const
      ).some((field) => input[field] !== undefined);
      const at = now();
      const fields: Partial<EventInsert> = {
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.location !== undefined ? { location: input.location } : {}),
        ...(input.busy !== undefined ? { busy: input.busy } : {}),
        ...(input.participants !== undefined
          ? { participants: mergeParticipants(input.participants, base.participants) }
          : {}),
        ...(input.resources !== undefined ? { resources: input.resources } : {}),
        ...(conferencing !== undefined ? { conferencing } : {}),
        ...(input.reminders !== undefined
          ? { reminders: { use_default: input.reminders.use_default, overrides: input.reminders.overrides ?? [] } }
          : {}),
        ...(input.metadata !== undefined ? { metadata: input.metadata } : {}),
        ...(input.visibility !== undefined ? { visibility: input.visibility } : {}),
        ...(input.status !== undefined ? { status: input.status } : {}),
        ...(input.read_only !== undefined ? { readOnly: input.read_only } : {}),
        ...(input.capacity !== undefined ? { capacity: input.capacity } : {}),
        ...(input.hide_participants !== undefined ? { hideParticipants: input.hide_participants } : {}),
      };
      const removed =
        input.participants !== undefined
          ? others(grant, base.participants).filter(
              (old) =>
                !input.participants!.some(
                  (participant) => participant.email.trim().toLowerCase() === old.email.toLowerCase(),
                ),
            )
          : [];

      const { row, master } = await db.write(async (tx) => {
        if (located.instance) {
          // The first change to one instance stores it as an override (its id stays the instance id).
          const { id: _id, createdAt: _created, ...copy } = base;
          const override = await store.insert(tx, grant, {
            ...copy,
            ...fields,
            id: located.instance.id,
            masterEventId: base.id,
            originalStartTime: located.instance.originalStart,
            recurrence: null,
            ...eventTimeColumns(when),
            ...storedRange(when, null),
            sequence: base.sequence + (significant ? 1 : 0),
            createdAt: at,
            updatedAt: at,
          });
          return { row: override, master: base };
        }
        const timing = input.when !== undefined || input.recurrence !== undefined;
        if (move) {
          await moveOverrides(tx, grant, base, eventTimeOf(base), when, move, base.sequence + 1, at);
        } else if (linesChanged && base.masterEventId === null && base.recurrence) {
          // A series given a new rule drops its changed instances, as calendar apps do.
          for (const override of await store.overridesOf(tx, grant, base.id))
            await store.remove(tx, grant, override, at);
        }
        const updated = await store.update(tx, grant, base, {
          ...fields,
          ...(timing
            ? {
                ...eventTimeColumns(when),
                ...storedRange(when, recurrence),
                ...(base.masterEventId === null ? { recurrence: recurrence ? recurrenceLines : null } : {}),
              }
            : {}),
          sequence: base.sequence + (significant ? 1 : 0),
          updatedAt: at,
        });
        const seriesMaster =
          updated.masterEventId === null
            ? updated
            : await tx.query.events.findFirst({
                where: and(eq(tables.events.grantId, grant.id), eq(tables.events.id, updated.masterEventId)),
              });
        return { row: updated, master: seriesMaster ?? updated };
      });

      if (input.notify_participants !== false && organizedBy(grant, row) && significant) {
        if (others(grant, master.participants).length > 0 || others(grant, row.participants).length > 0)
          await sendRequest(grant, master);
        if (removed.length > 0)
          await dispatch(
            composeCancel(
              grant_(grant),
              row.id,
              { ...toCalendarEventData(row), sequence: row.sequence },
              removed,
              clock.now(),
            ),
          );
      }
      return toEvent(row);
    },

    /**
     * Deletes an event (a series with its changed instances). An instance id removes that one instance
     * (an EXDATE on the series). Participants of an event the grant organizes get an iMIP CANCEL.
     */
    async destroy(principal: Principal, input: DeleteEventInput): Promise<void> {
      const { grant, calendar } = await context(principal, input);
      const located = await locate(grant, calendar, input.event_id);
      const at = now();
      const organizer = organizedBy(grant, located.row);
      let cancelled: { event: CalendarEventData; participants: StoredParticipant[] } | undefined;
      await db.write(async (tx) => {
        const row = located.row;
        const addExdate = (master: EventRow, originalStart: number) =>
          store.update(tx, grant, master, {
            recurrence: [...(master.recurrence ?? []), exdateLine(eventTimeOf(master), originalStart)],
            sequence: master.sequence + 1,
            updatedAt: at,
          });
        if (located.instance) {
          // One computed instance: the series gets an EXDATE.
          const master = await addExdate(row, located.instance.originalStart);
          cancelled = {
            event: {
              ...toCalendarEventData(master),
              recurrence: null,
              recurrenceId: located.instance.originalStart,
              when: located.instance.when,
            },
            participants: master.participants,
          };
          return;
        }
        await store.remove(tx, grant, row, at);
        if (row.masterEventId !== null && row.originalStartTime !== null) {
          // A changed instance: gone, and excluded from its series.
          const master = await tx.query.events.findFirst({
            where: and(eq(tables.events.grantId, grant.id), eq(tables.events.id, row.masterEventId)),
          });
          const updated = master?.recurrence ? await addExdate(master, row.originalStartTime) : undefined;
          cancelled = {
            event: { ...toCalendarEventData(row), sequence: Math.max(row.sequence, updated?.sequence ?? 0) },
            participants: row.participants,
          };
          return;
        }
        cancelled = {
          event: { ...toCalendarEventData(row), sequence: row.sequence + 1 },
          participants: row.participants,
        };
      });
      if (input.notify_participants !== false && organizer && cancelled) {
        await dispatch(
          composeCancel(
            grant_(grant),
            input.event_id,
            cancelled.event,
            others(grant, cancelled.participants),
            clock.now(),
          ),
        );
      }
    },

    /**
     * Answers an invitation: sets the grant's participant status and sends an iMIP REPLY to the organizer.
     * Organizers cannot RSVP to their own events (400).
     */
    async sendRsvp(principal: Principal, input: SendRsvpInput): Promise<SendRsvpResult> {
      const { grant, calendar } = await context(principal, input);
      const located = await locate(grant, calendar, input.event_id);
      if (located.instance) {
        throw bad(
          'event_id',
          `${input.event_id} is one instance of a recurring event; to answer the whole series, send_rsvp with event_id=${located.row.id}.`,
        );
      }
      const row = located.row;
      if (organizedBy(grant, row)) {
        throw bad(
          'event_id',
          'you organize this event; organizers do not RSVP. Change the event with update_event instead.',
        );
      }
      const me = grant.email.toLowerCase();
      const answer: StoredParticipant = {
        ...(row.participants.find((participant) => participant.email.toLowerCase() === me) ?? { email: me }),
        status: input.status,
        ...(input.comment !== undefined ? { comment: input.comment } : {}),
      };
      if (!answer.name && grant.name) answer.name = grant.name;
      const participants = row.participants.some((participant) => participant.email.toLowerCase() === me)
        ? row.participants.map((participant) => (participant.email.toLowerCase() === me ? answer : participant))
        : [...row.participants, answer];
      const updated = await db.write((tx) => store.update(tx, grant, row, { participants, updatedAt: now() }));
      const attendee: Participant = {
        email: answer.email,
        status: answer.status,
        ...(answer.name ? { name: answer.name } : {}),
        ...(answer.comment ? { comment: answer.comment } : {}),
      };
      const error = await dispatch(
        composeReply(grant_(grant), updated.id, toCalendarEventData(updated), attendee, clock.now()),
      );
      return error
        ? { send_ics_error: { type: invitations ? 'provider_error' : 'not_configured', message: error } }
        : {};
    },

    /** The calendar as an iCalendar feed (METHOD:PUBLISH): every event, series with their EXDATEs and changed instances. */
    async exportCalendar(
      principal: Principal,
      input: { grant_id: string; calendar_id: string },
    ): Promise<{ calendar: CalendarRow; ics: string }> {
      const { grant, calendar } = await context(principal, input);
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
    },

    /**
     * Every instance of the grant's events overlapping `[start, end)` (series expanded, cancelled left out),
     * for free/busy and availability. `calendarIds` limits the calendars (default: all of the grant's).
     */
    async occurrences(
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
      const items = await expandRows(grant, rows, window);
      return items.map(({ id, start, end, row }) => ({
        eventId: id,
        calendarId: row.calendarId,
        start,
        end,
        busy: row.busy,
        status: row.status,
        allDay: row.whenType === 'date' || row.whenType === 'datespan',
      }));
    },

    /**
     * Applies an incoming iMIP message (its `text/calendar` part) to the grant's calendar: REQUEST creates
     * or updates the event on the primary calendar, CANCEL cancels it, REPLY records an attendee's answer
     * on an event the grant organizes. Unreadable or hostile iCalendar changes nothing. Never throws for bad input.
     * The text is parsed off the event loop under a deadline and a heap cap; when that parse is stopped, the only
     * outcome is `{ action: 'unreadable', reason }` (see InvitationOutcome).
     */
    applyInvitation: inbox.apply,
  };
}

export type { EventService } from './contracts.js';
