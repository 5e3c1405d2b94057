/**
 * @module webhooks/delivery-attempt
 * One delivery attempt of ./delivery.ts and what it does to the endpoint's health: the signed POST, the success
 * that resets the failure run, the failure that makes a subscription `failing` then `failed`, and the alert
 * email each transition queues.
 */
import { gzipSync } from 'node:zlib';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { CoreDeps, Notifier } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { Job, JobQueue } from '../jobs/index.js';
import { openStored } from '../secrets/index.js';
import { checkWebhookTarget } from './address-policy.js';
import { signatureHeaders } from './signatures.js';
import { WEBHOOK_USER_AGENT, type WebhookRow, type WebhookTransport } from './webhook-service.js';
import { countFailure, markDelivered } from './webhook-store.js';

/** Job kind of the alert email. */
export const WEBHOOK_ALERT_JOB = 'webhook.alert';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Wait after failed attempt n (1-based; the last entry repeats): quick retries for blips, then hours apart,
 * as the Standard Webhooks / Svix schedule does, so an endpoint down for a weekend still gets its notifications.
 */
export const RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR] as const;

/** A notification is given up this long after it was queued; a subscription failing this long becomes `failed`. */
export const GIVE_UP_WINDOW_MS = 72 * HOUR;

/** Failures in a row must span this long (and number {@link FAILING_MIN_FAILURES}) before `failing`: one blip is not an outage. */
export const FAILING_AFTER_MS = 15 * MINUTE;
export const FAILING_MIN_FAILURES = 3;

/** What an attempt uses of the delivery's factory. */
export interface AttemptState {
  deps: CoreDeps;
  queue: JobQueue;
  transport: WebhookTransport;
}

/** One POST; resolves to undefined on a 2xx, else to why it failed. */
export async function post(
  { deps: { clock, dns, secrets }, transport }: AttemptState,
  webhook: WebhookRow,
  notificationId: string,
  json: string,
): Promise<string | undefined> {
  const timestamp = unixSeconds(clock.now());
  const body = webhook.compressedDelivery ? gzipSync(json) : Buffer.from(json, 'utf8');
  try {
    const target = await checkWebhookTarget(webhook.webhookUrl, { dns, allowPrivate: transport.allowPrivate });
    const response = await transport.http({
      url: target.url,
      address: target.address,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        ...(webhook.compressedDelivery ? { 'content-encoding': 'gzip' } : {}),
        // Sealed at rest; the box keeps what it opened, so this costs a map look-up after the first delivery.
        ...signatureHeaders(openStored(secrets, webhook.secret), notificationId, timestamp, body),
      },
      body,
      timeoutMs: transport.timeoutMs,
      maxResponseBytes: 1024,
    });
    if (response.status >= 200 && response.status < 300) return undefined;
    return response.status >= 300 && response.status < 400
      ? `HTTP ${response.status} (redirects are not followed)`
      : `HTTP ${response.status}`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Counts a success: resets the failure run and returns `failing` to `active`. */
export async function recordSuccess({ deps: { db, clock } }: AttemptState, webhook: WebhookRow): Promise<void> {
  if (webhook.consecutiveFailures === 0 && webhook.status !== 'failing') return;
  const at = unixSeconds(clock.now());
  await db.write((tx) => markDelivered(tx, webhook.id, at));
}

/** Counts a failure and applies the failing/failed transitions; returns the status afterwards. */
export async function recordFailure(
  { deps: { db, clock, logger }, queue }: AttemptState,
  webhookId: string,
  error: string,
): Promise<WebhookRow['status'] | undefined> {
  const nowMs = clock.now().getTime();
  const at = unixSeconds(clock.now());
  return db.write(async (tx) => {
    const row = await countFailure(tx, webhookId, error, at);
    if (!row) return undefined;
    const spanMs = nowMs - (row.failingSince ?? at) * 1000;
    let next = row.status;
    if ((row.status === 'active' || row.status === 'failing') && spanMs >= GIVE_UP_WINDOW_MS) next = 'failed';
    else if (row.status === 'active' && row.consecutiveFailures >= FAILING_MIN_FAILURES && spanMs >= FAILING_AFTER_MS)
      next = 'failing';
    if (next === row.status) return row.status;
    await tx.update(tables.webhooks).set({ status: next, statusUpdatedAt: at }).where(eq(tables.webhooks.id, row.id));
    logger.warn(`webhook ${next}`, {
      webhook_id: row.id,
      webhook_url: row.webhookUrl,
      failures: row.consecutiveFailures,
      error,
    });
    if (row.notificationEmailAddresses.length > 0) {
      await queue.enqueueIn(tx, {
        kind: WEBHOOK_ALERT_JOB,
        payload: {
          webhook_id: row.id,
          status: next,
          webhook_url: row.webhookUrl,
          to: row.notificationEmailAddresses,
          failures: row.consecutiveFailures,
          failing_since: row.failingSince,
          last_error: error,
        },
      });
    }
    return next;
  });
}

/** The `webhook.alert` job: emails the subscription's notification addresses that it is failing or failed. */
export async function sendAlert(notifier: Notifier, job: Job): Promise<void> {
  const payload = job.payload as {
    webhook_id: string;
    status: string;
    webhook_url: string;
    to: string[];
    failures: number;
    failing_since: number | null;
    last_error: string;
  };
  const since = payload.failing_since !== null ? new Date(payload.failing_since * 1000).toISOString() : 'unknown';
  const text =
    payload.status === 'failed'
      ? `Your webhook ${payload.webhook_id} (${payload.webhook_url}) has failed every delivery since ${since} and is now "failed": no more notifications are sent to it.\n\n` +
        `Last error: ${payload.last_error}\n\nFix the endpoint, then set the webhook's status to "active" (PUT /v3/webhooks/${payload.webhook_id} {"status":"active"}); it will be challenged again.\n`
      : `Deliveries to your webhook ${payload.webhook_id} (${payload.webhook_url}) have failed ${payload.failures} times in a row since ${since}; it is now "failing".\n\n` +
        `Last error: ${payload.last_error}\n\nNotifications are still retried. If it keeps failing for 72 hours after the first failure it becomes "failed" and delivery stops.\n`;
  await notifier.send({ to: payload.to, subject: `Webhook ${payload.webhook_id} is ${payload.status}`, text });
}
