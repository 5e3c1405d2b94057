/**
 * @module outbox/outbox-dispatcher
 * Moves committed outbox events to their consumers: takes undispatched `outbox_events` rows in `seq` order,
 * hands each batch to every consumer (webhook fan-out enqueues one delivery job per matching subscription) and
 * marks the rows dispatched, all in ONE write transaction. An event is therefore fanned out exactly once, even
 * with several processes dispatching from one database: the batch is claimed by the UPDATE that marks it.
 * While no consumer is interested (no active webhook anywhere), events wait and nothing is written; consumers
 * must then ignore events older than their subscriptions (webhooks compare `seq` with their `start_seq`).
 */
import { asc, inArray, isNull } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { OutboxDispatcher } from './contracts.js';

/** An outbox row as consumers see it. */
export type OutboxRow = typeof tables.outboxEvents.$inferSelect;

/** Something that acts on outbox events (webhook fan-out). */
export interface OutboxConsumer {
  /**
   * Whether the consumer could act on any event now (e.g. some webhook subscription is active). While no
   * consumer is interested, events stay undispatched and the dispatcher makes no writes at all.
   */
  interested(): Promise<boolean>;
  /** Receives each batch inside the dispatching transaction; whatever it writes commits with the batch. */
  consume(tx: Tx, events: readonly OutboxRow[]): Promise<void>;
}

/** Rows taken per transaction. */
const BATCH_SIZE = 100;

/** Creates the dispatcher over the given consumers. */
export function createOutboxDispatcher(
  { db, clock }: Pick<CoreDeps, 'db' | 'clock'>,
  consumers: readonly OutboxConsumer[],
): OutboxDispatcher {
  async function interested(): Promise<boolean> {
    const interest = await Promise.all(consumers.map((consumer) => consumer.interested()));
    return interest.some(Boolean);
  }

  return {
    /** True when some consumer could act on events now (a cheap read). */
    interested,

    /** True when at least one event waits and some consumer is interested (cheap reads). */
    async hasPending(): Promise<boolean> {
      if (!(await interested())) return false;
      const rows = await db.orm
        .select({ seq: tables.outboxEvents.seq })
        .from(tables.outboxEvents)
        .where(isNull(tables.outboxEvents.dispatchedAt))
        .limit(1);
      return rows.length > 0;
    },

    /** Dispatches the oldest undispatched events (up to `limit`) and returns how many it took. */
    async dispatchBatch(limit = BATCH_SIZE): Promise<number> {
      return db.write(async (tx) => {
        const pending = tx
          .select({ seq: tables.outboxEvents.seq })
          .from(tables.outboxEvents)
          .where(isNull(tables.outboxEvents.dispatchedAt))
          .orderBy(asc(tables.outboxEvents.seq))
          .limit(limit);
        // The outer WHERE names the rows by seq only: with the dispatched test there too, SQLite walked every
        // undispatched row (the whole backlog) for each batch. One statement: nothing changes in between.
        const rows = await tx
          .update(tables.outboxEvents)
          .set({ dispatchedAt: unixSeconds(clock.now()) })
          .where(inArray(tables.outboxEvents.seq, pending))
          .returning();
        if (rows.length === 0) return 0;
        rows.sort((a, b) => a.seq - b.seq);
        for (const consumer of consumers) await consumer.consume(tx, rows);
        return rows.length;
      });
    },
  };
}

/** The dispatcher's type. */
export type { OutboxDispatcher } from './contracts.js';
