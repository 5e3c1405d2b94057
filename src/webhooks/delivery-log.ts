/**
 * @module webhooks/delivery-log
 * A webhook's delivery log: the notifications still queued for it (not attempted yet, waiting for a retry after a
 * failed attempt, or given up), read from the `webhook.deliver` jobs of its order keys, and the retry of one of them
 * now. A delivered notification's job is deleted when it succeeds (./delivery-runner.ts settles successes with one
 * DELETE), so the log holds what is still owed; the webhook's own row keeps its health (failures in a row, the
 * last error).
 */
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { AppError } from '../errors.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { ListWebhookDeliveriesInput, RetryWebhookDeliveryInput, WebhookDelivery } from '../schemas/webhooks.js';
import type { WebhookDeliveryLog } from './contracts.js';
import { listDeliveryJobs, reviveDeliveryJob, WEBHOOK_DELIVERY_JOB, type DeliveryJobRow } from './webhook-store.js';

/** What a delivery job's payload holds of its notification (./delivery.ts DeliveryPayload). */
interface QueuedNotification {
  notification: { id: string; type: string; grant_id: string | null };
}

const seconds = (ms: number) => Math.floor(ms / 1000);

/** A delivery job as the log shows it. */
export function toWebhookDelivery(row: DeliveryJobRow, webhookId: string): WebhookDelivery {
  const { notification } = row.payload as unknown as QueuedNotification;
  const failed = row.deadAt !== null;
  return {
    id: row.id,
    object: 'webhook_delivery',
    webhook_id: webhookId,
    notification_id: notification.id,
    type: notification.type,
    grant_id: notification.grant_id,
    status: failed ? 'failed' : row.lastError !== null ? 'retrying' : 'queued',
    attempts: row.attempts,
    last_error: row.lastError,
    next_attempt_at: failed ? null : seconds(row.runAt),
    failed_at: row.deadAt === null ? null : seconds(row.deadAt),
    created_at: seconds(row.createdAt),
  };
}

/**
 * The delivery log of the application's webhooks. `requireWebhook` throws not_found for a webhook the principal's
 * application does not have; `announce` wakes the in-process delivery runner after a retry.
 */
export function createDeliveryLog(
  { db, clock }: Pick<CoreDeps, 'db' | 'clock'>,
  requireWebhook: (principal: Principal, webhookId: string) => Promise<{ id: string }>,
  announce: () => void,
): WebhookDeliveryLog {
  return {
    async deliveries(principal: Principal, input: ListWebhookDeliveriesInput) {
      const webhook = await requireWebhook(principal, input.webhook_id);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const cursor = decodeCursor(input.page_token, 2);
      const rows = await listDeliveryJobs(db.orm, {
        kind: WEBHOOK_DELIVERY_JOB,
        webhookId: webhook.id,
        status: input.status,
        after: cursor ? [Number(cursor[0]), String(cursor[1])] : undefined,
        limit,
      });
      return toPage(
        rows,
        limit,
        (row) => [row.createdAt, row.id],
        (row) => toWebhookDelivery(row, webhook.id),
      );
    },

    async retryDelivery(principal: Principal, input: RetryWebhookDeliveryInput) {
      const webhook = await requireWebhook(principal, input.webhook_id);
      const at = clock.now().getTime();
      const row = await db.write((tx) =>
        reviveDeliveryJob(tx, { kind: WEBHOOK_DELIVERY_JOB, webhookId: webhook.id, jobId: input.delivery_id, at }),
      );
      if (!row)
        throw new AppError(
          'not_found',
          `Delivery ${input.delivery_id} is not waiting for webhook ${webhook.id}: it was delivered since, is being attempted now, or is unknown. List the deliveries again.`,
        );
      announce();
      return toWebhookDelivery(row, webhook.id);
    },
  };
}
