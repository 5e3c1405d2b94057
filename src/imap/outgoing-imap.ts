/**
 * @module imap/outgoing-imap
 * The account's side of the outgoing jobs (./outgoing.ts): its row and endpoints, a logged-in connection, a
 * selected mailbox, and the links of messages to their UIDs.
 */
import { and, eq, inArray } from 'drizzle-orm';
import type { ImapFlow } from 'imapflow';
import { tables } from '../../storage/index.js';
import { imapAccounts, imapFolders, imapMessages } from '../../storage/schema/connected.js';
import { AppError } from '../errors.js';
import { endpointsOf } from './connection.js';
import type { AccountRow, LinkRow, OutgoingState } from './outgoing-state.js';

export async function accountOf(state: OutgoingState, grantId: string): Promise<AccountRow | undefined> {
  const [row] = await state.db.orm.select().from(imapAccounts).where(eq(imapAccounts.grantId, grantId)).limit(1);
  return row;
}

export function endpoints(state: OutgoingState, account: AccountRow) {
  if (!state.deps.secrets)
    throw new AppError('internal', 'No secret box (AGENTPOST_SECRET_KEY) to open the account passwords with.');
  return endpointsOf(account, state.deps.secrets);
}

/** The IMAP path of one of the grant's folders, when it has one on the server. */
export async function pathOf(state: OutgoingState, grantId: string, folderId: string): Promise<string | undefined> {
  const [row] = await state.db.orm
    .select({ path: imapFolders.path })
    .from(imapFolders)
    .where(and(eq(imapFolders.grantId, grantId), eq(imapFolders.folderId, folderId)))
    .limit(1);
  return row?.path;
}

/** Runs `work` on a logged-in connection to the account's IMAP server (none when the account is gone). */
export async function withImap(
  state: OutgoingState,
  grantId: string,
  work: (client: ImapFlow) => Promise<void>,
): Promise<void> {
  const account = await accountOf(state, grantId);
  if (!account) return;
  const session = await state.connector.openImap(endpoints(state, account).imap);
  try {
    await work(session.client);
  } finally {
    await session.close();
  }
}

/** Runs `work` with `path` selected. */
export async function inMailbox(client: ImapFlow, path: string, work: () => Promise<void>): Promise<void> {
  const lock = await client.getMailboxLock(path);
  try {
    await work();
  } finally {
    lock.release();
  }
}

/** Removes the links of expunged UIDs (the rows may be gone already: the link cascades with its message). */
export async function unlink(state: OutgoingState, grantId: string, path: string, uids: number[]): Promise<void> {
  if (uids.length === 0) return;
  await state.db.write((tx) =>
    tx
      .delete(imapMessages)
      .where(and(eq(imapMessages.grantId, grantId), eq(imapMessages.path, path), inArray(imapMessages.uid, uids))),
  );
}

/** Records a link when its message still exists (it may have been deleted while the job ran). */
export async function link(state: OutgoingState, row: Omit<LinkRow, 'modseq'>): Promise<void> {
  await state.db.write(async (tx) => {
    const [message] = await tx
      .select({ id: tables.messages.id })
      .from(tables.messages)
      .where(eq(tables.messages.id, row.messageId))
      .limit(1);
    if (!message) return;
    await tx
      .insert(imapMessages)
      .values(row)
      .onConflictDoUpdate({
        target: [imapMessages.grantId, imapMessages.path, imapMessages.uid],
        set: { messageId: row.messageId, flags: row.flags },
      });
  });
}
