/**
 * @module outbox/contracts
 * The outbox area's declared interface: its services as other areas see them, and the types it shares.
 */

/** What createOutboxDispatcher() returns (src/outbox/outbox-dispatcher.ts). */
export interface OutboxDispatcher {
  /** True when some consumer could act on events now (a cheap read). */
  interested: () => Promise<boolean>;
  /** True when at least one event waits and some consumer is interested (cheap reads). */
  hasPending(): Promise<boolean>;
  /** Dispatches the oldest undispatched events (up to `limit`) and returns how many it took. */
  dispatchBatch(limit?: number): Promise<number>;
}
