/**
 * Webhook subscription operations (`/v3/webhooks`), as the nylas SDK's `webhooks` resource calls them.
 * Application configuration, so HTTP only (not agent tools).
 */
import { pageOf } from '../schemas/common.js';
import {
  CreateWebhookInputSchema,
  ListWebhookDeliveriesInputSchema,
  ListWebhooksInputSchema,
  RetryWebhookDeliveryInputSchema,
  UpdateWebhookInputSchema,
  WebhookDeletedSchema,
  WebhookDeliverySchema,
  WebhookIpAddressesInputSchema,
  WebhookIpAddressesSchema,
  WebhookRefInputSchema,
  WebhookSchema,
  WebhookWithSecretSchema,
} from '../schemas/webhooks.js';
import { defineOperation } from './define-operation.js';

export const createWebhook = defineOperation({
  name: 'create_webhook',
  title: 'Create a webhook',
  description:
    'Subscribes an https endpoint to trigger types (message.created, event.updated, …) of this application. The endpoint is verified first: ' +
    'it must answer GET ?challenge=<value> with 200 and exactly <value> within 10 seconds, otherwise nothing is created. ' +
    'Returns the webhook with webhook_secret (shown only now and on rotate): use it to verify X-Nylas-Signature or the Standard Webhooks webhook-signature header of every delivery.',
  input: CreateWebhookInputSchema,
  output: WebhookWithSecretSchema,
  hints: { readOnly: false, openWorld: true },
  http: { method: 'POST', path: '/webhooks' },
  tool: false,
  run: (core, input, { principal }) => core.notifications.webhooks.create(principal, input),
});

export const listWebhooks = defineOperation({
  name: 'list_webhooks',
  title: 'List webhooks',
  description:
    'Lists the webhook subscriptions of this application, oldest first (limit up to 200, then page_token = next_cursor). Secrets are not included.',
  input: ListWebhooksInputSchema,
  output: pageOf(WebhookSchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/webhooks', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.notifications.webhooks.list(principal, input),
});

// Hono runs routes in registration order and the registry takes a module's exports in name order, so this export
// is named to sort before `getWebhook`: `/webhooks/ip-addresses` must be bound before `/webhooks/:webhook_id`.
export const getIpAddressesOfWebhooks = defineOperation({
  name: 'get_webhook_ip_addresses',
  title: 'Get webhook source addresses',
  description:
    'Returns the IP addresses webhook deliveries leave from, for endpoint allow-lists (behind NAT, the gateway address applies instead).',
  input: WebhookIpAddressesInputSchema,
  output: WebhookIpAddressesSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/webhooks/ip-addresses' },
  tool: false,
  run: (core) => core.notifications.webhooks.ipAddresses(),
});

export const getWebhook = defineOperation({
  name: 'get_webhook',
  title: 'Get a webhook',
  description:
    'Returns one webhook subscription with its status (active, pause, failing, failed). The secret is not included; rotate it to get a new one.',
  input: WebhookRefInputSchema,
  output: WebhookSchema,
  hints: { readOnly: true },
  http: { method: 'GET', path: '/webhooks/:webhook_id' },
  tool: false,
  run: (core, input, { principal }) => core.notifications.webhooks.find(principal, input.webhook_id),
});

export const updateWebhook = defineOperation({
  name: 'update_webhook',
  title: 'Update a webhook',
  description:
    'Changes a webhook\'s trigger types, URL, description, notification addresses or status. status "pause" stops deliveries; "active" resumes them ' +
    '(also after failing or failed) once the endpoint answers a new challenge. A new URL is challenged too. If the challenge fails, nothing changes.',
  input: UpdateWebhookInputSchema,
  output: WebhookSchema,
  hints: { readOnly: false, idempotent: true, openWorld: true },
  http: { method: 'PUT', path: '/webhooks/:webhook_id' },
  tool: false,
  run: (core, input, { principal }) => core.notifications.webhooks.update(principal, input),
});

export const deleteWebhook = defineOperation({
  name: 'delete_webhook',
  title: 'Delete a webhook',
  description: 'Deletes a webhook subscription; notifications still queued for it are dropped.',
  input: WebhookRefInputSchema,
  output: WebhookDeletedSchema,
  hints: { readOnly: false, destructive: true, idempotent: false },
  http: { method: 'DELETE', path: '/webhooks/:webhook_id' },
  tool: false,
  run: (core, input, { principal }) => core.notifications.webhooks.destroy(principal, input.webhook_id),
});

export const rotateWebhookSecret = defineOperation({
  name: 'rotate_webhook_secret',
  title: 'Rotate a webhook secret',
  description:
    "Replaces the webhook's signing secret at once and returns it (webhook_secret). Deliveries from now on, retries included, are signed with the new secret.",
  input: WebhookRefInputSchema,
  output: WebhookWithSecretSchema,
  hints: { readOnly: false },
  http: { method: 'POST', path: '/webhooks/rotate-secret/:webhook_id' },
  tool: false,
  run: (core, input, { principal }) => core.notifications.webhooks.rotateSecret(principal, input.webhook_id),
});

export const listWebhookDeliveries = defineOperation({
  name: 'list_webhook_deliveries',
  title: 'List webhook deliveries',
  description:
    'Extension: the notifications still queued for a webhook, newest first: queued (not attempted yet), retrying (an attempt failed; last_error says why, next_attempt_at when the next one is due) and failed (given up). ' +
    'A delivered notification leaves the list. Filter with status; limit up to 200, then page_token = next_cursor. Retry one with retry_webhook_delivery.',
  input: ListWebhookDeliveriesInputSchema,
  output: pageOf(WebhookDeliverySchema),
  hints: { readOnly: true },
  http: { method: 'GET', path: '/webhooks/:webhook_id/deliveries', envelope: 'list' },
  tool: false,
  run: (core, input, { principal }) => core.notifications.webhooks.deliveries(principal, input),
});

export const retryWebhookDelivery = defineOperation({
  name: 'retry_webhook_delivery',
  title: 'Retry a webhook delivery',
  description:
    'Extension: makes a retrying or failed delivery (from list_webhook_deliveries) due now; the delivery runner sends it at once. ' +
    'A failed webhook drops it again: set the webhook active first (update_webhook). 404 when the delivery was delivered since or is being attempted.',
  input: RetryWebhookDeliveryInputSchema,
  output: WebhookDeliverySchema,
  hints: { readOnly: false, idempotent: true, openWorld: true },
  http: { method: 'POST', path: '/webhooks/:webhook_id/deliveries/:delivery_id/retry' },
  tool: false,
  run: (core, input, { principal }) => core.notifications.webhooks.retryDelivery(principal, input),
});
