/**
 * @module outbox/outbox
 * The transactional outbox: a change that a webhook trigger names writes its event in the same transaction.
 */
import { tables, type Tx } from '../../storage/index.js';
import { unixSeconds } from '../time.js';
import type { Clock, IdGenerator } from '../ports/index.js';
import type { TRIGGER_TYPES } from '../schemas/webhooks.js';

/** A webhook trigger type (the list is the wire contract's, src/schemas/webhooks.ts). */
export type TriggerType = (typeof TRIGGER_TYPES)[number];

/** One event to record. `object` is the wire object as it stands after the change. */
export interface OutboxEvent {
  id: string;
  applicationId: string;
  grantId?: string | undefined;
  type: TriggerType;
  objectId?: string | undefined;
  object: Record<string, unknown>;
  createdAt: number;
}

const recordedListeners = new Set<(committed: boolean) => void>();

/**
 * Calls `listener` (soon after, in a microtask) whenever this process records an event, so the outbox dispatcher
 * need not wait for its next poll. Its claim is a write, which runs after the recording transaction commits.
 * `committed` says whether the event is already committed (the mail writer announces after its commit) or is being
 * recorded in a transaction still open (a reader must wait for this process's write lock to see it).
 * Returns the unsubscribe function.
 */
export function onEventRecorded(listener: (committed: boolean) => void): () => void {
  recordedListeners.add(listener);
  return () => recordedListeners.delete(listener);
}

/**
 * Tells this process's listeners that events were recorded. {@link recordEvent} does it (`committed` false: the
 * transaction is still open); a writer that records events another way (the mail writer thread) calls it once they
 * committed.
 */
export function announceRecordedEvents(committed = true): void {
  if (recordedListeners.size > 0) {
    queueMicrotask(() => {
      for (const listener of recordedListeners) listener(committed);
    });
  }
}

/** Writes the event inside the caller's transaction, so it exists if and only if the change does. */
export async function recordEvent(tx: Tx, event: OutboxEvent): Promise<void> {
  announceRecordedEvents(false);
  await tx.insert(tables.outboxEvents).values({
    id: event.id,
    applicationId: event.applicationId,
    grantId: event.grantId ?? null,
    type: event.type,
    objectId: event.objectId ?? null,
    payload: event.object,
    createdAt: event.createdAt,
  });
}

/** An event as a service writes it: the id is made, `objectId` defaults to `object.id`, `createdAt` to now. */
export type NewOutboxEvent = Omit<OutboxEvent, 'id' | 'createdAt' | 'objectId'> & {
  objectId?: string | undefined;
  createdAt?: number;
};

/** The `<kind>.deleted` event of an object of a grant: its id, grant and kind are all a deleted object still has. */
export function deletedEvent(
  applicationId: string,
  grantId: string,
  kind: 'calendar' | 'contact' | 'folder',
  id: string,
): NewOutboxEvent {
  return { applicationId, grantId, type: `${kind}.deleted`, object: { id, grant_id: grantId, object: kind } };
}

/** Binds {@link recordEvent} to a service's id generator and clock, so call sites name only what changed. */
export function eventRecorder({ newId, clock }: { newId: IdGenerator; clock: Clock }) {
  return (tx: Tx, event: NewOutboxEvent): Promise<void> =>
    recordEvent(tx, {
      ...event,
      id: newId(),
      objectId: event.objectId ?? (typeof event.object.id === 'string' ? event.object.id : undefined),
      createdAt: event.createdAt ?? unixSeconds(clock.now()),
    });
}
