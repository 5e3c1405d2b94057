/**
 * Tentative holds (an extension, issue 40 item 5): hold candidate slots for several participants, then confirm one
 * as an event with invitations, release them, or let them expire. HTTP-only: the MCP and AI SDK tool manifest is at
 * its size budget (test/tools/budgets.test.ts).
 */
import { DeletedSchema } from '../schemas/common.js';
import {
  ConfirmedHoldSchema,
  ConfirmHoldInputSchema,
  CreateHoldInputSchema,
  HoldRefInputSchema,
  HoldSchema,
  MAX_HOLD_PARTICIPANTS,
  MAX_HOLD_SLOTS,
} from '../schemas/holds.js';
import { defineOperation } from './define-operation.js';

export const createHold = defineOperation({
  name: 'create_hold',
  title: 'Hold candidate slots',
  description: `Holds up to ${MAX_HOLD_SLOTS} candidate slots for the organizer grant and up to ${MAX_HOLD_PARTICIPANTS} participants until ttl_seconds pass: free/busy and find_availability count them as busy. Then confirm_hold with the chosen slot, or release_hold.`,
  input: CreateHoldInputSchema,
  output: HoldSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/calendars/holds' },
  tool: false,
  run: (core, input, { principal }) => core.calendar.holds.create(principal, input),
});

export const getHold = defineOperation({
  name: 'get_hold',
  title: 'Get a hold',
  description:
    'Returns a tentative hold: its slots, participants, status (held, confirmed, released, expired) and expiry.',
  input: HoldRefInputSchema,
  output: HoldSchema,
  hints: { readOnly: true, idempotent: true },
  http: { method: 'GET', path: '/calendars/holds/:hold_id' },
  tool: false,
  run: (core, input, { principal }) => core.calendar.holds.find(principal, input),
});

export const confirmHold = defineOperation({
  name: 'confirm_hold',
  title: 'Confirm a hold',
  description:
    "Turns one slot of a live hold into an event on the organizer's calendar; the participants get invitations and the hold's slots are freed.",
  input: ConfirmHoldInputSchema,
  output: ConfirmedHoldSchema,
  hints: { readOnly: false, openWorld: true },
  http: { method: 'POST', path: '/calendars/holds/:hold_id/confirm' },
  tool: false,
  run: (core, input, { principal }) => core.calendar.holds.confirm(principal, input),
});

export const releaseHold = defineOperation({
  name: 'release_hold',
  title: 'Release a hold',
  description: 'Releases a live hold: its slots are free again in free/busy and availability.',
  input: HoldRefInputSchema,
  output: DeletedSchema,
  hints: { readOnly: false, destructive: true, idempotent: true },
  http: { method: 'DELETE', path: '/calendars/holds/:hold_id', envelope: 'empty' },
  tool: false,
  run: async (core, input, { principal }) => {
    await core.calendar.holds.release(principal, input);
    return {};
  },
});
