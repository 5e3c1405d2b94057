/**
 * @module grants/grant-state
 * What the grant service's parts (./grant-service.ts) share: the hooks it is made with, the state
 * `createGrantService` makes, and the two reads every part starts from (the grant of a request, an application's
 * workspaces).
 */
import { eq } from 'drizzle-orm';
import { findGrantByRef, tables, type GrantRow, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { notFound } from '../errors.js';
import type { eventRecorder } from '../outbox/index.js';
import type { ConnectedAccounts } from '../providers/index.js';

/** What else a grant change concerns, and the parts it uses. */
export interface GrantHooks {
  /** Called after a grant was deleted (caches of this process keyed by what it owned). */
  onDeleted?: ((grantId: string) => void) | undefined;
  /** Called before a grant is deleted (its provider's tokens revoked); never throws. */
  onDeleting?: ((grantId: string) => Promise<void>) | undefined;
  /** Called after a connected account was created or re-authenticated (committed): its sync starts now. */
  onConnected?: ((grantId: string) => void) | undefined;
  /** Called after a suspended grant was resumed (committed): the scheduled sends it held are due now. */
  onResumed?: ((grantId: string) => void) | undefined;
  /** The kinds of connected account a grant can be (`imap`), by their provider value; none: hosted grants only. */
  accounts?: readonly ConnectedAccounts[] | undefined;
}

/** What the functions of the grant service share, made once by `createGrantService`. */
export interface GrantState {
  db: CoreDeps['db'];
  clock: CoreDeps['clock'];
  newId: CoreDeps['newId'];
  randomBytes: CoreDeps['randomBytes'];
  config: CoreDeps['config'];
  hooks: GrantHooks;
  /** Records an outbox event in a transaction. */
  record: ReturnType<typeof eventRecorder>;
  /** The clock's time in unix seconds. */
  now: () => number;
  /** The kinds of connected account of `hooks.accounts`, by their provider value. */
  connectedKinds: Map<string, ConnectedAccounts>;
}

export async function workspacesOf(tx: Tx, applicationId: string) {
  return tx.select().from(tables.workspaces).where(eq(tables.workspaces.applicationId, applicationId));
}

/** Resolves a path's grant reference (id or email) within the caller's application, or 404. */
export async function requireGrant(state: GrantState, principal: Principal, ref: string): Promise<GrantRow> {
  const row = await findGrantByRef(state.db.orm, principal.applicationId, ref);
  if (!row) throw notFound('Grant', ref);
  return row;
}
