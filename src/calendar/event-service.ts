/**
 * @module calendar/event-service
 * Events in the Nylas model: create, list (with recurring series expanded into instances on request),
 * find, update, delete, RSVP, and the calendar's iCalendar feed. Every change writes its outbox event in
 * the same transaction; invitations, updates, cancellations and replies are composed as iMIP messages and
 * handed to the {@link InvitationSender} after the commit.
 *
 * The service is plain functions over a small state made here: its reads (./event-reads.ts), its writes
 * (./event-writes.ts), its mail (./event-imip.ts, and ./itip-inbound.ts for invitations received), what they share
 * (./event-state.ts) and the reads and writes of rows (./event-store.ts).
 */
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { GrantService } from '../grants/contracts.js';
import type { RemoteCollections } from '../ports/index.js';
import { sharedCalendarParser } from './ical-bounded.js';
import { createRemoteEventSink } from './event-remote.js';
import type {
  CreateEventInput,
  DeleteEventInput,
  EventRefInput,
  ListEventsInput,
  SendRsvpInput,
  UpdateEventInput,
} from '../schemas/events.js';
import type { CalendarService } from './calendar-service.js';
import type { EventService } from './contracts.js';
import { createEventStore } from './event-store.js';
import type { CalendarParser } from './ical-bounded.js';
import type { InvitationSender } from './invitation-message.js';
import { createInvitationInbox } from './itip-inbound.js';
import type { EventState } from './event-state.js';
import { exportCalendar, findEvent, listEvents, occurrences } from './event-reads.js';
import { createEvent, destroyEvent, updateEvent } from './event-writes.js';
import { sendRsvp } from './event-imip.js';

export { organizedBy } from './event-state.js';

/** Options of {@link createEventService}. */
export interface EventServiceOptions {
  /** Parses incoming invitations (default: the process's shared bounded parser, ical-bounded.ts). */
  calendarParser?: CalendarParser;
  /** Where each grant's calendars are (default: ours for every grant). */
  remote?: RemoteCollections;
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
  const store = createEventStore(deps);
  const state: EventState = {
    db,
    clock,
    newId,
    logger,
    grants,
    calendars,
    invitations,
    store,
    remote: options.remote,
    now: () => unixSeconds(clock.now()),
  };
  const inbox = createInvitationInbox(deps, calendars, store, options.calendarParser);
  const parser = options.calendarParser ?? sharedCalendarParser();

  return {
    /**
     * A page of a calendar's events overlapping the window (`start` default now, `end` default start + 30
     * days; not applied with `metadata_pair`). Series appear once, or per instance with `expand_recurring`.
     */
    list: (principal: Principal, input: ListEventsInput) => listEvents(state, principal, input),
    /** One event, or one instance of a series by its instance id. */
    find: (principal: Principal, input: EventRefInput) => findEvent(state, principal, input),
    /** Creates an event organized by the grant; participants get an iMIP REQUEST unless notify_participants is false. */
    create: (principal: Principal, input: CreateEventInput) => createEvent(state, principal, input),
    /**
     * Changes an event (top-level fields replace; participants keep their answers). An instance id changes
     * that one instance (stored as an override). Invitations from others accept only local fields.
     */
    update: (principal: Principal, input: UpdateEventInput) => updateEvent(state, principal, input),
    /**
     * Deletes an event (a series with its changed instances). An instance id removes that one instance
     * (an EXDATE on the series). Participants of an event the grant organizes get an iMIP CANCEL.
     */
    destroy: (principal: Principal, input: DeleteEventInput) => destroyEvent(state, principal, input),
    /**
     * Answers an invitation: sets the grant's participant status and sends an iMIP REPLY to the organizer.
     * Organizers cannot RSVP to their own events (400).
     */
    sendRsvp: (principal: Principal, input: SendRsvpInput) => sendRsvp(state, principal, input),
    /** The calendar as an iCalendar feed (METHOD:PUBLISH): every event, series with their EXDATEs and changed instances. */
    exportCalendar: (principal: Principal, input: { grant_id: string; calendar_id: string }) =>
      exportCalendar(state, principal, input),
    /**
     * Every instance of the grant's events overlapping `[start, end)` (series expanded, cancelled left out),
     * for free/busy and availability. `calendarIds` limits the calendars (default: all of the grant's).
     */
    occurrences: (grantId: string, window: { start: number; end: number }, calendarIds?: string[]) =>
      occurrences(state, grantId, window, calendarIds),
    /**
     * Applies an incoming iMIP message (its `text/calendar` part) to the grant's calendar: REQUEST creates
     * or updates the event on the primary calendar, CANCEL cancels it, REPLY records an attendee's answer
     * on an event the grant organizes. Unreadable or hostile iCalendar changes nothing. Never throws for bad input.
     * The text is parsed off the event loop under a deadline and a heap cap; when that parse is stopped, the only
     * outcome is `{ action: 'unreadable', reason }` (see InvitationOutcome).
     */
    applyInvitation: inbox.apply,
    remote: createRemoteEventSink(state, parser),
  };
}

export type { EventService } from './contracts.js';
