/**
 * Event operations (the Nylas v3 events API, RSVP included).
 */
import { DeletedSchema, pageOf } from '../schemas/common.js';
import {
  CreateEventInputSchema,
  DeleteEventInputSchema,
  EventRefInputSchema,
  EventSchema,
  ListEventsInputSchema,
  ListImportEventsInputSchema,
  SendRsvpInputSchema,
  SendRsvpResultSchema,
  UpdateEventInputSchema,
} from '../schemas/events.js';
import { fieldText } from './agent.js';
import { defineOperation } from './define-operation.js';

export const listEvents = defineOperation({
  name: 'list_events',
  title: 'List events',
  description:
    'Lists the events of one calendar (calendar_id is required; "primary" works) that overlap a time window: start defaults to now and end to start + 30 days (unix seconds). ' +
    'Recurring events appear once (with their recurrence) unless expand_recurring is true, which returns each occurrence in the window as its own event ' +
    '(id <series id>_<YYYYMMDDTHHMMSSZ>, master_event_id set; at most 2,000 occurrences per series; the window then spans at most 366 days, so list a longer period in several windows). ' +
    'Cancelled events are hidden unless show_cancelled is true. ' +
    'Filter by title, location, description (contains), ical_uid, attendees, busy, updated_after/updated_before or metadata_pair. Pages hold up to 200 events; pass next_cursor as page_token.',
  input: ListEventsInputSchema,
  output: pageOf(EventSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/events', envelope: 'list' },
  tool: true,
  run: (core, input, { principal }) => core.calendar.events.list(principal, input),
});

export const listImportEvents = defineOperation({
  name: 'list_import_events',
  title: 'List events to import',
  description:
    'Lists the events of one calendar that overlap a time window (start defaults to now, end to start + 30 days; unix seconds), for importing and syncing: ' +
    'recurring events once each with their recurrence, never expanded, cancelled ones hidden. Pages hold up to 200 events; pass next_cursor as page_token.',
  input: ListImportEventsInputSchema,
  output: pageOf(EventSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/events/import', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.calendar.events.list(principal, { ...input, expand_recurring: false }),
});

export const getEvent = defineOperation({
  name: 'get_event',
  title: 'Get an event',
  description:
    'Returns one event, or one occurrence of a recurring event by its instance id, with its participants and their answers.',
  input: EventRefInputSchema,
  output: EventSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/events/:event_id' },
  tool: true,
  run: (core, input, { principal }) => core.calendar.events.find(principal, input),
});

export const createEvent = defineOperation({
  name: 'create_event',
  title: 'Create an event',
  description:
    "Creates an event on a calendar, organized by this mailbox. `when` is {start_time, end_time} in unix seconds with optional IANA start_timezone/end_timezone (default: the calendar's zone), " +
    'or {date} / {start_date, end_date} for all-day events. Participants are emailed a standard iCalendar invitation they can accept in any calendar app ' +
    '(set notify_participants false to skip); their answers appear in participants[].status. recurrence takes RRULE/EXDATE lines (DAILY or coarser, HOURLY at most). ' +
    'Times lie between 1970 and the end of 2199 (dates from 1900); occurrences of a series are computed up to 100 years after its start. ' +
    'Check free time first with get_free_busy or find_availability.',
  input: CreateEventInputSchema,
  output: EventSchema,
  hints: { readOnly: false, openWorld: true },
  http: { method: 'POST', path: '/grants/:grant_id/events' },
  tool: true,
  agent: {
    headline: (event) =>
      `Created event ${fieldText(event.id ?? '')}${event.calendar_id ? ` in calendar ${fieldText(event.calendar_id)}` : ''}`,
  },
  run: (core, input, { principal }) => core.calendar.events.create(principal, input),
});

export const updateEvent = defineOperation({
  name: 'update_event',
  title: 'Update an event',
  description:
    'Changes an event you organize: given fields replace the old ones (participants keep their answers). An instance id changes only that occurrence. ' +
    'Participants are emailed the update unless notify_participants is false. On an invitation from someone else only busy, reminders, visibility and metadata can be changed; answer it with send_rsvp.',
  input: UpdateEventInputSchema,
  output: EventSchema,
  hints: { readOnly: false, idempotent: true, openWorld: true },
  http: { method: 'PUT', path: '/grants/:grant_id/events/:event_id' },
  tool: true,
  agent: {
    headline: (event) =>
      `Updated event ${fieldText(event.id ?? '')}${event.calendar_id ? ` in calendar ${fieldText(event.calendar_id)}` : ''}`,
  },
  run: (core, input, { principal }) => core.calendar.events.update(principal, input),
});

export const deleteEvent = defineOperation({
  name: 'delete_event',
  title: 'Delete an event',
  description:
    'Deletes an event (a recurring series with all its occurrences), or one occurrence when given an instance id. Participants of an event you organize are emailed a cancellation unless notify_participants is false.',
  input: DeleteEventInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true, openWorld: true },
  http: { method: 'DELETE', path: '/grants/:grant_id/events/:event_id', envelope: 'empty' },
  tool: true,
  agent: { headline: (_result, input) => `Deleted event ${String(input.event_id)}` },
  run: async (core, input, { principal }) => {
    await core.calendar.events.destroy(principal, input);
    return {};
  },
});

export const sendRsvp = defineOperation({
  name: 'send_rsvp',
  title: 'Answer an invitation',
  description:
    'Answers an invitation you received: status yes, no or maybe. Your answer is saved on the event and emailed to the organizer as an iCalendar reply. ' +
    'Not for events you organize (400). For a recurring invitation pass the series id (master_event_id), not an occurrence id. send_ics_error is set when the answer was saved but the email could not be sent.',
  input: SendRsvpInputSchema,
  output: SendRsvpResultSchema,
  hints: { readOnly: false, idempotent: true, openWorld: true },
  http: { method: 'POST', path: '/grants/:grant_id/events/:event_id/send-rsvp' },
  tool: true,
  agent: {
    headline: (answer, input) =>
      `Answered ${String(input.status)} to event ${String(input.event_id)}${answer.send_ics_error ? '; the answer was saved but its email could not be sent' : ''}`,
  },
  run: (core, input, { principal }) => core.calendar.events.sendRsvp(principal, input),
});
