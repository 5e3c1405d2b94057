/**
 * @module messages/message-service
 * Messages of a mailbox: list (Nylas filters, keyset pages that stay correct while mail arrives), find, raw
 * MIME, update (read, starred, folders, metadata) and delete (to trash; from trash, for good).
 *
 * The service is plain functions over a small state made here: its reads (./message-reads.ts), its writes
 * (./message-writes.ts) and what they share (./message-state.ts).
 */
import { inArray } from 'drizzle-orm';
import { tables, type Tx } from '../../storage/index.js';
import { messageIdByHeader } from './message-query-store.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import type { GrantService } from '../grants/contracts.js';
import type {
  CleanMessagesInput,
  DeleteMessageInput,
  GetMessageInput,
  ListMessagesInput,
  UpdateMessageInput,
} from '../schemas/messages.js';
import { createProviders, type Providers } from '../providers/index.js';
import { createTrustReader } from '../trust/index.js';
import type { DestroyForGood, MailStore, MessageService, SentStateLookup } from './contracts.js';
import { createMessageJsonCache } from './message-json-cache.js';
import type { MessageRow } from './message-mapper.js';
import { cleanMessages, findMessage, listMessages, listMessagesJson, rawMime } from './message-reads.js';
import { emitUpdated, type MessageState } from './message-state.js';
import { destroyMessage, updateMessage } from './message-writes.js';

/**
 * Creates the delete for good of stored messages (thread aggregates, attachments, raw MIME) with `message.deleted`
 * recorded for each. Draft rows (a thread deleted with its drafts) go too, but silently: a draft is never a message,
 * not even in a notification. The message service uses it, and so do parts built before it (the sync of connected
 * accounts, policy upkeep).
 */
export function createMessageDestroyer(
  { newId, clock }: Pick<CoreDeps, 'newId' | 'clock'>,
  store: Pick<MailStore, 'destroy'>,
): DestroyForGood {
  const record = eventRecorder({ newId, clock });
  return async function destroyForGood(tx: Tx, applicationId: string, rows: MessageRow[]): Promise<void> {
    const ids = rows.map((row) => row.id);
    const drafts = new Set(
      ids.length === 0
        ? []
        : (
            await tx
              .select({ id: tables.draftDetails.messageId })
              .from(tables.draftDetails)
              .where(inArray(tables.draftDetails.messageId, ids))
          ).map((row) => row.id),
    );
    await store.destroy(tx, rows);
    const at = unixSeconds(clock.now());
    for (const row of rows) {
      if (drafts.has(row.id)) continue;
      await record(tx, {
        applicationId,
        grantId: row.grantId,
        type: 'message.deleted',
        objectId: row.id,
        object: { id: row.id, grant_id: row.grantId, object: 'message', thread_id: row.threadId },
        createdAt: at,
      });
    }
  };
}

/**
 * Creates the message service. `sentState` adds `delivery_status` (and tracking options) to the messages this mailbox
 * sent; `providers` pushes changes of a connected account's messages to its server (default: all hosted).
 */
export function createMessageService(
  { db, newId, clock, config }: CoreDeps,
  grants: GrantService,
  store: MailStore,
  sentState?: SentStateLookup,
  providers: Providers = createProviders(),
): MessageService {
  const state: MessageState = {
    db,
    clock,
    config,
    grants,
    store,
    sentState,
    providers,
    record: eventRecorder({ newId, clock }),
    destroyForGood: createMessageDestroyer({ newId, clock }, store),
    jsonCache: config.messageJsonCacheBytes > 0 ? createMessageJsonCache(config.messageJsonCacheBytes) : undefined,
    pageBytes: new WeakMap<object, Buffer>(),
    trustReader: createTrustReader({ db }),
  };

  return {
    /** A page of messages, newest first. */
    list: (principal: Principal, input: ListMessagesInput) => listMessages(state, principal, input),
    /**
     * The page `list` answers, as JSON text: `data` is the text of the array of messages (each the same bytes
     * `JSON.stringify` gives the message `list` returns), built from the kept wire JSON of each message at its current
     * revision (src/messages/message-json-cache.ts); only messages not kept, or changed since, are loaded and
     * serialised. Undefined when the cache is off or the request asks for another shape (`fields`, `select`): then
     * `list` answers.
     */
    listJson: (principal: Principal, input: ListMessagesInput) => listMessagesJson(state, principal, input),
    /** One message. */
    find: (principal: Principal, input: GetMessageInput) => findMessage(state, principal, input),
    /** The id of the grant's message with this Message-ID (a mail client's reply names it in In-Reply-To), if any. */
    idByHeaderMessageId: async (principal: Principal, grantRef: string, headerMessageId: string) =>
      messageIdByHeader(db.orm, (await grants.require(principal, grantRef)).id, headerMessageId),
    /** The given messages with their cleaned `conversation` (in the order asked; 404 for an unknown id). */
    clean: (principal: Principal, input: CleanMessagesInput) => cleanMessages(state, principal, input),
    /** The message exactly as received. */
    rawMime: (principal: Principal, input: { grant_id: string; message_id: string }) =>
      rawMime(state, principal, input),
    /** Marks read/unread, stars, moves (folders replace the current set) or sets metadata. */
    update: (principal: Principal, input: UpdateMessageInput) => updateMessage(state, principal, input),
    /** Moves the message to trash; a message already in trash (or `hard_delete`) is deleted for good. */
    destroy: (principal: Principal, input: DeleteMessageInput) => destroyMessage(state, principal, input),
    /** Records `message.updated` for each changed message (in the caller's transaction); returns their wire form. */
    emitUpdated: (tx: Tx, applicationId: string, rows: MessageRow[]) => emitUpdated(state, tx, applicationId, rows),
    /** Deletes stored messages for good, with `message.deleted` for each that is not a draft. */
    destroyForGood: state.destroyForGood,
  };
}
