/**
 * The transactional outbox and the jobs table: every webhook-visible change writes an outbox row in the
 * same transaction as the change; workers claim jobs with a lease.
 */
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const outboxEvents = sqliteTable(
  'outbox_events',
  {
    /** Monotonic sequence: the delivery order. */
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull().unique(),
    applicationId: text('application_id').notNull(),
    grantId: text('grant_id'),
    /** A webhook trigger type such as `message.created`. */
    type: text('type').notNull(),
    objectId: text('object_id'),
    /** The wire object as it stood when the change was committed. */
    payload: text('payload', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: integer('created_at').notNull(),
    dispatchedAt: integer('dispatched_at'),
  },
  (table) => [index('outbox_pending_idx').on(table.dispatchedAt, table.seq)],
);

export const jobs = sqliteTable(
  'jobs',
  {
    id: text('id').primaryKey(),
    kind: text('kind').notNull(),
    payload: text('payload', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    /** Unix milliseconds at which the job may run next. */
    runAt: integer('run_at').notNull(),
    attempts: integer('attempts').notNull().default(0),
    leaseOwner: text('lease_owner'),
    /** Unix milliseconds at which a claimed job's lease lapses and another worker may take it. */
    leaseExpiresAt: integer('lease_expires_at'),
    lastError: text('last_error'),
    /** Optional key that makes enqueueing idempotent. */
    dedupeKey: text('dedupe_key').unique(),
    createdAt: integer('created_at').notNull(),
    /** Unix milliseconds at which the queue gave up on the job; such a job is never claimed again (kept for inspection). */
    deadAt: integer('dead_at'),
    /**
     * Jobs with the same order key run one after another, in the order they were enqueued (rowid order): an ordered
     * claim skips a job while an earlier live job with its key is leased or waits for a retry. `<group> <rest>`:
     * webhook deliveries use `<webhook id> <grant id>`, so claims can leave out a whole group (a busy endpoint).
     */
    orderKey: text('order_key'),
  },
  // Claims walk live jobs in run_at order; the lease index finds the few leased jobs (when does one lapse?).
  // Ordered claims walk the table in rowid order (src/jobs/job-queue.ts) and need no index of their own.
  (table) => [index('jobs_due_idx').on(table.deadAt, table.runAt), index('jobs_lease_idx').on(table.leaseExpiresAt)],
);
