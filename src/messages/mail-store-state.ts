/**
 * @module messages/mail-store-state
 * What the writes of the mail store (./mail-store.ts) share: the state `createMailStore` makes once.
 */
import type { Clock, IdGenerator } from '../ports/index.js';
import type { eventRecorder } from '../outbox/index.js';

/** What the functions of the mail store share, made once by `createMailStore`. */
export interface MailStoreState {
  newId: IdGenerator;
  clock: Clock;
  /** Records an outbox event in the caller's transaction. */
  record: ReturnType<typeof eventRecorder>;
}
