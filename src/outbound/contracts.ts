/**
 * @module outbound/contracts
 * The outbound area's shared types: a queued message's row and the outcome of one delivery attempt, as the queue,
 * its attempts and the providers' submitters (src/providers/contracts.ts) exchange them.
 */
import type { tables } from '../../storage/index.js';

/** A queued outbound message (`outbound_messages`). */
export type OutboundRow = typeof tables.outboundMessages.$inferSelect;

/** What one attempt did for one recipient. */
export interface AttemptResult {
  email: string;
  outcome: 'delivered' | 'deferred' | 'failed';
  code: number;
  response: string;
  /**
   * Set when the failure is the queue giving up after retries (a `timeout` bounce), the queue's own loss of the
   * message (no bounce), or the sending account's server refusing the login (`account`: no bounce either).
   */
  cause?: 'timeout' | 'lost' | 'account' | undefined;
}
