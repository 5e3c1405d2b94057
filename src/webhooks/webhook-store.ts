/**
 * @module webhooks/webhook-store
 * The writes of a webhook's delivery health that SQL computes from the row itself (a failure counted, a success
 * that returns `failing` to `active`), the newest outbox event a new subscription starts after, and the reads and
 * the revival of a webhook's queued deliveries (its delivery log).
 */
import { and, desc, eq, gte, isNotNull, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { tables, type Executor, type Tx } from '../../storage/index.js';
import type { WEBHOOK_DELIVERY_STATUSES } from '../schemas/webhooks.js';

type WebhookRow = typeof tables.webhooks.$inferSelect;

/** The job kind of one notification's delivery to one webhook (./delivery.ts makes them). */
export const WEBHOOK_DELIVERY_JOB = 'webhook.deliver';

/** The seq of the newest outbox event, or null when there is none. */
export async function newestOutboxSeq(db: Executor): Promise<number | null> {
  const [last] = await db
    .select({ seq: sql<number | null>`max(${tables.outboxEvents.seq})` })
    .from(tables.outboxEvents);
  return last?.seq ?? null;
}

/** Resets the failure run; a `failing` webhook becomes `active` again, its status time set to `at` (unix seconds). */
export async function markDelivered(tx: Tx, webhookId: string, at: number): Promise<void> {
  await tx
    .update(tables.webhooks)
    .set({
      consecutiveFailures: 0,
      failingSince: null,
      lastError: null,
      status: sql`case when ${tables.webhooks.status} = 'failing' then 'active' else ${tables.webhooks.status} end`,
      statusUpdatedAt: sql`case when ${tables.webhooks.status} = 'failing' then ${at} else ${tables.webhooks.statusUpdatedAt} end`,
    })
    .where(eq(tables.webhooks.id, webhookId));
}

/** Counts a failure: one more in the run, failing since `at` unless already, the error kept; the row after, if any. */
export async function countFailure(
  tx: Tx,
  webhookId: string,
  error: string,
  at: number,
): Promise<WebhookRow | undefined> {
  const [row] = await tx
    .update(tables.webhooks)
    .set({
      consecutiveFailures: sql`${tables.webhooks.consecutiveFailures} + 1`,
      failingSince: sql`coalesce(${tables.webhooks.failingSince}, ${at})`,
      lastError: error.slice(0, 500),
    })
    .where(eq(tables.webhooks.id, webhookId))
    .returning();
  return row;
}

/** A queued delivery job, as the delivery log reads it. */
export type DeliveryJobRow = typeof tables.jobs.$inferSelect;

/**
 * The delivery jobs (`kind`) of one webhook, newest first: its order keys are `<webhook id> <grant id>`, so the
 * range from `<id> ` to `<id>!` (the next character after the space) holds exactly its jobs. `status` narrows to
 * dead jobs (`failed`), live ones with an error (`retrying`) or live ones without (`queued`). Fetches `limit + 1`.
 */
export async function listDeliveryJobs(
  db: Executor,
  query: {
    kind: string;
    webhookId: string;
    status: (typeof WEBHOOK_DELIVERY_STATUSES)[number] | undefined;
    after: readonly [number, string] | undefined;
    limit: number;
  },
): Promise<DeliveryJobRow[]> {
  const { jobs } = tables;
  const conditions: SQL[] = [
    eq(jobs.kind, query.kind),
    gte(jobs.orderKey, `${query.webhookId} `),
    lt(jobs.orderKey, `${query.webhookId}!`),
  ];
  if (query.status === 'failed') conditions.push(isNotNull(jobs.deadAt));
  if (query.status === 'retrying') conditions.push(isNull(jobs.deadAt), isNotNull(jobs.lastError));
  if (query.status === 'queued') conditions.push(isNull(jobs.deadAt), isNull(jobs.lastError));
  if (query.after) {
    const [createdAt, id] = query.after;
    conditions.push(or(lt(jobs.createdAt, createdAt), and(eq(jobs.createdAt, createdAt), lt(jobs.id, id)))!);
  }
  return db
    .select()
    .from(jobs)
    .where(and(...conditions))
    .orderBy(desc(jobs.createdAt), desc(jobs.id))
    .limit(query.limit + 1);
}

/**
 * Makes a delivery job of this webhook due at `at` (unix ms): a dead one lives again, a waiting one stops waiting.
 * A job leased right now (an attempt in flight) is left alone. Returns the job after, or undefined when no such job
 * is there to retry (unknown, delivered since, or in flight).
 */
export async function reviveDeliveryJob(
  tx: Tx,
  query: { kind: string; webhookId: string; jobId: string; at: number },
): Promise<DeliveryJobRow | undefined> {
  const { jobs } = tables;
  const [row] = await tx
    .update(jobs)
    .set({ deadAt: null, runAt: query.at, leaseOwner: null, leaseExpiresAt: null })
    .where(
      and(
        eq(jobs.id, query.jobId),
        eq(jobs.kind, query.kind),
        gte(jobs.orderKey, `${query.webhookId} `),
        lt(jobs.orderKey, `${query.webhookId}!`),
        or(isNull(jobs.leaseExpiresAt), lt(jobs.leaseExpiresAt, query.at), isNotNull(jobs.deadAt)),
      ),
    )
    .returning();
  return row;
}
