/**
 * @module webhooks
 * The front door of src/webhooks/: what other areas, the operations and the faces use of it.
 */
export { addressBytes, ALLOW_PRIVATE_HINT, isPublicAddress, nonPublicReason } from './address-policy.js';
export { startDeliveryRunner, type DeliveryFunctions, type DeliveryRunner } from './delivery-runner.js';
export { GIVE_UP_WINDOW_MS } from './delivery-attempt.js';
export {
  buildNotificationBody,
  createWebhookDelivery,
  notificationsOf,
  WEBHOOK_DELIVERY_JOB,
  type DeliveryPayload,
} from './delivery.js';
export {
  nylasSignature,
  standardSignature,
  verifyWebhookSignature,
  WEBHOOK_SECRET_PREFIX,
  type VerifyWebhookOptions,
  type WebhookVerification,
} from './signatures.js';
export { createWebhookService, type WebhookService } from './webhook-service.js';
