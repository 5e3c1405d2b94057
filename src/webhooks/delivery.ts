/**
 * @module webhooks/delivery
 * From outbox event to signed POST:
 *
 * 1. **Fan-out** (an outbox consumer, inside the dispatching transaction): one `webhook.deliver` job per
 *    `active` or `failing` subscription of the event's application whose trigger_types include the event type
 *    and that existed when the event was recorded (`seq` after its `start_seq`), all inserted with a few
 *    multi-row INSERTs. The job carries the whole notification, so it does not depend on rows that may change
 *    later. Its order key, `<webhook id> <grant id>`, makes the notifications of one grant to one subscription go
 *    out one after another in event order (./delivery-runner.ts claims and runs them).
 * 2. **Delivery** (./delivery-runner.ts, one job at a time through {@link createWebhookDelivery}'s `deliver`): builds the Nylas notification envelope with the attempt number, signs the
 *    exact body bytes (X-Nylas-Signature and Standard Webhooks headers, see ./signatures.ts), checks the target
 *    again (DNS may have changed) and POSTs it with a deadline and no redirects. A 2xx is success; anything else,
 *    a timeout or a refused target is a failed attempt, retried on {@link RETRY_DELAYS_MS} until
 *    {@link GIVE_UP_WINDOW_MS} after the notification was queued (the last attempt lands exactly at the end).
 * 3. **Endpoint health** (./delivery-attempt.ts): failures in a row (across notifications) make the subscription `failing` once they
 *    span {@link FAILING_AFTER_MS} with at least {@link FAILING_MIN_FAILURES} attempts (Nylas: "95% over
 *    15 minutes"); failing deliveries are still attempted. Still failing {@link GIVE_UP_WINDOW_MS} after the
 *    first failure, it becomes `failed`: delivery stops until someone sets it `active` again (a new challenge).
 *    A success resets the counters and returns `failing` to `active`. Each transition queues a `webhook.alert`
 *    job that emails notification_email_addresses through the injected Notifier.
 */
import { and, inArray } from 'drizzle-orm';
import { tables, type Orm, type Tx } from '../../storage/index.js';
import type { CoreDeps, Notifier } from '../ports/index.js';
import type { OutboxConsumer, OutboxRow } from '../outbox/index.js';
import type { Job, JobInput, JobQueue, JobHandler, JobOutcome } from '../jobs/index.js';
import { loadBody } from '../messages/index.js';
import { type WebhookRow, type WebhookTransport } from './webhook-service.js';
import { WEBHOOK_DELIVERY_JOB } from './webhook-store.js';
import {
  GIVE_UP_WINDOW_MS,
  RETRY_DELAYS_MS,
  post,
  recordFailure,
  recordSuccess,
  sendAlert,
  WEBHOOK_ALERT_JOB,
  type AttemptState,
} from './delivery-attempt.js';

/** Job kinds of this module (the delivery kind is declared beside the delivery log's reads of it). */
export { WEBHOOK_DELIVERY_JOB } from './webhook-store.js';

/** Bodies larger than this lose `data.object.body` and get the `.truncated` type suffix, as in Nylas v3. */
export const MAX_NOTIFICATION_BYTES = 1024 * 1024;

/** What a delivery job carries. */
export interface DeliveryPayload {
  webhook_id: string;
  notification: {
    id: string;
    type: string;
    application_id: string;
    grant_id: string | null;
    /** Unix seconds of the change. */
    time: number;
    object: Record<string, unknown>;
  };
}

/** The notification envelope (CloudEvents-shaped), as Nylas v3 sends it. */
export interface NotificationEnvelope {
  specversion: '1.0';
  type: string;
  source: string;
  id: string;
  time: number;
  webhook_delivery_attempt: number;
  data: { application_id: string; grant_id?: string; object: Record<string, unknown> };
}

/** The envelope's `source`, following Nylas' `/<provider>/<resource>/realtime` and system sources. */
export function notificationSource(type: string): string {
  const [resource = ''] = type.split('.');
  if (resource === 'grant') return '/nylas/system';
  if (type.startsWith('message.opened') || type.startsWith('message.link_clicked') || type.startsWith('thread.replied'))
    return '/com/nylas/tracking';
  if (
    type.startsWith('message.send_') ||
    /^message\.(transactional\.)?(delivered|bounced|complaint|rejected)$/.test(type) ||
    type === 'message.bounce_detected'
  ) {
    return '/nylas/send';
  }
  if (resource === 'message' || resource === 'thread') return '/nylas/emails/realtime';
  if (resource === 'event' || resource === 'calendar' || resource === 'contact' || resource === 'folder')
    return `/nylas/${resource}s/realtime`;
  return `/nylas/${resource}`;
}

/** Builds the envelope and its exact JSON bytes, truncating an oversized object's body. */
export function buildNotificationBody(
  notification: DeliveryPayload['notification'],
  attempt: number,
): { envelope: NotificationEnvelope; json: string } {
  const make = (type: string, object: Record<string, unknown>): NotificationEnvelope => ({
    specversion: '1.0',
    type,
    source: notificationSource(notification.type),
    id: notification.id,
    time: notification.time,
    webhook_delivery_attempt: attempt,
    data: {
      application_id: notification.application_id,
      ...(notification.grant_id ? { grant_id: notification.grant_id } : {}),
      object,
    },
  });
  let envelope = make(notification.type, notification.object);
  let json = JSON.stringify(envelope);
  if (Buffer.byteLength(json) > MAX_NOTIFICATION_BYTES && 'body' in notification.object) {
    const { body: _body, ...rest } = notification.object;
    envelope = make(`${notification.type}.truncated`, rest);
    json = JSON.stringify(envelope);
  }
  return { envelope, json };
}

/** When to try again after failed attempt `attempt`, or undefined when the give-up window is over. */
export function nextAttemptAt(queuedAtMs: number, attempt: number, nowMs: number): number | undefined {
  const deadline = queuedAtMs + GIVE_UP_WINDOW_MS;
  if (nowMs >= deadline) return undefined;
  const delay: number = RETRY_DELAYS_MS[Math.max(1, Math.min(attempt, RETRY_DELAYS_MS.length)) - 1]!;
  return Math.min(nowMs + delay, deadline);
}

/**
 * Whether an event's message was recorded without its body: stored mail's `message.created` events name the
 * message instead of carrying the body a second time (createdEventOf, src/messages/mail-rows.ts); fan-out reads it
 * back.
 */
function bodyLeftOut(event: OutboxRow): boolean {
  return (
    event.type === 'message.created' &&
    event.objectId !== null &&
    typeof event.payload === 'object' &&
    event.payload !== null &&
    !('body' in event.payload)
  );
}

/** The bodies of the messages whose events left them out, by message id (absent: the message was deleted since). */
async function leftOutBodies(tx: Tx | Orm, events: readonly OutboxRow[]): Promise<Map<string, string>> {
  const ids = [...new Set(events.filter(bodyLeftOut).map((event) => event.objectId!))];
  const bodies = new Map<string, string>();
  for (let index = 0; index < ids.length; index += 200) {
    const rows = await tx
      .select({ id: tables.messages.id, body: tables.messages.body, bodyHash: tables.messages.bodyHash })
      .from(tables.messages)
      .where(inArray(tables.messages.id, ids.slice(index, index + 200)));
    for (const row of rows) bodies.set(row.id, await loadBody(tx, row));
  }
  return bodies;
}

/**
 * Each event as the notification webhooks (and the event stream) carry, in the order given: the bodies that stored
 * mail's `message.created` events left out read back; a message deleted before its notification went out has no body
 * left to send, and the `.truncated` form says the body is not included, as Nylas does for bodies too large to send.
 */
export async function notificationsOf(
  reader: Tx | Orm,
  events: readonly OutboxRow[],
): Promise<DeliveryPayload['notification'][]> {
  const bodies = await leftOutBodies(reader, events);
  return events.map((event) => {
    const leftOut = bodyLeftOut(event);
    const body = leftOut ? bodies.get(event.objectId ?? '') : undefined;
    return {
      id: event.id,
      type: leftOut && body === undefined ? `${event.type}.truncated` : event.type,
      application_id: event.applicationId,
      grant_id: event.grantId,
      time: event.createdAt,
      object: body === undefined ? event.payload : { ...event.payload, body },
    };
  });
}

/**
 * The order key of a delivery job: one subscription's notifications of one grant go out one after another
 * (notifications without a grant are ordered per subscription). The webhook id comes first, as the claim's group.
 */
export function deliveryOrderKey(webhookId: string, grantId: string | null): string {
  return `${webhookId} ${grantId ?? ''}`;
}

/** How long the fan-out remembers whether any subscription is active. */
const INTEREST_MEMORY_MS = 1_000;

/** Creates the fan-out consumer and the job handlers. */
export function createWebhookDelivery(
  deps: CoreDeps,
  queue: JobQueue,
  transport: WebhookTransport,
  notifier: Notifier,
) {
  const { db, clock } = deps;

  const delivering = inArray(tables.webhooks.status, ['active', 'failing']);

  /**
   * The last answer of `interested` and when (performance.now()): the dispatcher asks after every burst of
   * events, and mail arriving by the hundred a second should not cost a read each time. Changes made in this
   * process clear it at once ({@link forgetInterest}); another process's new subscription is seen within
   * {@link INTEREST_MEMORY_MS}, and its events wait undispatched until then, so none is missed.
   */
  let interest: { answer: boolean; at: number } | undefined;

  /** Outbox consumer: one delivery job per matching subscription, in the dispatching transaction. */
  const fanOut: OutboxConsumer = {
    async interested() {
      const now = performance.now();
      if (interest && now - interest.at < INTEREST_MEMORY_MS) return interest.answer;
      const rows = await db.orm.select({ id: tables.webhooks.id }).from(tables.webhooks).where(delivering).limit(1);
      interest = { answer: rows.length > 0, at: now };
      return interest.answer;
    },
    consume: async (tx: Tx, events) => {
      const applicationIds = [...new Set(events.map((event) => event.applicationId))];
      const subscriptions = await tx
        .select({
          id: tables.webhooks.id,
          applicationId: tables.webhooks.applicationId,
          triggerTypes: tables.webhooks.triggerTypes,
          startSeq: tables.webhooks.startSeq,
        })
        .from(tables.webhooks)
        .where(and(inArray(tables.webhooks.applicationId, applicationIds), delivering));
      if (subscriptions.length === 0) return;
      const notifications = await notificationsOf(tx, events);
      const jobs: JobInput[] = [];
      for (const [index, event] of events.entries()) {
        const notification = notifications[index]!;
        for (const subscription of subscriptions) {
          if (subscription.applicationId !== event.applicationId || event.seq <= subscription.startSeq) continue;
          if (
            !subscription.triggerTypes.includes(event.type) &&
            !subscription.triggerTypes.includes(`${event.type}.truncated`)
          )
            continue;
          const payload: DeliveryPayload = { webhook_id: subscription.id, notification };
          jobs.push({
            kind: WEBHOOK_DELIVERY_JOB,
            payload: payload as unknown as Record<string, unknown>,
            dedupeKey: `${WEBHOOK_DELIVERY_JOB}:${subscription.id}:${event.id}`,
            orderKey: deliveryOrderKey(subscription.id, event.grantId),
          });
        }
      }
      await queue.enqueueManyIn(tx, jobs);
    },
  };

  const state: AttemptState = { deps, queue, transport };

  /** The subscriptions of these ids, by id (deleted ones are absent). */
  async function loadWebhooks(ids: readonly string[]): Promise<Map<string, WebhookRow>> {
    const rows =
      ids.length === 0
        ? []
        : await db.orm
            .select()
            .from(tables.webhooks)
            .where(inArray(tables.webhooks.id, [...new Set(ids)]));
    return new Map(rows.map((row) => [row.id, row]));
  }

  /**
   * One attempt of a delivery job to its subscription (`undefined`: deleted since), and the job's outcome. The
   * subscription row may be a few moments old (the runner reads the rows of a whole claim at once); a failure
   * is counted on the current row.
   */
  async function deliver(job: Job, webhook: WebhookRow | undefined): Promise<JobOutcome> {
    const { notification } = job.payload as unknown as DeliveryPayload;
    if (!webhook) return { type: 'done' };
    if (webhook.status === 'pause' || webhook.status === 'failed')
      return { type: 'give_up', error: `the webhook is ${webhook.status}; notification dropped` };

    const { json } = buildNotificationBody(notification, job.attempts);
    const failure = await post(state, webhook, notification.id, json);
    // Lag from the event's commit (unix seconds) to the end of this attempt.
    deps.metrics?.webhookDelivery(
      failure === undefined ? 'delivered' : 'failed',
      Math.max(0, clock.now().getTime() / 1000 - notification.time),
    );
    if (failure === undefined) {
      await recordSuccess(state, webhook);
      return { type: 'done' };
    }
    const status = await recordFailure(state, webhook.id, failure);
    if (status === undefined) return { type: 'done' };
    if (status === 'failed') return { type: 'give_up', error: `${failure}; the webhook is now failed` };
    const next = nextAttemptAt(job.createdAt, job.attempts, clock.now().getTime());
    if (next === undefined) return { type: 'give_up', error: `${failure}; gave up after ${job.attempts} attempts` };
    return { type: 'retry', at: new Date(next), error: failure };
  }

  const alert: JobHandler = (job: Job) => sendAlert(notifier, job);

  return {
    fanOut,
    /** Clears what `fanOut.interested` remembers (a subscription was created, changed or deleted). */
    forgetInterest() {
      interest = undefined;
    },
    /** Delivery attempts, run by ./delivery-runner.ts (not by the generic worker: they are claimed in order). */
    deliver,
    loadWebhooks,
    /** Handlers of the generic worker. */
    handlers: { [WEBHOOK_ALERT_JOB]: alert } as Record<string, JobHandler>,
  };
}
