/**
 * The overview (extension, not in Nylas; issue 39): what the dashboard's first page shows, in one read through
 * `GET /v3/overview`. Every figure is a count in the database (never the length of a listed page) over what the
 * calling key reaches: a key scoped to grants counts those grants only, and a figure its permissions or scope do not
 * cover is null.
 */
import { z } from 'zod';
import { IanaTimeZoneSchema } from './calendars.js';
import { UnixSecondsSchema } from './common.js';

export const GetOverviewInputSchema = z
  .strictObject({
    time_zone: IanaTimeZoneSchema.optional().describe(
      'IANA time zone whose calendar day is "today" for the mail counts (default UTC)',
    ),
  })
  .meta({ id: 'GetOverviewInput' });
export type GetOverviewInput = z.infer<typeof GetOverviewInputSchema>;

const Count = z.number().int().min(0);

export const OverviewSchema = z
  .object({
    time_zone: z.string().describe('The time zone of the day counted'),
    day_start: UnixSecondsSchema.describe('Start of today in that time zone'),
    day_end: UnixSecondsSchema.describe('Start of tomorrow in that time zone'),
    scoped: z.boolean().describe('True when the key reaches some grants only: every count is of those grants'),
    grants: z
      .object({ total: Count.describe('Grants'), suspended: Count.describe('Of them, suspended') })
      .describe('The grants the key reaches'),
    mail_today: z
      .object({
        received: Count.describe('Messages received today (not sent copies or drafts)'),
        sent: Count.describe('Sends accepted today (messages, invitations, transactional sends)'),
      })
      .nullable()
      .describe('Mail in and out today; null without mail.read'),
    queues: z
      .object({
        outbound: z
          .object({
            queued: Count.describe('Recipients not attempted yet'),
            deferred: Count.describe('Recipients waiting for a retry'),
          })
          .nullable()
          .describe('The outbound queue: recipients still owed; null without mail.read'),
        scheduled_sends: Count.nullable().describe('Scheduled sends not sent yet; null without mail.read'),
        webhook_deliveries: z
          .object({
            pending: Count.describe('Queued or retrying'),
            failed: Count.describe('Given up (kept 7 days)'),
          })
          .nullable()
          .describe("Notifications owed to the application's webhooks; null without webhooks.manage or when scoped"),
        jobs: z
          .object({
            running: Count.describe('Leased by a worker'),
            due: Count.describe('Due, waiting for a worker'),
            later: Count.describe('Due later (a retry or a scheduled time)'),
            dead: Count.describe('Given up (kept 7 days)'),
          })
          .nullable()
          .describe(
            'Background jobs of what the key reaches (deliveries, scheduled sends, webhooks, …); null without admin',
          ),
      })
      .describe('Queue depths'),
    webhooks: z
      .object({
        total: Count,
        active: Count,
        paused: Count,
        failing: Count.describe('Failing: retried, not given up'),
        failed: Count.describe('Failed: deliveries stopped'),
      })
      .nullable()
      .describe('Webhooks by health; null without webhooks.manage or when scoped'),
    domains: z
      .object({ total: Count, paused: Count.describe('Sending paused (bounces or complaints)') })
      .nullable()
      .describe('Domains; null without admin or when scoped'),
    approvals: z
      .object({ pending: Count.describe('Held sends waiting for a decision') })
      .nullable()
      .describe('Approvals; null without approvals.decide'),
  })
  .meta({ id: 'Overview' });
export type Overview = z.infer<typeof OverviewSchema>;
