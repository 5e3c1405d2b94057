/**
 * @module calendar/event-store
 * Writes of event rows inside a caller's transaction, each with its outbox event (`event.created`,
 * `event.updated`, `event.deleted`) in the same transaction. Shared by the API service and the handling
 * of incoming invitations.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { eventRecorder } from '../outbox/index.js';
import type { EventInsert, EventRow, EventStore } from './contracts.js';
import { toEvent } from './event-mapper.js';

/** Creates the store. */
export function createEventStore({ newId, clock }: Pick<CoreDeps, 'newId' | 'clock'>): EventStore {
  const record = eventRecorder({ newId, clock });
  const outbox = (
    tx: Tx,
    grant: GrantRow,
    type: 'event.created' | 'event.updated' | 'event.deleted',
    row: EventRow,
    at: number,
  ) =>
    record(tx, {
      applicationId: grant.applicationId,
      grantId: grant.id,
      type,
      objectId: row.id,
      object: toEvent(row),
      createdAt: at,
    });

  return {
    /** Inserts an event row. */
    async insert(tx: Tx, grant: GrantRow, values: EventInsert): Promise<EventRow> {
      const [row] = await tx.insert(tables.events).values(values).returning();
      await outbox(tx, grant, 'event.created', row!, values.updatedAt);
      return row!;
    },

    /** Changes an event row (`updatedAt` in the patch). */
    async update(
      tx: Tx,
      grant: GrantRow,
      row: EventRow,
      patch: Partial<EventInsert> & { updatedAt: number },
    ): Promise<EventRow> {
      const [updated] = await tx
        .update(tables.events)
        .set(patch)
        .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.id, row.id)))
        .returning();
      await outbox(tx, grant, 'event.updated', updated!, patch.updatedAt);
      return updated!;
    },

    /** Deletes an event row, and a series master's overrides with it (one `event.deleted` for the event). */
    async remove(tx: Tx, grant: GrantRow, row: EventRow, at: number): Promise<void> {
      if (row.masterEventId === null) {
        await tx
          .delete(tables.events)
          .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.masterEventId, row.id)));
      }
      await tx.delete(tables.events).where(and(eq(tables.events.grantId, grant.id), eq(tables.events.id, row.id)));
      await outbox(tx, grant, 'event.deleted', row, at);
    },

    /** The overrides stored for a series. */
    async overridesOf(tx: Tx, grant: GrantRow, masterId: string): Promise<EventRow[]> {
      return tx
        .select()
        .from(tables.events)
        .where(and(eq(tables.events.grantId, grant.id), eq(tables.events.masterEventId, masterId)));
    },
  };
}

export type { EventStore } from './contracts.js';
