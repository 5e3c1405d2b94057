/**
 * @module webhooks/webhook-store
 * The writes of a webhook's delivery health that SQL computes from the row itself (a failure counted, a success
 * that returns `failing` to `active`), and the newest outbox event a new subscription starts after.
 */
import { eq, sql } from 'drizzle-orm';
import { tables, type Executor, type Tx } from '../../storage/index.js';

type WebhookRow = typeof tables.webhooks.$inferSelect;

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
