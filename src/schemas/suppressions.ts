/**
 * The suppression list (extension, not in Nylas): addresses an application does not send to, because they
 * hard-bounced, complained, or were added by the application.
 */
import { z } from 'zod';
import { LimitSchema, PageTokenSchema, UnixSecondsSchema } from './common.js';

/** An address as the list keeps it. */
const SuppressedEmailSchema = z
  .string()
  .trim()
  .min(3)
  .max(320)
  .regex(/^[^\s@]+@[^\s@]+$/, 'an email address such as person@example.com');

export const SuppressionSchema = z
  .object({
    object: z.literal('suppression').describe('Always suppression'),
    email: z.string().describe('The suppressed address, lower-cased'),
    reason: z
      .enum(['hard_bounce', 'complaint', 'manual'])
      .describe(
        'hard_bounce: a permanent bounce said the address does not work; complaint: the recipient reported the mail as spam; manual: added through the API',
      ),
    report_id: z.string().optional().describe('The bounce or complaint report that put it here'),
    created_at: UnixSecondsSchema.describe('When it was added'),
  })
  .meta({ id: 'Suppression' });
export type Suppression = z.infer<typeof SuppressionSchema>;

export const ListSuppressionsInputSchema = z
  .object({
    limit: LimitSchema,
    page_token: PageTokenSchema,
    email: SuppressedEmailSchema.optional().describe('Only this address (an empty list when it is not suppressed)'),
  })
  .meta({ id: 'ListSuppressionsInput' });
export type ListSuppressionsInput = z.infer<typeof ListSuppressionsInputSchema>;

export const AddSuppressionInputSchema = z
  .object({ email: SuppressedEmailSchema.describe('The address to stop sending to') })
  .meta({ id: 'AddSuppressionInput' });
export type AddSuppressionInput = z.infer<typeof AddSuppressionInputSchema>;

export const SuppressionRefInputSchema = z
  .object({ email: SuppressedEmailSchema.describe('The suppressed address (URL-encoded in the path)') })
  .meta({ id: 'SuppressionRefInput' });
export type SuppressionRefInput = z.infer<typeof SuppressionRefInputSchema>;

/** A bounce or complaint recorded against a message this application sent. */
export const DeliveryReportSchema = z
  .object({
    id: z.string().describe('Report id'),
    object: z.literal('delivery_report'),
    kind: z.enum(['bounce', 'complaint']).describe('A bounce (a failed delivery) or a complaint (marked as spam)'),
    bounce_type: z.enum(['hard', 'soft']).nullable().describe('Bounces: hard (permanent) or soft; null for complaints'),
    recipient: z.string().describe('The recipient it is about, lower-cased'),
    grant_id: z.string().nullable().describe('The sending grant; null for sends from a domain'),
    message_id: z.string().nullable().describe("The sender's copy of the message, when one was stored"),
    status_code: z.string().nullable().describe('Enhanced status code (5.1.1), when known'),
    smtp_code: z.number().int().nullable().describe('SMTP reply code (550), when known'),
    reason: z.string().describe('The diagnostic text (bounces) or the feedback type (complaints)'),
    source: z
      .enum(['dsn', 'smtp', 'timeout', 'arf'])
      .describe('A DSN, the SMTP reply during delivery, the queue giving up, or an ARF complaint'),
    at: UnixSecondsSchema.describe('When it was recorded'),
  })
  .meta({ id: 'DeliveryReport' });
export type DeliveryReport = z.infer<typeof DeliveryReportSchema>;

export const ListDeliveryReportsInputSchema = z
  .object({
    kind: z.enum(['bounce', 'complaint']).optional().describe('Only bounces or only complaints (default both)'),
    limit: LimitSchema,
    page_token: PageTokenSchema,
  })
  .meta({ id: 'ListDeliveryReportsInput' });
export type ListDeliveryReportsInput = z.infer<typeof ListDeliveryReportsInputSchema>;
