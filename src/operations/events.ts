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
  description: 'Events of a calendar in a window (default: the next 30 days); a series once unless expand_recurring.',
  input: ListEventsInputSchema,
  output: pageOf(EventSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/events', envelope: 'list' },
  tool: true,
  agent: { omit: ['description', 'ical_uid', 'master_event_id', 'metadata_pair', 'updated_after', 'updated_before'] },
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
  description: 'One event, or one occurrence of a series by its id, with participants and their answers.',
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
    'Creates an event and emails invitations; answers show in participants[].status. A time: find_availability.',
  input: CreateEventInputSchema,
  output: EventSchema,
  hints: { readOnly: false, openWorld: true },
  http: { method: 'POST', path: '/grants/:grant_id/events' },
  tool: true,
  agent: {
    omit: ['resources', 'reminders', 'visibility', 'status', 'read_only', 'hide_participants', 'capacity', 'metadata'],
    headline: (event) =>
      `Created event ${fieldText(event.id ?? '')}${event.calendar_id ? ` in calendar ${fieldText(event.calendar_id)}` : ''}`,
  },
  run: (core, input, { principal }) => core.calendar.events.create(principal, input),
});

export const updateEvent = defineOperation({
  name: 'update_event',
  title: 'Update an event',
  description:
    'Changes an event you organize (given fields replace) and emails participants. To answer an invitation: send_rsvp.',
  input: UpdateEventInputSchema,
  output: EventSchema,
  hints: { readOnly: false, idempotent: true, openWorld: true },
  http: { method: 'PUT', path: '/grants/:grant_id/events/:event_id' },
  tool: true,
  agent: {
    omit: ['resources', 'reminders', 'visibility', 'status', 'read_only', 'hide_participants', 'capacity', 'metadata'],
    headline: (event) =>
      `Updated event ${fieldText(event.id ?? '')}${event.calendar_id ? ` in calendar ${fieldText(event.calendar_id)}` : ''}`,
  },
  run: (core, input, { principal }) => core.calendar.events.update(principal, input),
});

export const deleteEvent = defineOperation({
  name: 'delete_event',
  title: 'Delete an event',
  description:
    'Deletes an event (a series, or one occurrence by id); emails a cancellation unless notify_participants is false.',
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
    'Answers an invitation (yes, no or maybe) and emails the organizer. For a series, pass its master_event_id.',
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
