/**
 * Calendar operations.
 */
import {
  CalendarRefInputSchema,
  CalendarSchema,
  CreateCalendarInputSchema,
  ListCalendarsInputSchema,
  UpdateCalendarInputSchema,
} from '../schemas/calendars.js';
import { DeletedSchema, pageOf } from '../schemas/common.js';
import { defineOperation } from './define-operation.js';

export const listCalendars = defineOperation({
  name: 'list_calendars',
  title: 'List calendars',
  description: 'Lists the calendars; the primary one (is_primary) gets invitations.',
  input: ListCalendarsInputSchema,
  output: pageOf(CalendarSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/calendars', envelope: 'list' },
  tool: true,
  agent: { omit: ['metadata_pair'] },
  run: (core, input, { principal }) => core.calendar.calendars.list(principal, input),
});

export const getCalendar = defineOperation({
  name: 'get_calendar',
  title: 'Get a calendar',
  description: 'Returns one calendar; calendar_id may be "primary".',
  input: CalendarRefInputSchema,
  output: CalendarSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/grants/:grant_id/calendars/:calendar_id' },
  tool: false,
  run: (core, input, { principal }) => core.calendar.calendars.find(principal, input),
});

export const createCalendar = defineOperation({
  name: 'create_calendar',
  title: 'Create a calendar',
  description:
    'Adds a calendar to a mailbox, besides its primary one. A mailbox may have a limited number of additional calendars (10 unless the service is configured otherwise); past that the call fails until one is deleted.',
  input: CreateCalendarInputSchema,
  output: CalendarSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/grants/:grant_id/calendars' },
  tool: false,
  run: (core, input, { principal }) => core.calendar.calendars.create(principal, input),
});

export const updateCalendar = defineOperation({
  name: 'update_calendar',
  title: 'Update a calendar',
  description:
    "Changes a calendar's name, description, location, time zone, colour, metadata or timers (notify_before_start_minutes, event_timers).",
  input: UpdateCalendarInputSchema,
  output: CalendarSchema,
  hints: { readOnly: false, idempotent: true },
  http: { method: 'PUT', path: '/grants/:grant_id/calendars/:calendar_id' },
  tool: false,
  run: (core, input, { principal }) => core.calendar.calendars.update(principal, input),
});

export const deleteCalendar = defineOperation({
  name: 'delete_calendar',
  title: 'Delete a calendar',
  description:
    "Deletes a calendar and all its events. The primary calendar can be deleted only when it is the mailbox's last calendar.",
  input: CalendarRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true },
  http: { method: 'DELETE', path: '/grants/:grant_id/calendars/:calendar_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.calendar.calendars.destroy(principal, input);
    return {};
  },
});
