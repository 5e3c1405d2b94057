/**
 * @module calendar/contracts
 * The calendar area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { GrantRow, tables, Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { FreeBusyList, GetFreeBusyInput } from '../schemas/free-busy.js';
import type { Availability, GetAvailabilityInput } from '../schemas/availability.js';
import type { ConfirmedHold, ConfirmHoldInput, CreateHoldInput, Hold, HoldRefInput } from '../schemas/holds.js';
import type {
  Calendar,
  CalendarRefInput,
  CreateCalendarInput,
  ListCalendarsInput,
  UpdateCalendarInput,
} from '../schemas/calendars.js';
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

/** A stored calendar (`calendars`). */
export type CalendarRow = typeof tables.calendars.$inferSelect;
/** A stored event (`events`): a single event, a series master or one changed instance of a series. */
export type EventRow = typeof tables.events.$inferSelect;
/** The columns of a new event row. */
export type EventInsert = typeof tables.events.$inferInsert;

/** An incoming iMIP message: the envelope or From sender, and the iCalendar text of its `text/calendar` part. */
export interface InboundInvitation {
  /** Address the message came from (From header, lower-cased by the caller or here). */
  sender: string;
  ics: string;
}

/**
 * What happened to one event of an incoming message. `unreadable` (the only outcome then) means the iCalendar text
 * could not be read: it is not valid iCalendar, breaks a limit of ICAL_LIMITS, or its parse was stopped (it overran
 * its deadline or heap cap, or its thread crashed). Such an invitation should not be tried again. `ignored` is a
 * readable invitation that changes nothing (stale, forged, for an unknown event), with the reason.
 */
export interface InvitationOutcome {
  action: 'created' | 'updated' | 'cancelled' | 'reply_recorded' | 'ignored' | 'unreadable';
  /** The affected event (or instance) id. */
  eventId?: string;
  /** Why it was ignored, or why it is unreadable. */
  reason?: string;
}

/** One instance of an event in a window, as free/busy and availability read it. Times are unix seconds. */
export interface EventOccurrence {
  eventId: string;
  calendarId: string;
  start: number;
  end: number;
  busy: boolean;
  status: string;
  allDay: boolean;
}

/** What createAvailabilityService() returns (src/calendar/availability-service.ts). */
export interface AvailabilityService {
  /**
   * Busy blocks of each address in the window. Addresses that are not grants of the caller's application
   * get an inline error entry, as Nylas answers for addresses it cannot read.
   */
  freeBusy(principal: Principal, input: GetFreeBusyInput): Promise<FreeBusyList>;
  /** Bookable slots for the participants (all grants of the caller's application), per availability.ts. */
  find(principal: Principal, input: GetAvailabilityInput): Promise<Availability>;
}

/** Options of {@link EventTimerService.runDue}. */
export interface TimerRunOptions {
  /** Only this application's events, with a runner of its own (a test-mode application's clock). */
  applicationId?: string | undefined;
  /** Fire what fell due after this time (a test clock's previous time); default: where this runner stopped last. */
  since?: Date | undefined;
}

/** What createEventTimerService() returns (src/calendar/event-timers.ts): the calendar timers' due-runner. */
export interface EventTimerService {
  /**
   * Fires every `event.starting` and `event.ending` due since this runner's last run up to `now` (each once, across
   * runs, restarts and processes); how many it fired.
   */
  runDue(now: Date, options?: TimerRunOptions): Promise<number>;
}

/** What createHoldService() returns (src/calendar/hold-service.ts): tentative holds of candidate slots. */
export interface HoldService {
  /** Holds the slots for the organizer grant and the participants until the ttl passes. */
  create(principal: Principal, input: CreateHoldInput): Promise<Hold>;
  /** One hold (404 when the key does not reach its organizer grant); past its ttl it reads as expired. */
  find(principal: Principal, input: HoldRefInput): Promise<Hold>;
  /** Turns one slot of a live hold into an event with invitations; the hold's slots are freed. 409 when not live. */
  confirm(principal: Principal, input: ConfirmHoldInput): Promise<ConfirmedHold>;
  /** Frees a live hold's slots (idempotent for a released hold; 409 for a confirmed or expired one). */
  release(principal: Principal, input: HoldRefInput): Promise<void>;
  /**
   * Marks holds past their ttl expired, each with an `event.hold_expired` for the organizer; how many. Without an
   * application: those of production applications (the worker); with one: that test-mode application's, as of its
   * test clock.
   */
  expire(applicationId?: string): Promise<number>;
  /** The earliest expiry (unix seconds) of a live hold of a (test-mode) application, if any. */
  nextExpiry(applicationId: string): Promise<number | undefined>;
}

/** What createCalendarService() returns (src/calendar/calendar-service.ts). */
export interface CalendarService {
  /** A grant's calendar by id (`primary` accepted), or 404. */
  resolve: (grant: GrantRow, calendarId: string) => Promise<CalendarRow>;
  /** The grant's primary calendar (where invitations land), or undefined if it was deleted. */
  primaryOf(grantId: string): Promise<CalendarRow | undefined>;
  /** A page of the grant's calendars: the primary first, then the others oldest first. */
  list(principal: Principal, input: ListCalendarsInput): Promise<{ data: Calendar[]; next_cursor?: string }>;
  /** One calendar (`primary` accepted). */
  find(principal: Principal, input: CalendarRefInput): Promise<Calendar>;
  /**
   * Adds a calendar. A grant has its primary plus at most `config.maxCalendars[plan]` others, `plan` being its
   * application's (trial or production).
   */
  create(principal: Principal, input: CreateCalendarInput): Promise<Calendar>;
  /** Changes a calendar's name, description, location, time zone, colour or metadata. */
  update(principal: Principal, input: UpdateCalendarInput): Promise<Calendar>;
  /** Deletes a calendar and its events. The primary can go only when it is the grant's last calendar. */
  destroy(principal: Principal, input: CalendarRefInput): Promise<void>;
}

/** What createEventStore() returns (src/calendar/event-store.ts): the writes of event rows, with their outbox events. */
export interface EventStore {
  /** Inserts an event row. */
  insert(tx: Tx, grant: GrantRow, values: EventInsert): Promise<EventRow>;
  /** Changes an event row (`updatedAt` in the patch). */
  update(
    tx: Tx,
    grant: GrantRow,
    row: EventRow,
    patch: Partial<EventInsert> & { updatedAt: number },
  ): Promise<EventRow>;
  /** Deletes an event row, and a series master's overrides with it (one `event.deleted` for the event). */
  remove(tx: Tx, grant: GrantRow, row: EventRow, at: number): Promise<void>;
  /** The overrides stored for a series. */
  overridesOf(tx: Tx, grant: GrantRow, masterId: string): Promise<EventRow[]>;
}

/**
 * Where the sync of an account whose calendars are on a CalDAV server (src/dav/) writes what it finds there: one
 * calendar object (a UID's events) replaces what is stored under its UID; an object gone removes its events.
 */
export interface RemoteEventSink {
  /**
   * Stores the events of server objects (each one UID's events) in `calendarId`, in one transaction: a result per
   * object, `{ ok: false }` (nothing stored of it) for unreadable iCalendar. `within` runs once in the transaction,
   * after the writes, given the index and UID of each object stored (the sync records the objects there). `history`: the objects are the
   * calendar's past, brought by its first sync: new events record no `event.created`.
   */
  apply(
    grant: GrantRow,
    calendarId: string,
    objects: string[],
    within?: (tx: Tx, stored: { index: number; uid: string }[]) => Promise<void>,
    options?: { history?: boolean },
  ): Promise<({ ok: true; uid: string } | { ok: false; error: string })[]>;
  /** Removes the events of `uid` (with `event.deleted`). */
  remove(grant: GrantRow, uid: string): Promise<void>;
}

/** What createEventService() returns (src/calendar/event-service.ts). */
export interface EventService {
  /**
   * A page of a calendar's events overlapping the window (`start` default now, `end` default start + 30
   * days; not applied with `metadata_pair`). Series appear once, or per instance with `expand_recurring`.
   */
  list(principal: Principal, input: ListEventsInput): Promise<{ data: Event[]; next_cursor?: string }>;
  /** One event, or one instance of a series by its instance id. */
  find(principal: Principal, input: EventRefInput): Promise<Event>;
  /** Creates an event organized by the grant; participants get an iMIP REQUEST unless notify_participants is false. */
  create(principal: Principal, input: CreateEventInput): Promise<Event>;
  /**
   * Changes an event (top-level fields replace; participants keep their answers). An instance id changes
   * that one instance (stored as an override). Invitations from others accept only local fields.
   */
  update(principal: Principal, input: UpdateEventInput): Promise<Event>;
  /**
   * Deletes an event (a series with its changed instances). An instance id removes that one instance
   * (an EXDATE on the series). Participants of an event the grant organizes get an iMIP CANCEL.
   */
  destroy(principal: Principal, input: DeleteEventInput): Promise<void>;
  /**
   * Answers an invitation: sets the grant's participant status and sends an iMIP REPLY to the organizer.
   * Organizers cannot RSVP to their own events (400).
   */
  sendRsvp(principal: Principal, input: SendRsvpInput): Promise<SendRsvpResult>;
  /** The calendar as an iCalendar feed (METHOD:PUBLISH): every event, series with their EXDATEs and changed instances. */
  exportCalendar(
    principal: Principal,
    input: { grant_id: string; calendar_id: string },
  ): Promise<{ calendar: CalendarRow; ics: string }>;
  /**
   * Every instance of the grant's events overlapping `[start, end)` (series expanded, cancelled left out),
   * for free/busy and availability. `calendarIds` limits the calendars (default: all of the grant's).
   */
  occurrences(
    grantId: string,
    window: { start: number; end: number },
    calendarIds?: string[],
  ): Promise<EventOccurrence[]>;
  /**
   * Applies an incoming iMIP message (its `text/calendar` part) to the grant's calendar: REQUEST creates
   * or updates the event on the primary calendar, CANCEL cancels it, REPLY records an attendee's answer
   * on an event the grant organizes. Unreadable or hostile iCalendar changes nothing. Never throws for bad input.
   * The text is parsed off the event loop under a deadline and a heap cap; when that parse is stopped, the only
   * outcome is `{ action: 'unreadable', reason }` (see InvitationOutcome).
   */
  applyInvitation: (grant: GrantRow, invitation: InboundInvitation) => Promise<InvitationOutcome[]>;
  /** Where the sync of CalDAV calendars writes the server's objects. */
  readonly remote: RemoteEventSink;
}
