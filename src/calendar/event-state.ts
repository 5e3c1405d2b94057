/**
 * @module calendar/event-state
 * What the event service's reads, writes and iMIP (./event-service.ts) share: the state `createEventService` makes,
 * the grant and calendar of a request, an event located by id (a row or an instance of a series), and the readers
 * of a request's fields.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type GrantRow } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError, notFound } from '../errors.js';
import type { GrantService } from '../grants/contracts.js';
import type { RemoteCollections } from '../ports/index.js';
import type { CreateEventInput } from '../schemas/events.js';
import type { CalendarRow, CalendarService } from './calendar-service.js';
import { eventTimeColumns, eventTimeOf, type EventInsert, type EventRow } from './event-mapper.js';
import type { EventStore } from './event-store.js';
import { shiftTo, type EventTime } from './event-time.js';
import { parseRecurrence, type RecurrenceSet } from './ical.js';
import type { InvitationSender } from './invitation-message.js';
import { isOccurrence, parseInstanceId } from './recurrence.js';

/** What the functions of the event service share, made once by `createEventService`. */
export interface EventState {
  db: CoreDeps['db'];
  clock: CoreDeps['clock'];
  newId: CoreDeps['newId'];
  logger: CoreDeps['logger'];
  grants: GrantService;
  calendars: CalendarService;
  /** Delivers iMIP mail; undefined: nothing is mailed. */
  invitations: InvitationSender | undefined;
  store: EventStore;
  /** Where each grant's calendars are; events of CalDAV calendars are written there after each change. */
  remote: RemoteCollections | undefined;
  /** The clock's time in unix seconds. */
  now: () => number;
}

export type StoredParticipant = EventRow['participants'][number];

/** Whether the grant organizes a stored event (events it made have it as organizer). */
export function organizedBy(grant: Pick<GrantRow, 'email'>, row: Pick<EventRow, 'organizer'>): boolean {
  return !row.organizer || row.organizer.email.toLowerCase() === grant.email.toLowerCase();
}

export function bad(field: string, message: string): AppError {
  return new AppError('invalid_request', `${field}: ${message}`, { field });
}

/** Parses recurrence lines of a request, or a 400 naming `recurrence`. */
export function readRecurrence(lines: readonly string[], when: EventTime): RecurrenceSet {
  const parsed = parseRecurrence(lines, when);
  if (!parsed.ok) throw bad('recurrence', parsed.error);
  return parsed.value;
}

/** Request participants merged with stored ones: answers are kept unless the request gives one. */
export function mergeParticipants(
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

export function readConferencing(input: CreateEventInput['conferencing']): EventInsert['conferencing'] | undefined {
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

/** Whether two event times are the same in every field. */
export function sameTime(a: EventTime, b: EventTime): boolean {
  return JSON.stringify(eventTimeColumns(a)) === JSON.stringify(eventTimeColumns(b));
}

/** Whether recurrence lines given in a request are the stored ones (clients often send them back unchanged). */
export function sameLines(given: readonly string[], stored: readonly string[] | null): boolean {
  return stored !== null && given.length === stored.length && given.every((line, index) => line === stored[index]);
}

/** An event located by id: a stored row, or a computed instance of a stored series. */
export interface Located {
  row: EventRow;
  instance?: { id: string; originalStart: number; when: EventTime };
}

/** The participants of an event other than the grant. */
export const others = (grant: GrantRow, participants: StoredParticipant[]): StoredParticipant[] =>
  participants.filter((participant) => participant.email.toLowerCase() !== grant.email.toLowerCase());

export async function context(
  state: EventState,
  principal: Principal,
  input: { grant_id: string; calendar_id: string },
) {
  const grant = await state.grants.require(principal, input.grant_id);
  const calendar = await state.calendars.resolve(grant, input.calendar_id);
  return { grant, calendar };
}

export async function locate(
  state: EventState,
  grant: GrantRow,
  calendar: CalendarRow,
  eventId: string,
): Promise<Located> {
  const row = await state.db.orm.query.events.findFirst({
    where: and(
      eq(tables.events.grantId, grant.id),
      eq(tables.events.calendarId, calendar.id),
      eq(tables.events.id, eventId),
    ),
  });
  if (row) return { row };
  const instance = parseInstanceId(eventId);
  if (instance) {
    const master = await state.db.orm.query.events.findFirst({
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
