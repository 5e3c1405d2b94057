/**
 * @module oversight/thread-claims-store
 * Reads and writes of thread claims (`thread_claims`, issue 40, item 4): one row per grant and thread, replaced when
 * a lapsed claim is taken again.
 */
import { and, eq, gt, inArray } from 'drizzle-orm';
import { tables, type Database, type Executor } from '../../storage/index.js';

const { threadClaims, threads } = tables;

/** A claim as stored. */
export type ClaimRow = typeof threadClaims.$inferSelect;

/** The claim row of a thread (lapsed or not). */
export async function claimOf(orm: Executor, grantId: string, threadId: string): Promise<ClaimRow | undefined> {
  const [row] = await orm
    .select()
    .from(threadClaims)
    .where(and(eq(threadClaims.grantId, grantId), eq(threadClaims.threadId, threadId)))
    .limit(1);
  return row;
}

/** Writes a claim, replacing the thread's row. */
export async function putClaim(orm: Executor, row: ClaimRow): Promise<void> {
  await orm
    .insert(threadClaims)
    .values(row)
    .onConflictDoUpdate({
      target: [threadClaims.grantId, threadClaims.threadId],
      set: {
        applicationId: row.applicationId,
        tokenHash: row.tokenHash,
        keyId: row.keyId,
        keyName: row.keyName,
        session: row.session,
        expiresAt: row.expiresAt,
        createdAt: row.createdAt,
      },
    });
}

/** Deletes a thread's claim when its token hash is this one: whether it did. */
export async function deleteClaim(
  orm: Executor,
  grantId: string,
  threadId: string,
  tokenHash: string,
): Promise<boolean> {
  const deleted = await orm
    .delete(threadClaims)
    .where(
      and(
        eq(threadClaims.grantId, grantId),
        eq(threadClaims.threadId, threadId),
        eq(threadClaims.tokenHash, tokenHash),
      ),
    )
    .returning({ threadId: threadClaims.threadId });
  return deleted.length > 0;
}

/** The claims of some threads of a grant still running at `atMs`. */
export async function liveClaims(
  db: Database,
  grantId: string,
  threadIds: string[],
  atMs: number,
): Promise<ClaimRow[]> {
  if (threadIds.length === 0) return [];
  return db.orm
    .select()
    .from(threadClaims)
    .where(
      and(
        eq(threadClaims.grantId, grantId),
        inArray(threadClaims.threadId, threadIds.slice(0, 500)),
        gt(threadClaims.expiresAt, atMs),
      ),
    );
}

/** Whether a thread of a grant exists. */
export async function threadExists(db: Database, grantId: string, threadId: string): Promise<boolean> {
  const [row] = await db.orm
    .select({ id: threads.id })
    .from(threads)
    .where(and(eq(threads.id, threadId), eq(threads.grantId, grantId)))
    .limit(1);
  return row !== undefined;
}
