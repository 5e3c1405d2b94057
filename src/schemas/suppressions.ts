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
