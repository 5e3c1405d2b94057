/**
 * Free/busy and availability operations (read-only scheduling questions over hosted calendars).
 */
import {
  AvailabilitySchema,
  GetAvailabilityInputSchema,
  MAX_AVAILABILITY_WINDOW_DAYS,
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
  description: `Busy blocks of up to ${MAX_FREE_BUSY_EMAILS} Agent Account addresses (≤ ${MAX_FREE_BUSY_WINDOW_DAYS} days). For a meeting time: find_availability.`,
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
  description: `Meeting slots of duration_minutes in participants' open hours between start_time and end_time (≤ ${MAX_AVAILABILITY_WINDOW_DAYS} days). Then create_event.`,
  input: GetAvailabilityInputSchema,
  output: AvailabilitySchema,
  hints: { readOnly: true, idempotent: true },
  http: { method: 'POST', path: '/calendars/availability' },
  tool: true,
  agent: { omit: ['round_to', 'round_to_30_minutes'] },
  run: (core, input, { principal }) => core.calendar.availability.find(principal, input),
});
