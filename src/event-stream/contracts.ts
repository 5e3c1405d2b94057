/**
 * @module event-stream/contracts
 * The event stream's declared interface (issue 40, item 1; docs/webhooks.md#the-event-stream): a stream of the
 * outbox's events for one caller, filtered by application, grants and trigger types, resumable by cursor.
 */
import type { DeliveryPayload } from '../webhooks/index.js';

/** Which events a stream carries. */
export interface EventStreamFilter {
  applicationId: string;
  /** Only these grants' events (a grant-scoped key's, or the ones asked for); undefined: every event of the application. */
  grantIds?: ReadonlySet<string> | undefined;
  /** Only these trigger types; undefined: every type. */
  types?: ReadonlySet<string> | undefined;
  /** Whether the caller may see an event of this type at all (its key's permissions). */
  allowType?: ((type: string) => boolean) | undefined;
}

/** One event of a stream: its cursor (resume after it) and the notification webhooks carry for it (the same id). */
export interface StreamedEvent {
  cursor: string;
  notification: DeliveryPayload['notification'];
}

/** An open stream: its events as they are committed, until `close` (or the hub closes it). */
export interface EventSubscription extends AsyncIterable<StreamedEvent> {
  close(): void;
  /** The cursor of the last event this stream read past (delivered or filtered out). */
  readonly position: string;
}

/** What createEventHub() returns (./event-hub.ts). */
export interface EventHub {
  /**
   * Opens a stream after `cursor` (an earlier stream's; absent: from now on). A cursor older than the outbox keeps is
   * a `gone` AppError (type `cursor_expired`); a cursor ahead of the newest event an `invalid_request`.
   */
  open(filter: EventStreamFilter, cursor?: string): Promise<EventSubscription>;
  /** Ends every stream (shutdown). */
  close(): void;
}
