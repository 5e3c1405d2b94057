/**
 * @module schemas/test-clock
 * The test clock on the wire (an extension, issue 40 item 8): `GET /v3/test-clock` reads a test-mode application's
 * virtual time; `POST /v3/test-clock/advance` moves it forward (`{seconds}` or `{to}`) and runs what fell due.
 */
import { z } from 'zod';
import { UnixSecondsSchema } from './common.js';

/** Longest single advance: a year (a test suite runs a week in a second; nothing is scheduled further ahead). */
export const MAX_ADVANCE_SECONDS = 366 * 86_400;

export const GetTestClockInputSchema = z.object({}).meta({ id: 'GetTestClockInput' });

export const AdvanceTestClockInputSchema = z
  .object({
    seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_ADVANCE_SECONDS)
      .optional()
      .describe('Move the clock this many seconds forward (give seconds or to)'),
    to: z
      .union([UnixSecondsSchema, z.iso.datetime({ offset: true })])
      .optional()
      .describe('Move the clock to this time: unix seconds or RFC 3339; never before the clock’s time (400)'),
  })
  .meta({ id: 'AdvanceTestClockInput' });
export type AdvanceTestClockInput = z.infer<typeof AdvanceTestClockInputSchema>;

export const TestClockSchema = z
  .object({
    object: z.literal('test_clock'),
    application_id: z.string().describe('The test-mode application'),
    test_mode: z.literal(true).describe('Always true: only a test-mode application has a test clock'),
    now: UnixSecondsSchema.describe('The virtual time, unix seconds'),
    now_iso: z.string().describe('The virtual time, RFC 3339 (milliseconds)'),
  })
  .meta({ id: 'TestClock' });
export type TestClock = z.infer<typeof TestClockSchema>;

export const AdvancedTestClockSchema = TestClockSchema.extend({
  previous: UnixSecondsSchema.describe('The virtual time before this advance, unix seconds'),
  ran: z
    .record(z.string(), z.number().int())
    .describe('What fell due and ran, by kind: scheduled_sends, follow_ups, holds_expired, retention, …'),
}).meta({ id: 'AdvancedTestClock' });
export type AdvancedTestClock = z.infer<typeof AdvancedTestClockSchema>;
