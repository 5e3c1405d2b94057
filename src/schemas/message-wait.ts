/**
 * Waiting for a message (extension, not in Nylas; issue 40, item 3; docs/reading.md#waiting-for-a-message-codes-and-links-issue-40-item-3): the first
 * message matching a filter, with the one-time codes and links a sign-up flow needs.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, UnixSecondsSchema } from './common.js';
import { MessageSchema } from './messages.js';

/** Longest wait (seconds). */
export const MAX_WAIT_SECONDS = 300;
/** The wait when `timeout` is not given (seconds). */
export const DEFAULT_WAIT_SECONDS = 60;

export const WaitForMessageInputSchema = z.object({
  grant_id: GrantIdSchema,
  from: z.string().min(1).max(320).optional().describe('From this address'),
  to: z.string().min(1).max(320).optional().describe('To this address'),
  subject: z.string().min(1).max(998).optional().describe('Subject contains'),
  thread_id: IdSchema.optional().describe('In this thread'),
  received_after: UnixSecondsSchema.optional().describe('Since (unix s; default now)'),
  timeout: z.number().int().min(1).max(MAX_WAIT_SECONDS).optional().describe('Max 300 s (default 60)'),
});
export type WaitForMessageInput = z.infer<typeof WaitForMessageInputSchema>;

const WhereSchema = z.enum(['subject', 'body']).describe('Where it was found');

export const WaitedMessageSchema = MessageSchema.extend({
  codes: z
    .array(
      z.object({
        value: z.string().describe('The code'),
        where: WhereSchema,
        context: z.string().describe('The words around it'),
      }),
    )
    .describe('Extension: one-time codes found near words like code, PIN or verification, best first'),
  links: z
    .array(
      z.object({
        url: z.string().describe('Where it leads (tracking redirects resolved)'),
        text: z.string().describe('Its text as shown'),
        where: WhereSchema,
      }),
    )
    .describe('Extension: the links, verification, sign-in and reset links first'),
}).meta({ id: 'WaitedMessage' });
export type WaitedMessage = z.infer<typeof WaitedMessageSchema>;
