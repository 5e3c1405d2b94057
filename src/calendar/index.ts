/**
 * @module calendar
 * The front door of src/calendar/: what other areas, the operations and the faces use of it.
 */
export { createAvailabilityService, type AvailabilityService } from './availability-service.js';
export { createCalendarService, type CalendarService } from './calendar-service.js';
export { createEventService, type EventService } from './event-service.js';
export { createCalendarParser, type CalendarParser } from './ical-bounded.js';
export type { InvitationSender, OutgoingInvitation } from './invitation-message.js';
export type { InboundInvitation, InvitationOutcome } from './itip-inbound.js';
