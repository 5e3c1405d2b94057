/**
 * @module webhooks/webhook-service
 * Webhook subscriptions: create (after a challenge), list, find, update (a switch to `active` or a new URL is
 * challenged again), destroy, rotate-secret and ip-addresses, and the delivery log (./delivery-log.ts), every call
 * scoped to the calling application.
 * Delivery itself lives in ./delivery.ts.
 */
import { networkInterfaces } from 'node:os';
import { and, asc, eq, gt, or, type SQL } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps, HttpRequester } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError, notFound } from '../errors.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type {
  CreateWebhookInput,
  ListWebhooksInput,
  UpdateWebhookInput,
  Webhook,
  WebhookIpAddresses,
  WebhookWithSecret,
} from '../schemas/webhooks.js';
import type { WebhookService } from './contracts.js';
import { checkWebhookTarget, type CheckedTarget } from './address-policy.js';
import { newWebhookSecret } from './signatures.js';
import { createDeliveryLog } from './delivery-log.js';
import { newestOutboxSeq } from './webhook-store.js';

/** A subscription row. */
export type WebhookRow = typeof tables.webhooks.$inferSelect;

/** Sent as User-Agent on challenges and deliveries, so receivers can tell our requests apart. */
export const WEBHOOK_USER_AGENT = 'Agentpost-Webhooks/1.0';

/** Maps a row to its wire form (never the secret). */
export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    ...(row.description !== null ? { description: row.description } : {}),
    trigger_types: row.triggerTypes,
    webhook_url: row.webhookUrl,
    status: row.status,
    notification_email_addresses: row.notificationEmailAddresses,
    compressed_delivery: row.compressedDelivery,
    status_updated_at: row.statusUpdatedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The wire form with the secret (`secret` is the clear one; the row holds it sealed): only on create and rotate. */
function withSecret(row: WebhookRow, secret: string): WebhookWithSecret {
  return { ...toWebhook(row), webhook_secret: secret };
}

/** Options shared by the service and delivery: where and how requests go. */
export interface WebhookTransport {
  http: HttpRequester;
  timeoutMs: number;
  allowPrivate: boolean;
}

/**
 * The deadline of a challenge: the specification's 10 seconds, whatever the delivery deadline
 * (`AGENTPOST_WEBHOOK_TIMEOUT_MS`, up to 60 s) is.
 */
export const CHALLENGE_TIMEOUT_MS = 10_000;

/**
 * Verifies an endpoint: GET `<url>?challenge=<random>` must answer 200 with exactly the value as the body, within
 * {@link CHALLENGE_TIMEOUT_MS}, without redirects. Throws an `invalid_request` AppError on `webhook_url` that says
 * what went wrong.
 */
export async function runChallenge(
  target: CheckedTarget,
  value: string,
  { http }: Pick<WebhookTransport, 'http'>,
): Promise<void> {
  const timeoutMs = CHALLENGE_TIMEOUT_MS;
  const url = new URL(target.url);
  url.searchParams.set('challenge', value);
  const rule = `The endpoint must answer GET ${target.url.origin}${target.url.pathname}?challenge=<value> with status 200 and exactly <value> as the body within ${timeoutMs / 1000} s.`;
  const fail = (what: string) =>
    new AppError('invalid_request', `webhook_url: verification failed: ${what}. ${rule}`, { field: 'webhook_url' });
  let response;
  try {
    response = await http({
      url,
      address: target.address,
      method: 'GET',
      headers: { 'user-agent': WEBHOOK_USER_AGENT, accept: 'text/plain' },
      timeoutMs,
      maxResponseBytes: value.length + 1,
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw fail(
      code === 'ETIMEDOUT'
        ? `no answer within ${timeoutMs / 1000} s`
        : `the request failed (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (response.status >= 300 && response.status < 400)
    throw fail(`it answered with a redirect (HTTP ${response.status}); redirects are not followed`);
  if (response.status !== 200) throw fail(`it answered HTTP ${response.status}`);
  if (response.body.toString('utf8') !== value)
    throw fail('it answered 200 but the body was not exactly the challenge value');
}

/** Creates the webhook subscription service. */
export function createWebhookService(
  deps: CoreDeps,
  transport: WebhookTransport,
  onSubscriptionsChanged: () => void = () => undefined,
  onDeliveriesChanged: () => void = () => undefined,
): WebhookService {
  const { db, clock, newId, randomBytes, dns, secrets } = deps;
  const now = () => unixSeconds(clock.now());

  async function requireRow(principal: Principal, webhookId: string): Promise<WebhookRow> {
    const [row] = await db.orm
      .select()
      .from(tables.webhooks)
      .where(and(eq(tables.webhooks.id, webhookId), eq(tables.webhooks.applicationId, principal.applicationId)));
    if (!row) throw notFound('Webhook', webhookId);
    return row;
  }

  const check = (url: string) => checkWebhookTarget(url, { dns, allowPrivate: transport.allowPrivate });
  const challenge = (target: CheckedTarget) => runChallenge(target, randomBytes(16).toString('hex'), transport);
  const unique = <T>(items: readonly T[]) => [...new Set(items)];

  return {
    ...createDeliveryLog(deps, requireRow, onDeliveriesChanged),

    /** Checks the URL, challenges the endpoint, then stores the subscription as `active` with a new secret. */
    async create(principal: Principal, input: CreateWebhookInput): Promise<WebhookWithSecret> {
      const target = await check(input.webhook_url);
      await challenge(target);
      const at = now();
      const secret = newWebhookSecret(randomBytes(32));
      const [row] = await db.write(async (tx) => {
        // Events already recorded are not this subscription's: it starts after the newest one.
        const last = await newestOutboxSeq(tx);
        return tx
          .insert(tables.webhooks)
          .values({
            id: newId(),
            applicationId: principal.applicationId,
            description: input.description ?? null,
            triggerTypes: unique(input.trigger_types),
            webhookUrl: input.webhook_url,
            status: 'active',
            notificationEmailAddresses: unique(input.notification_email_addresses ?? []),
            // Sealed at rest; delivery opens it to sign (src/webhooks/delivery.ts).
            secret: secrets.seal(secret),
            compressedDelivery: input.compressed_delivery ?? false,
            startSeq: last ?? 0,
            statusUpdatedAt: at,
            createdAt: at,
            updatedAt: at,
          })
          .returning();
      });
      onSubscriptionsChanged();
      return withSecret(row!, secret);
    },

    /** The application's subscriptions, oldest first, cursor-paginated. */
    async list(principal: Principal, input: ListWebhooksInput): Promise<{ data: Webhook[]; next_cursor?: string }> {
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeCursor(input.page_token, 2);
      const conditions: SQL[] = [eq(tables.webhooks.applicationId, principal.applicationId)];
      if (after) {
        const [createdAt, id] = after as [number, string];
        conditions.push(
          or(
            gt(tables.webhooks.createdAt, createdAt),
            and(eq(tables.webhooks.createdAt, createdAt), gt(tables.webhooks.id, id)),
          )!,
        );
      }
      const rows = await db.orm
        .select()
        .from(tables.webhooks)
        .where(and(...conditions))
        .orderBy(asc(tables.webhooks.createdAt), asc(tables.webhooks.id))
        .limit(limit + 1);
      return toPage(rows, limit, (row) => [row.createdAt, row.id], toWebhook);
    },

    /** One subscription. */
    async find(principal: Principal, webhookId: string): Promise<Webhook> {
      return toWebhook(await requireRow(principal, webhookId));
    },

    /**
     * Changes a subscription. Switching to `active` (from pause, failing or failed), or changing the URL of a
     * subscription that is or becomes active, challenges the endpoint first; if that fails nothing changes.
     * A verified switch or URL change resets the failure counters.
     */
    async update(principal: Principal, input: UpdateWebhookInput): Promise<Webhook> {
      const current = await requireRow(principal, input.webhook_id);
      let webhookUrl = current.webhookUrl;
      if (input.webhook_url !== undefined) {
        await check(input.webhook_url);
        webhookUrl = input.webhook_url;
      }
      const urlChanged = webhookUrl !== current.webhookUrl;
      const requested = input.status ?? (current.status === 'pause' ? 'pause' : 'active');
      const switchesToActive = input.status === 'active' && current.status !== 'active';
      const verify = switchesToActive || (urlChanged && requested === 'active');
      if (verify) await challenge(await check(webhookUrl));

      let status = current.status;
      if (input.status === 'pause') status = 'pause';
      else if (verify) status = 'active';
      const at = now();
      const [row] = await db.write((tx) =>
        tx
          .update(tables.webhooks)
          .set({
            ...(input.description !== undefined ? { description: input.description } : {}),
            ...(input.trigger_types !== undefined ? { triggerTypes: unique(input.trigger_types) } : {}),
            ...(input.notification_email_addresses !== undefined
              ? { notificationEmailAddresses: unique(input.notification_email_addresses) }
              : {}),
            ...(input.compressed_delivery !== undefined ? { compressedDelivery: input.compressed_delivery } : {}),
            webhookUrl,
            status,
            ...(status !== current.status ? { statusUpdatedAt: at } : {}),
            ...(verify ? { consecutiveFailures: 0, failingSince: null, lastError: null } : {}),
            updatedAt: at,
          })
          .where(and(eq(tables.webhooks.id, current.id), eq(tables.webhooks.applicationId, principal.applicationId)))
          .returning(),
      );
      onSubscriptionsChanged();
      if (!row) throw notFound('Webhook', input.webhook_id);
      return toWebhook(row);
    },

    /** Deletes a subscription; deliveries still queued for it are dropped. */
    async destroy(principal: Principal, webhookId: string): Promise<{ status: 'success' }> {
      const removed = await db.write((tx) =>
        tx
          .delete(tables.webhooks)
          .where(and(eq(tables.webhooks.id, webhookId), eq(tables.webhooks.applicationId, principal.applicationId)))
          .returning({ id: tables.webhooks.id }),
      );
      onSubscriptionsChanged();
      if (removed.length === 0) throw notFound('Webhook', webhookId);
      return { status: 'success' };
    },

    /** Replaces the signing secret at once (attempts from now on, retries included, use the new one). */
    async rotateSecret(principal: Principal, webhookId: string): Promise<WebhookWithSecret> {
      const current = await requireRow(principal, webhookId);
      const secret = newWebhookSecret(randomBytes(32));
      const [row] = await db.write((tx) =>
        tx
          .update(tables.webhooks)
          .set({ secret: secrets.seal(secret), updatedAt: now() })
          .where(and(eq(tables.webhooks.id, current.id), eq(tables.webhooks.applicationId, principal.applicationId)))
          .returning(),
      );
      if (!row) throw notFound('Webhook', webhookId);
      return withSecret(row, secret);
    },

    /**
     * Addresses deliveries leave from: this host's non-internal interface addresses. Behind NAT or a proxy the
     * receiver sees the gateway's address instead.
     */
    async ipAddresses(): Promise<WebhookIpAddresses> {
      const addresses = Object.values(networkInterfaces())
        .flatMap((entries) => entries ?? [])
        .filter((entry) => !entry.internal)
        .map((entry) => entry.address);
      return { ip_addresses: [...new Set(addresses)], updated_at: now() };
    },
  };
}

/** The service's type. */
export type { WebhookService } from './contracts.js';
