/**
 * @module grants/grant-service
 * Grants: hosted Agent Accounts (created with their six system folders and primary calendar, in one transaction)
 * and connected accounts (`provider: "imap"`: created, or re-authenticated, once the account's servers accepted the
 * login; the provider's {@link ConnectedAccounts}, src/imap/accounts.ts), listing, reading, updating and
 * deletion. Every call is scoped to the calling application.
 *
 * The service is plain functions over a small state made here: creating an Agent Account (./grant-create.ts),
 * connecting and re-authenticating a connected account (./grant-connect.ts), updating and deleting
 * (./grant-writes.ts), its reads (./grant-reads.ts) and what they share (./grant-state.ts).
 */
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { eventRecorder } from '../outbox/index.js';
import type { CreateGrantInput, Grant, ListGrantsInput, UpdateGrantInput } from '../schemas/grants.js';
import type { GrantService } from './contracts.js';
import { connectAccount, connectRequest } from './grant-connect.js';
import { createHosted } from './grant-create.js';
import { findGrant, listGrants } from './grant-reads.js';
import { requireGrant, type GrantHooks, type GrantState } from './grant-state.js';
import { resumeGrant, suspendGrant } from './grant-suspension.js';
import { destroyGrant, updateGrant } from './grant-writes.js';

/** Creates the grant service. */
export function createGrantService(
  { db, clock, newId, randomBytes, config }: CoreDeps,
  hooks: GrantHooks = {},
): GrantService {
  const connectedKinds = new Map((hooks.accounts ?? []).map((kind) => [kind.name, kind]));
  const state: GrantState = {
    db,
    clock,
    newId,
    randomBytes,
    config,
    hooks,
    record: eventRecorder({ newId, clock }),
    now: () => unixSeconds(clock.now()),
    connectedKinds,
  };

  return {
    /** Resolves a path's grant reference (id or email) within the caller's application, or 404. */
    require: (principal: Principal, ref: string) => requireGrant(state, principal, ref),

    /**
     * Creates a grant: an Agent Account ({@link createHosted}) or a connected account of a kind in `hooks.accounts`
     * ({@link connectAccount}).
     */
    async create(principal: Principal, input: CreateGrantInput): Promise<{ grant: Grant; created: boolean }> {
      const kind = state.connectedKinds.get(input.provider);
      return kind ? connectAccount(state, principal, input, kind) : createHosted(state, principal, input);
    },

    /** Connects an account whose provider already vouched for it (the hosted OAuth callback): {@link connectRequest}. */
    connect: (principal, input, provider, request) => connectRequest(state, principal, input, provider, request),

    /** Lists the application's grants with offset pagination (as `GET /v3/grants` does in Nylas v3). */
    list: (principal: Principal, input: ListGrantsInput) => listGrants(state, principal, input),

    /** One grant by id or email address. */
    find: (principal: Principal, ref: string) => findGrant(state, principal, ref),

    /**
     * Changes the display name, settings (merged), scope or workspace of a grant; `sending.status: "active"` resumes
     * a paused grant's sending (recorded in `sending_state_changes` with `requestId` as the actor). A connected
     * account's servers, credentials and sync options are not settings to merge: connecting it again changes them.
     */
    update: (principal: Principal, input: UpdateGrantInput, context?: { requestId?: string | undefined }) =>
      updateGrant(state, principal, input, context),

    /** Suspends a grant (the kill switch): no send, scheduled send or agent write until resumed (./grant-suspension.ts). */
    suspend: (principal: Principal, input: { grant_id: string; reason: string }) =>
      suspendGrant(state, principal, input),

    /** Resumes a suspended grant; the scheduled sends that fell due meanwhile leave now. */
    resume: (principal: Principal, ref: string) => resumeGrant(state, principal, ref),

    /** Deletes a grant and everything it owns (folders, calendars, mail; a connected account's `imap_*` rows). */
    destroy: (principal: Principal, ref: string): Promise<void> => destroyGrant(state, principal, ref),
  };
}
