/**
 * @module events/outbox
 * The transactional outbox: a change that a webhook trigger names writes its event in the same transaction.
 */
import { tables, type Tx } from '../../storage/index.js';

/** Webhook trigger types this service emits (and accepts in subscriptions). */
export const TRIGGER_TYPES = [
  'grant.created',
  'grant.updated',
  'grant.deleted',
  'grant.expired',
  'message.created',
  'message.updated',
  'message.send_success',
  'message.send_failed',
  'message.bounce_detected',
  'message.opened',
  'message.link_clicked',
  'thread.replied',
  'event.created',
  'event.updated',
  'event.deleted',
  'calendar.created',
  'calendar.updated',
  'calendar.deleted',
  'contact.updated',
  'contact.deleted',
  'folder.created',
  'folder.updated',
  'folder.deleted',
] as const;
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

/** Writes the event inside the caller's transaction, so it exists if and only if the change does. */
export async function recordEvent(tx: Tx, event: OutboxEvent): Promise<void> {
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
