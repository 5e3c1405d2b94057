/**
 * @module messages/message-writes
 * The message service's writes (./message-service.ts): update (read, starred, folders, metadata) and delete (to
 * trash; from trash, for good), each in one write transaction with its `message.updated` event.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { tables, type Executor } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import type { DeleteMessageInput, Message, UpdateMessageInput } from '../schemas/messages.js';
import { emitUpdated, requireMessage, type MessageState } from './message-state.js';

/** The trash folder: deleting a message moves it here; deleting it here removes it for good. */
export const TRASH_FOLDER = 'trash';

/** Validates folder ids against the mailbox (400 naming the unknown one). */
export async function checkFolders(db: Executor, grantId: string, folderIds: string[]): Promise<string[]> {
  const unique = [...new Set(folderIds)];
  const rows = await db
    .select({ id: tables.folders.id })
    .from(tables.folders)
    .where(and(eq(tables.folders.grantId, grantId), inArray(tables.folders.id, unique)));
  const known = new Set(rows.map((row) => row.id));
  const missing = unique.find((id) => !known.has(id));
  if (missing !== undefined) {
    throw new AppError(
      'invalid_request',
      `folders: there is no folder ${JSON.stringify(missing)} in this mailbox; list folders with GET /v3/grants/{grant_id}/folders.`,
      { field: 'folders' },
    );
  }
  return unique;
}

/** Marks read/unread, stars, moves (folders replace the current set) or sets metadata. */
export async function updateMessage(
  state: MessageState,
  principal: Principal,
  input: UpdateMessageInput,
): Promise<Message> {
  const grant = await state.grants.require(principal, input.grant_id);
  return state.db.write(async (tx) => {
    const row = await requireMessage(tx, grant.id, input.message_id);
    const folders = input.folders ? await checkFolders(tx, grant.id, input.folders) : undefined;
    const changes = { unread: input.unread, starred: input.starred, folders, metadata: input.metadata };
    const [updated] = await state.store.change(tx, [row], changes);
    await state.providers.of(grant).changed(tx, grant, [updated!], changes);
    const [message] = await emitUpdated(state, tx, principal.applicationId, [updated!]);
    return message!;
  });
}

/** Moves the message to trash; a message already in trash (or `hard_delete`) is deleted for good. */
export async function destroyMessage(
  state: MessageState,
  principal: Principal,
  input: DeleteMessageInput,
): Promise<void> {
  const grant = await state.grants.require(principal, input.grant_id);
  await state.db.write(async (tx) => {
    const row = await requireMessage(tx, grant.id, input.message_id);
    if (input.hard_delete === true || row.folders.includes(TRASH_FOLDER)) {
      await state.providers.of(grant).destroying(tx, grant, [row]);
      await state.destroyForGood(tx, principal.applicationId, [row]);
      return;
    }
    const [updated] = await state.store.change(tx, [row], { folders: [TRASH_FOLDER] });
    await state.providers.of(grant).changed(tx, grant, [updated!], { folders: [TRASH_FOLDER] });
    await emitUpdated(state, tx, principal.applicationId, [updated!]);
  });
}
