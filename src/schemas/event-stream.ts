/**
 * The event stream (extension, not in Nylas; issue 40): the webhooks' notifications over Server-Sent Events or a
 * WebSocket, for a client with no public URL (docs/webhooks.md#the-event-stream).
 */
import { z } from 'zod';
import { GrantIdSchema } from './common.js';
import { TriggerTypeSchema } from './webhooks.js';

export const StreamEventsInputSchema = z.object({
  grant_ids: z
    .array(GrantIdSchema)
    .max(100)
    .optional()
    .describe(
      'Only these grants’ events (ids or addresses; the query parameter grant_id, repeatable); absent: every grant the key reaches',
    ),
  trigger_types: z
    .array(TriggerTypeSchema)
    .max(100)
    .optional()
    .describe('Only these trigger types (comma-separated); absent: every type the key may see'),
  cursor: z
    .string()
    .max(20)
    .optional()
    .describe(
      'Resume after this event (the cursor of the last event received; Last-Event-ID over SSE); absent: from now on',
    ),
});
export type StreamEventsInput = z.infer<typeof StreamEventsInputSchema>;

/** One event as the stream sends it: the webhook notification (the same `id`), with the cursor to resume after it. */
export const StreamedEventSchema = z.object({
  specversion: z.literal('1.0'),
  type: z.string().describe('The trigger type (with .truncated when the object’s body was left out)'),
  source: z.string(),
  id: z.string().describe('The notification id, the same as a webhook’s for this change'),
  time: z.number().int().describe('Unix seconds of the change'),
  cursor: z.string().describe('Resume after this event with it (Last-Event-ID or ?cursor=)'),
  data: z.object({
    application_id: z.string(),
    grant_id: z.string().optional(),
    object: z.record(z.string(), z.unknown()),
  }),
});
