/**
 * Smart Compose (Nylas §12): a prompt in, a suggested message body out. Nothing is sent.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema } from './common.js';

/**
 * The prompt. Its real limit is 1,000 tokens, counted by the service (src/tokens/) because a schema
 * cannot count tokens; this length only bounds the counting work.
 */
const PromptSchema = z
  .string()
  .regex(/\S/, 'prompt is required: say what the message should say')
  .max(100_000)
  .describe(
    'What to write, up to 1,000 tokens (counted with the o200k_base encoding), e.g. "Thank them and propose Tuesday at 10"',
  );

export const ComposeMessageInputSchema = z
  .object({
    grant_id: GrantIdSchema,
    prompt: PromptSchema,
  })
  .meta({ id: 'ComposeMessageInput' });
export type ComposeMessageInput = z.infer<typeof ComposeMessageInputSchema>;

export const ComposeMessageReplyInputSchema = z
  .object({
    grant_id: GrantIdSchema,
    message_id: IdSchema.describe('The message to reply to: its sender, recipients, subject and body are the context'),
    prompt: PromptSchema,
  })
  .meta({ id: 'ComposeMessageReplyInput' });
export type ComposeMessageReplyInput = z.infer<typeof ComposeMessageReplyInputSchema>;

export const SmartComposeSuggestionSchema = z
  .object({
    suggestion: z.string().describe('The generated message body (plain text). Nothing was sent or saved.'),
  })
  .meta({ id: 'SmartComposeSuggestion' });
export type SmartComposeSuggestion = z.infer<typeof SmartComposeSuggestionSchema>;
