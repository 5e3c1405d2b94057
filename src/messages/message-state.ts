/**
 * @module messages/message-state
 * What the message service's reads and writes (./message-service.ts) share: the state `createMessageService` makes,
 * a message of a mailbox by id, and the `message.updated` events of changed messages.
 */
import type { TrustReader } from '../trust/index.js';
import { and, eq } from 'drizzle-orm';
import { tables, type Executor, type Tx } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { notFound } from '../errors.js';
import type { eventRecorder } from '../outbox/index.js';
import type { GrantService } from '../grants/contracts.js';
import type { Message } from '../schemas/messages.js';
import type { Providers } from '../providers/index.js';
import type { DestroyForGood, MailStore, SentStateLookup } from './contracts.js';
import { presentMessages } from './mail-store.js';
import type { MessageJsonCache } from './message-json-cache.js';
import { notDraft } from './message-query-store.js';
import type { MessageRow } from './message-mapper.js';

/** What the functions of the message service share, made once by `createMessageService`. */
export interface MessageState {
  db: CoreDeps['db'];
  clock: CoreDeps['clock'];
  config: CoreDeps['config'];
  grants: GrantService;
  store: MailStore;
  /** Adds `delivery_status` (and tracking options) to the messages this mailbox sent; undefined: none. */
  sentState: SentStateLookup | undefined;
  /** Pushes changes of a connected account's messages to its server. */
  providers: Providers;
  /** Records an outbox event in the caller's transaction. */
  record: ReturnType<typeof eventRecorder>;
  destroyForGood: DestroyForGood;
  /** The wire JSON of messages kept by revision; undefined when the cache is off. */
  jsonCache: MessageJsonCache | undefined;
  /**
   * A page's JSON array by the very keys it was made from. Keys of the usual list are kept while the database is
   * unchanged (`firstPageKeys`, `pageKeysAfter`): the same array means no commit anywhere since, so neither the
   * messages nor their delivery status changed. Lives as long as those keys are kept (at most 256 sets).
   */
  pageBytes: WeakMap<object, Buffer>;
  /** The `trust` block, computed at read time (src/trust/trust-reader.ts; docs/reading.md says why). */
  trustReader: TrustReader;
}

/** The message (not a draft) of the mailbox, or 404. */
export async function requireMessage(executor: Executor, grantId: string, messageId: string): Promise<MessageRow> {
  const rows = await executor
    .select()
    .from(tables.messages)
    .where(and(eq(tables.messages.grantId, grantId), eq(tables.messages.id, messageId), notDraft()))
    .limit(1);
  if (!rows[0]) throw notFound('Message', messageId);
  return rows[0];
}

/** Records `message.updated` for each changed message; returns their wire form. */
export async function emitUpdated(
  state: MessageState,
  tx: Tx,
  applicationId: string,
  rows: MessageRow[],
): Promise<Message[]> {
  const messages = await presentMessages(tx, rows);
  const at = unixSeconds(state.clock.now());
  for (const message of messages) {
    await state.record(tx, {
      applicationId,
      grantId: message.grant_id,
      type: 'message.updated',
      objectId: message.id,
      object: message,
      createdAt: at,
    });
  }
  return messages;
}
