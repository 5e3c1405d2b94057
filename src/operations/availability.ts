/**
 * Free/busy and availability operations (read-only scheduling questions over hosted calendars).
 */
import {
  AvailabilitySchema,
  GetAvailabilityInputSchema,
  MAX_AVAILABILITY_WINDOW_DAYS,
  MAX_EXPLANATIONS,
} from '../schemas/availability.js';
import {
  FreeBusyListSchema,
  GetFreeBusyInputSchema,
  MAX_FREE_BUSY_EMAILS,
  MAX_FREE_BUSY_WINDOW_DAYS,
} from '../schemas/free-busy.js';
import { defineOperation } from './define-operation.js';

export const getFreeBusy = defineOperation({
  name: 'get_free_busy',
  title: 'Get free/busy',
  description:
    `Returns the busy blocks of up to ${MAX_FREE_BUSY_EMAILS} addresses between start_time and end_time (unix seconds, at most ${MAX_FREE_BUSY_WINDOW_DAYS} days): ` +
    'busy, non-cancelled events on all their calendars, recurring events expanded, overlapping events merged, all-day events covering their local day. ' +
    'Each address must be an Agent Account of this application; others come back as an entry with object "error". ' +
    'Free time is the gaps between blocks. To find a meeting time for several people, use find_availability instead.',
  input: GetFreeBusyInputSchema,
  output: FreeBusyListSchema,
  hints: { readOnly: true, idempotent: true },
  http: { method: 'POST', path: '/grants/:grant_id/calendars/free-busy', envelope: 'list' },
  tool: true,
  run: (core, input, { principal }) => core.calendar.availability.freeBusy(principal, input),
});

export const findAvailability = defineOperation({
  name: 'find_availability',
  title: 'Find availability',
  description:
    `Finds meeting slots of duration_minutes between start_time and end_time (unix seconds, at most ${MAX_AVAILABILITY_WINDOW_DAYS} days) for participants who are all Agent Accounts of this application. ` +
    'Open hours (per participant, or availability_rules.default_open_hours) follow each time zone, including daylight-saving changes; buffers keep time free around existing meetings. ' +
    'availability_method collective (default) needs everyone free; max-availability and max-fairness are round-robin (one participant; order says who is next). ' +
    'Candidate starts step interval_minutes (default duration_minutes) from the start of each stretch of open time, rounded up to round_to. ' +
    `Set explain to true to learn why each other candidate start was excluded (busy event ids, buffer, outside open hours, past the window; at most ${MAX_EXPLANATIONS}). ` +
    'Next: create the event at a returned slot for the participants in its emails.',
  input: GetAvailabilityInputSchema,
  output: AvailabilitySchema,
  hints: { readOnly: true, idempotent: true },
  http: { method: 'POST', path: '/calendars/availability' },
  tool: true,
  run: (core, input, { principal }) => core.calendar.availability.find(principal, input),
});
