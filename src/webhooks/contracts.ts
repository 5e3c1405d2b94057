/**
 * @module webhooks/contracts
 * The webhooks area's declared interface: its services as other areas see them, and the types it shares.
 */
import type { Principal } from '../access.js';
import type {
  CreateWebhookInput,
  ListWebhooksInput,
  UpdateWebhookInput,
  Webhook,
  WebhookIpAddresses,
  WebhookWithSecret,
} from '../schemas/webhooks.js';

/** What createWebhookService() returns (src/webhooks/webhook-service.ts). */
export interface WebhookService {
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
