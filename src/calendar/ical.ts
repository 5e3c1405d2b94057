/**
 * @module calendar/ical
 * The iCalendar codec (RFC 5545) and iTIP/iMIP payloads (RFC 5546 / RFC 6047): build REQUEST / CANCEL / REPLY /
 * PUBLISH text from events, parse incoming iCalendar into event-shaped objects (a result union, never a throw),
 * validate and expand recurrence rules (RRULE, RDATE, EXDATE) with hard caps so hostile rules cannot hang the
 * process. Pure functions.
 *
 * This module is the codec's one entry: it re-exports the modules that do the work, which (with ical-bounded.ts
 * and ical-worker) are the only ones that import ical.js:
 * - ical-values.ts: the event shapes, the limits on untrusted input, value conversions;
 * - ical-time-zones.ts: VTIMEZONEs written from the tz database, and TZIDs and VTIMEZONEs read;
 * - ical-rules.ts: recurrence rules checked and parsed;
 * - ical-expand.ts: recurrence expansion, bounded;
 * - ical-build.ts and ical-parse.ts: writing and reading iCalendar text.
 */
export {
  ICAL_LIMITS,
  PRODUCT_ID,
  conferencingProviderOf,
  formatUtcStamp,
  partstatOf,
  statusOfPartstat,
  type CalendarEventData,
  type Conferencing,
  type EmailName,
  type EventStatus,
  type ItipMethod,
  type ParsedCalendar,
  type ParsedEvent,
  type Participant,
  type ParticipantStatus,
  type Reminders,
  type Result,
  type Visibility,
} from './ical-values.js';
export { buildVtimezone } from './ical-time-zones.js';
export {
  checkRecurrence,
  parseRecurrence,
  recurrenceDatesOf,
  type RecurrenceDate,
  type RecurrenceSet,
} from './ical-rules.js';
export {
  EXPANSION_LIMITS,
  REQUEST_EXPANSION_LIMITS,
  SERIES_HORIZON_YEARS,
  expandOccurrences,
  expandOccurrencesByIterator,
  expandPrepared,
  prepareExpansion,
  requestExpansionBudget,
  seriesEnd,
  type Expansion,
  type ExpansionBudget,
  type ExpansionLimits,
  type PreparedExpansion,
} from './ical-expand.js';
export {
  buildCalendarFeed,
  buildCalendarObject,
  buildItipCancel,
  buildItipReply,
  buildItipRequest,
  itipContentType,
} from './ical-build.js';
export { parseICalendar } from './ical-parse.js';
