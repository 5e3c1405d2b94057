/**
 * @module calendar
 * The front door of src/calendar/: what other areas, the operations and the faces use of it.
 */
export type {
  AvailabilityService,
  CalendarRow,
  CalendarService,
  EventInsert,
  EventOccurrence,
  EventRow,
  EventService,
  EventStore,
  EventTimerService,
  HoldService,
  InboundInvitation,
  InvitationOutcome,
  RemoteEventSink,
  TimerRunOptions,
} from './contracts.js';
export { noCalendarsError } from './calendar-service.js';
export { createAvailabilityService } from './availability-service.js';
export { createCalendarService } from './calendar-service.js';
export { createEventService } from './event-service.js';
export { createHoldService } from './hold-service.js';
export { createEventTimerService, DEFAULT_NOTIFY_BEFORE_START_MINUTES } from './event-timers.js';
export { createCalendarParser, type CalendarParser } from './ical-bounded.js';
export type { InvitationSender, OutgoingInvitation } from './invitation-message.js';
