/**
 * @module webhooks/contracts
 * The webhooks area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { Principal } from '../access.js';
import type {
  CreateWebhookInput,
  ListWebhookDeliveriesInput,
  ListWebhooksInput,
  RetryWebhookDeliveryInput,
  UpdateWebhookInput,
  Webhook,
  WebhookDelivery,
  WebhookIpAddresses,
  WebhookWithSecret,
} from '../schemas/webhooks.js';

/** A webhook's delivery log (src/webhooks/delivery-log.ts): what is still queued for it, and a retry now. */
export interface WebhookDeliveryLog {
  /** The notifications queued for a webhook (not attempted yet, retrying, given up), newest first, cursor-paginated. */
  deliveries(
    principal: Principal,
    input: ListWebhookDeliveriesInput,
  ): Promise<{
    data: WebhookDelivery[];
    next_cursor?: string;
  }>;
  /** Makes a waiting or given-up delivery due now (not one in flight); not_found when none such is queued. */
  retryDelivery(principal: Principal, input: RetryWebhookDeliveryInput): Promise<WebhookDelivery>;
}

/** What createWebhookService() returns (src/webhooks/webhook-service.ts). */
export interface WebhookService extends WebhookDeliveryLog {
  /** Checks the URL, challenges the endpoint, then stores the subscription as `active` with a new secret. */
  create(principal: Principal, input: CreateWebhookInput): Promise<WebhookWithSecret>;
  /** The application's subscriptions, oldest first, cursor-paginated. */
  list(
    principal: Principal,
    input: ListWebhooksInput,
  ): Promise<{
    data: Webhook[];
    next_cursor?: string;
  }>;
  /** One subscription. */
  find(principal: Principal, webhookId: string): Promise<Webhook>;
  /**
   * Changes a subscription. Switching to `active` (from pause, failing or failed), or changing the URL of a
   * subscription that is or becomes active, challenges the endpoint first; if that fails nothing changes.
   * A verified switch or URL change resets the failure counters.
   */
  update(principal: Principal, input: UpdateWebhookInput): Promise<Webhook>;
  /** Deletes a subscription; deliveries still queued for it are dropped. */
  destroy(
    principal: Principal,
    webhookId: string,
  ): Promise<{
    status: 'success';
  }>;
  /** Replaces the signing secret at once (attempts from now on, retries included, use the new one). */
  rotateSecret(principal: Principal, webhookId: string): Promise<WebhookWithSecret>;
  /**
   * Addresses deliveries leave from: this host's non-internal interface addresses. Behind NAT or a proxy the
   * receiver sees the gateway's address instead.
   */
  ipAddresses(): Promise<WebhookIpAddresses>;
}
