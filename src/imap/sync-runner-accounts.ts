/**
 * @module imap/sync-runner-accounts
 * The runner's reads and writes of an account row (./sync-runner.ts): its lease (claimed, given back, renewed), and
 * the outcome of a pass (under way, succeeded, failed with back-off or a refused login).
 */
import { and, eq, inArray, ne } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { imapAccounts } from '../../storage/schema/connected.js';
import { toGrant } from '../grants/index.js';
import { defaultBackoffMs } from '../jobs/index.js';
import type { ConnectFailure } from './connection.js';
import { leaseFree, RETRY_CAP_MS, type AccountRow, type RunnerState } from './sync-runner-state.js';

/** Takes the account's lease; false when another runner holds it. */
export async function claim(state: RunnerState, grantId: string): Promise<boolean> {
  const result = await state.db.write((tx) =>
    tx
      .update(imapAccounts)
      .set({ leaseOwner: state.owner, leaseUntil: state.nowMs() + state.config.imap.leaseMs })
      .where(and(eq(imapAccounts.grantId, grantId), leaseFree(state))),
  );
  return result.rowsAffected === 1;
}

/** Gives the account's lease back (a worker ended). */
export async function release(state: RunnerState, grantId: string): Promise<void> {
  await state.db.write((tx) =>
    tx
      .update(imapAccounts)
      .set({ leaseOwner: null, leaseUntil: null })
      .where(and(eq(imapAccounts.grantId, grantId), eq(imapAccounts.leaseOwner, state.owner))),
  );
}

/** Every third of the lease: renews this runner's leases; a worker whose account another runner took stops. */
export async function renew(state: RunnerState): Promise<void> {
  if (state.workers.size === 0 || state.nowMs() - state.renewedAt < state.config.imap.leaseMs / 3) return;
  state.renewedAt = state.nowMs();
  const active = [...state.workers.keys()];
  const held = await state.db.write((tx) =>
    tx
      .update(imapAccounts)
      .set({ leaseUntil: state.nowMs() + state.config.imap.leaseMs })
      .where(and(eq(imapAccounts.leaseOwner, state.owner), inArray(imapAccounts.grantId, active)))
      .returning({ grantId: imapAccounts.grantId }),
  );
  const kept = new Set(held.map((row) => row.grantId));
  for (const grantId of active) {
    const worker = state.workers.get(grantId);
    if (!worker || kept.has(grantId)) continue;
    state.logger.warn('imap: another process holds the account now; this one stops syncing it', { grant_id: grantId });
    worker.lost = true;
    worker.wake();
    worker.session?.client.close();
  }
}

export async function accountOf(state: RunnerState, grantId: string): Promise<AccountRow | undefined> {
  const [row] = await state.db.orm.select().from(imapAccounts).where(eq(imapAccounts.grantId, grantId)).limit(1);
  return row;
}

/** A pass finished: the failures are over, and a full pass marks the account synced. */
export async function succeeded(state: RunnerState, grantId: string, full: boolean): Promise<void> {
  await state.db.write((tx) =>
    tx
      .update(imapAccounts)
      .set({
        failures: 0,
        retryAt: null,
        lastError: null,
        ...(full ? { syncState: 'idle' as const, lastSyncAt: Math.floor(state.nowMs() / 1000) } : {}),
        updatedAt: state.nowMs(),
      })
      .where(and(eq(imapAccounts.grantId, grantId), ne(imapAccounts.syncState, 'invalid'))),
  );
}

/** A pass failed: back-off, or (login refused) the account and grant invalid with `grant.expired` once. */
export async function failed(state: RunnerState, grantId: string, failure: ConnectFailure): Promise<void> {
  await state.db.write(async (tx) => {
    const [account] = await tx.select().from(imapAccounts).where(eq(imapAccounts.grantId, grantId));
    if (!account) return;
    const failures = account.failures + 1;
    if (failure.kind === 'auth') {
      await tx
        .update(imapAccounts)
        .set({ syncState: 'invalid', failures, retryAt: null, lastError: failure.message, updatedAt: state.nowMs() })
        .where(eq(imapAccounts.grantId, grantId));
      const [grant] = await tx.select().from(tables.grants).where(eq(tables.grants.id, grantId));
      if (grant && grant.grantStatus !== 'invalid') {
        const at = Math.floor(state.nowMs() / 1000);
        const [updated] = await tx
          .update(tables.grants)
          .set({ grantStatus: 'invalid', updatedAt: at })
          .where(eq(tables.grants.id, grantId))
          .returning();
        await state.record(tx, {
          applicationId: grant.applicationId,
          grantId,
          type: 'grant.expired',
          objectId: grantId,
          object: toGrant(updated ?? grant),
          createdAt: at,
        });
      }
      return;
    }
    const retryAt = state.nowMs() + Math.min(defaultBackoffMs(failures), RETRY_CAP_MS);
    await tx
      .update(imapAccounts)
      .set({ syncState: 'failing', failures, retryAt, lastError: failure.message, updatedAt: state.nowMs() })
      .where(eq(imapAccounts.grantId, grantId));
  });
  if (failure.kind === 'auth')
    state.logger.warn('imap: the server refused the login; the grant is invalid until re-authenticated', {
      grant_id: grantId,
      error: failure.message,
    });
  else state.logger.warn('imap: a sync pass failed; it will be retried', { grant_id: grantId, error: failure.message });
}

/** Marks the pass under way (`initial` until the initial sync completed, `running` after). */
export async function starting(runner: RunnerState, account: AccountRow): Promise<void> {
  const state = account.lastSyncAt === null ? 'initial' : 'running';
  if (account.syncState === state) return;
  await runner.db.write((tx) =>
    tx
      .update(imapAccounts)
      .set({ syncState: state, updatedAt: runner.nowMs() })
      .where(and(eq(imapAccounts.grantId, account.grantId), ne(imapAccounts.syncState, 'invalid'))),
  );
}
