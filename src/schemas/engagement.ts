/**
 * @module schemas/engagement
 * Extension (not in Nylas): a sent message's engagement (opens, clicks per link, replies) and each recipient's
 * delivery state, as `GET /v3/grants/{grant_id}/messages/{message_id}/engagement` returns it.
 */
import { z } from 'zod';
import { GrantIdSchema, IdSchema, UnixSecondsSchema } from './common.js';
import { DeliveryStatusSchema } from './messages.js';
import { TrackingOptionsSchema } from './send.js';

export const GetMessageEngagementInputSchema = z.object({
  grant_id: GrantIdSchema,
  message_id: IdSchema.describe('A message this mailbox sent'),
});
export type GetMessageEngagementInput = z.infer<typeof GetMessageEngagementInputSchema>;

/** Hits of one kind (opens or clicks). */
const HitTotalsSchema = z.object({
  count: z.number().int().describe('Hits counted as people (opens within a minute of the last counted one count once)'),
  hits: z.number().int().describe('Every hit recorded, counted or flagged'),
  flagged: z
    .number()
    .int()
    .describe(
      'Hits recorded but not counted: HEAD requests, link scanners and mail-privacy proxies, hits within 10 s of the send, repeated opens',
    ),
  first_at: UnixSecondsSchema.optional().describe('First counted hit'),
  last_at: UnixSecondsSchema.optional().describe('Last counted hit'),
});

export const MessageEngagementSchema = z
  .object({
    object: z.literal('message_engagement'),
    grant_id: z.string(),
    message_id: z.string().describe('The sent message'),
    tracked: z
      .boolean()
      .describe(
        'Whether the message was sent with tracking_options that track something (opens, links or thread_replies)',
      ),
    tracking_options: TrackingOptionsSchema.optional().describe('What is tracked, and the label notifications echo'),
    sent_at: UnixSecondsSchema.optional().describe('When the tracked message was accepted for delivery'),
    opens: HitTotalsSchema.describe('Pixel loads'),
    clicks: HitTotalsSchema.describe('Clicks on rewritten links, all links together'),
    links: z
      .array(
        z.object({
          link_index: z
            .string()
            .describe('Position of the link in the HTML body, from "0", as in message.link_clicked'),
          url: z.string().describe('The original URL a click is redirected to'),
          count: z.number().int().describe('Clicks counted as people'),
        }),
      )
      .describe('Each rewritten link, in body order'),
    replies: z
      .object({
        count: z.number().int().describe('Replies received on the thread (thread_replies)'),
        message_ids: z.array(z.string()).describe('The replies, oldest first, as messages of this mailbox'),
      })
      .describe('Replies to the message'),
    delivery_status: z
      .array(DeliveryStatusSchema)
      .describe('Delivery state of each recipient, as the outbound queue knows it'),
  })
  .meta({ id: 'MessageEngagement' });
export type MessageEngagement = z.infer<typeof MessageEngagementSchema>;
