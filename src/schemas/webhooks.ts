/**
 * @module schemas/webhooks
 * Webhook subscriptions ("webhook destinations") on the wire, as in Nylas v3 `models/webhooks.ts`.
 */
import { z } from 'zod';
import { IdSchema, LimitSchema, PageTokenSchema, UnixSecondsSchema } from './common.js';

/**
 * Every webhook trigger type: the ones this service emits, and all the others the nylas SDK's `WebhookTriggers`
 * names, so subscriptions written for Nylas validate unchanged. The single list every check reads.
 */
export const TRIGGER_TYPES = [
  'grant.created',
  'grant.updated',
  'grant.deleted',
  'grant.expired',
  'grant.imap_sync_completed',
  // Extension (issue 37): a grant suspended (the kill switch) or resumed.
  'grant.suspended',
  'grant.resumed',
  'message.created',
  'message.created.cleaned',
  'message.created.truncated',
  'message.updated',
  'message.updated.truncated',
  'message.deleted',
  'message.send_success',
  'message.send_failed',
  'message.bounce_detected',
  'message.opened',
  'message.opened.legacy',
  'message.link_clicked',
  'message.link_clicked.legacy',
  'thread.replied',
  'thread.replied.legacy',
  'message.delivered',
  'message.bounced',
  'message.complaint',
  'message.rejected',
  'message.transactional.delivered',
  'message.transactional.bounced',
  'message.transactional.complaint',
  'message.transactional.rejected',
  'message.intelligence.order',
  'message.intelligence.tracking',
  'event.created',
  'event.updated',
  'event.deleted',
  'calendar.created',
  'calendar.updated',
  'calendar.deleted',
  'contact.updated',
  'contact.deleted',
  'folder.created',
  'folder.updated',
  'folder.deleted',
  'booking.created',
  'booking.pending',
  'booking.rescheduled',
  'booking.cancelled',
  'booking.reminder',
  'notetaker.created',
  'notetaker.updated',
  'notetaker.deleted',
  'notetaker.meeting_state',
  'notetaker.media',
  // Extension: a registered domain changed (its sending paused on its bounce or complaint rate, or resumed).
  'domain.updated',
  // Extension (oversight, docs/oversight.md): a send waits for approval; an approval was decided (or expired).
  'approval.requested',
  'approval.decided',
  // Extension (oversight): a guard refused a send or queued a burst; a monitored send is listed for review.
  'oversight.decision',
  'send_review.created',
  // Extension (issue 37): two mailboxes trading messages in a loop in one thread; agent sends in it are paused.
  'thread.loop_detected',
  // Extension (issue 40): a tentative hold passed its ttl unconfirmed; its slots are free again.
  'event.hold_expired',
  // Extension (issue 40): a calendar timer, a set time before an event starts (the calendar's
  // notify_before_start_minutes, 10 by default) and at its end; the payload is the event (or the series' instance).
  'event.starting',
  'event.ending',
  // Extension (issue 40): a follow-up went out as a reply in its thread; or it was cancelled (a reply came, the agent
  // cancelled it, or its send was refused: its status and reason say which).
  'message.follow_up_sent',
  'message.follow_up_cancelled',
] as const;

/** One trigger type from the full list; a wrong value is named together with the accepted ones. */
export const TriggerTypeSchema = z
  .enum(TRIGGER_TYPES, {
    error: (issue) =>
      `${JSON.stringify(issue.input)} is not a webhook trigger type; use one of: ${TRIGGER_TYPES.join(', ')}`,
  })
  .describe('A webhook trigger type such as message.created or event.updated');

export const WebhookStatusSchema = z
  .enum(['active', 'pause', 'failing', 'failed'])
  .describe(
    'active: delivering; pause: stopped by you; failing: deliveries keep failing (still attempted); failed: given up, set it active again to resume',
  );

export const WebhookSchema = z
  .object({
    id: z.string().describe('Webhook id'),
    description: z.string().optional().describe('Your description of the subscription'),
    trigger_types: z.array(z.string()).describe('Trigger types delivered to this endpoint'),
    webhook_url: z.string().describe('Endpoint notifications are POSTed to'),
    status: WebhookStatusSchema,
    notification_email_addresses: z
      .array(z.string())
      .describe('Addresses told by email when the endpoint becomes failing or failed'),
    compressed_delivery: z
      .boolean()
      .describe('Whether bodies are gzip-compressed (the signatures cover the compressed bytes)'),
    status_updated_at: UnixSecondsSchema.describe('When the status last changed (unix seconds)'),
    created_at: UnixSecondsSchema,
    updated_at: UnixSecondsSchema,
  })
  .meta({ id: 'Webhook' });
export type Webhook = z.infer<typeof WebhookSchema>;

export const WebhookWithSecretSchema = WebhookSchema.extend({
  webhook_secret: z
    .string()
    .describe(
      'Signing secret (whsec_…). Shown only on create and rotate: store it to verify X-Nylas-Signature and webhook-signature',
    ),
}).meta({ id: 'WebhookWithSecret' });
export type WebhookWithSecret = z.infer<typeof WebhookWithSecretSchema>;

const WebhookUrlSchema = z
  .string()
  .min(1)
  .max(2048)
  .describe('https URL that answers the challenge and receives notifications');
const DescriptionSchema = z.string().max(1024).describe('Free text to tell subscriptions apart');
const NotificationEmailsSchema = z
  .array(z.email().max(320))
  .max(20)
  .describe('Up to 20 addresses told by email when the endpoint becomes failing or failed');
const CompressedSchema = z.boolean().describe('Gzip request bodies (Content-Encoding: gzip); default false');

export const CreateWebhookInputSchema = z
  .object({
    trigger_types: z
      .array(TriggerTypeSchema)
      .min(1)
      .max(TRIGGER_TYPES.length)
      .describe('Trigger types to deliver (at least one)'),
    webhook_url: WebhookUrlSchema,
    description: DescriptionSchema.optional(),
    notification_email_addresses: NotificationEmailsSchema.optional(),
    compressed_delivery: CompressedSchema.optional(),
  })
  .meta({ id: 'CreateWebhookInput' });
export type CreateWebhookInput = z.infer<typeof CreateWebhookInputSchema>;

export const WebhookRefInputSchema = z
  .object({ webhook_id: IdSchema.describe('Webhook id') })
  .meta({ id: 'WebhookRefInput' });
export type WebhookRefInput = z.infer<typeof WebhookRefInputSchema>;

export const UpdateWebhookInputSchema = z
  .object({
    webhook_id: IdSchema.describe('Webhook id'),
    trigger_types: z
      .array(TriggerTypeSchema)
      .min(1)
      .max(TRIGGER_TYPES.length)
      .optional()
      .describe('Replaces the trigger types'),
    webhook_url: WebhookUrlSchema.optional(),
    description: DescriptionSchema.optional(),
    notification_email_addresses: NotificationEmailsSchema.optional(),
    compressed_delivery: CompressedSchema.optional(),
    status: z
      .enum(['active', 'pause'])
      .optional()
      .describe('pause stops deliveries; active resumes them after a new challenge'),
  })
  .meta({ id: 'UpdateWebhookInput' });
export type UpdateWebhookInput = z.infer<typeof UpdateWebhookInputSchema>;

export const ListWebhooksInputSchema = z
  .object({ limit: LimitSchema, page_token: PageTokenSchema })
  .meta({ id: 'ListWebhooksInput' });
export type ListWebhooksInput = z.infer<typeof ListWebhooksInputSchema>;

export const WebhookDeletedSchema = z
  .object({ status: z.literal('success').describe('Always "success"') })
  .meta({ id: 'WebhookDeleted' });

export const WebhookIpAddressesInputSchema = z.object({}).meta({ id: 'WebhookIpAddressesInput' });

export const WebhookIpAddressesSchema = z
  .object({
    ip_addresses: z
      .array(z.string())
      .describe("Addresses deliveries leave from (this host's interfaces; behind NAT, your gateway's address instead)"),
    updated_at: UnixSecondsSchema.describe('When the list was computed'),
  })
  .meta({ id: 'WebhookIpAddresses' });
export type WebhookIpAddresses = z.infer<typeof WebhookIpAddressesSchema>;

/** Extension: where a queued notification to a webhook stands. */
/** The states of a webhook delivery that the delivery log lists. */
export const WEBHOOK_DELIVERY_STATUSES = ['queued', 'retrying', 'failed'] as const;

export const WebhookDeliverySchema = z
  .object({
    id: z.string().describe('Delivery id (pass it to retry_webhook_delivery)'),
    object: z.literal('webhook_delivery'),
    webhook_id: z.string().describe('The webhook it goes to'),
    notification_id: z.string().describe('The notification id (the envelope id the endpoint receives)'),
    type: z.string().describe('The trigger type, e.g. message.created'),
    grant_id: z.string().nullable().describe('The grant the change was in; null for application events'),
    status: z
      .enum(WEBHOOK_DELIVERY_STATUSES)
      .describe(
        'queued: not attempted yet (or in flight); retrying: an attempt failed and another is planned at next_attempt_at; failed: given up (retry_webhook_delivery sends it again)',
      ),
    attempts: z.number().int().min(0).describe('Attempts made so far'),
    last_error: z.string().nullable().describe('Why the last attempt failed (status code or network error)'),
    next_attempt_at: UnixSecondsSchema.nullable().describe('When the next attempt is due; null once given up'),
    failed_at: UnixSecondsSchema.nullable().describe('When the service gave up; null while it still tries'),
    created_at: UnixSecondsSchema.describe('When the notification was queued'),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const ListWebhookDeliveriesInputSchema = z
  .object({
    webhook_id: IdSchema.describe('Webhook id'),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional().describe('Only deliveries in this state (default: all)'),
    limit: LimitSchema,
    page_token: PageTokenSchema,
  })
  .meta({ id: 'ListWebhookDeliveriesInput' });
export type ListWebhookDeliveriesInput = z.infer<typeof ListWebhookDeliveriesInputSchema>;

export const RetryWebhookDeliveryInputSchema = z
  .object({
    webhook_id: IdSchema.describe('Webhook id'),
    delivery_id: IdSchema.describe('Delivery id from list_webhook_deliveries'),
  })
  .meta({ id: 'RetryWebhookDeliveryInput' });
export type RetryWebhookDeliveryInput = z.infer<typeof RetryWebhookDeliveryInputSchema>;
