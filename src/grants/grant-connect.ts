/**
 * @module grants/grant-connect
 * Connecting an account of a connected kind (./grant-service.ts): its logins checked first, then the grant and its
 * account stored; the same address again re-authenticates the existing grant.
 */
import { eq } from 'drizzle-orm';
import { findGrantByEmail, tables, type GrantRow } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import type { CreateGrantInput, Grant } from '../schemas/grants.js';
import type { ConnectInput } from './contracts.js';
import { HOSTED_PROVIDER, type AccountRequest, type ConnectedAccounts } from '../providers/index.js';
import { chooseWorkspace } from './placement.js';
import { grantOf } from './grant-mapper.js';
import { workspacesOf, type GrantState } from './grant-state.js';

/** Codes Nylas gives grant notifications (`data.object.code`). */
const NOTIFICATION_CODES = { 'grant.created': 25012, 'grant.updated': 25014 } as const;

/**
 * The `object` of a grant notification for a connected account: the grant as the API returns it, plus what Nylas'
 * grant notifications carry (`code`, `grant_id`; `reauthentication_flag` on a re-authentication).
 */
function grantNotification(
  grant: Grant,
  type: keyof typeof NOTIFICATION_CODES,
  reauthenticated = false,
): Record<string, unknown> {
  return {
    ...grant,
    code: NOTIFICATION_CODES[type],
    grant_id: grant.id,
    ...(reauthenticated ? { reauthentication_flag: true } : {}),
  };
}

/**
 * Connects an account of a connected kind (IMAP/SMTP): logs in to its servers (the first refusal or failure is a
 * 400 with the server's reason) before anything is stored, then, in one transaction, inserts the grant (`provider`:
 * the kind's name) and its account (`kind`'s to store: for IMAP its `imap_accounts` row, passwords sealed, `sync_state`
 * `initial`, no folders: the sync maps them on its first pass) and records `grant.created`. The same address again
 * (same application) re-authenticates the existing grant instead, as Nylas does: new credentials stored, failures
 * and back-off cleared, `grant_status` `valid` again (a sync stopped on refused logins starts over),
 * `grant.updated`; same id (`created: false`). The address needs no registered domain: it is the account's own.
 */
export async function connectAccount(
  state: GrantState,
  principal: Principal,
  input: CreateGrantInput,
  kind: ConnectedAccounts,
): Promise<{ grant: Grant; created: boolean }> {
  const { name, state: grantState, workspace_id } = input;
  const request = kind.parse(input.settings);
  return connectRequest(state, principal, { name, state: grantState, workspace_id }, kind.name, request);
}

/**
 * Connects the account of `request` (read, not yet tried) as a grant of `provider`: what {@link connectAccount} does
 * once the settings are read. The hosted OAuth callback calls it with an account whose tokens it already holds.
 */
export async function connectRequest(
  { db, clock, newId, hooks, record, now }: GrantState,
  principal: Principal,
  input: ConnectInput,
  provider: string,
  request: AccountRequest,
): Promise<{ grant: Grant; created: boolean }> {
  const email = request.email;
  const kind = { name: provider };
  // What refuses the request anyway goes first: no login is tried for an address that cannot be this grant.
  const before = await findGrantByEmail(db.orm, email);
  if (before) reconnectable(principal, before, email, kind);
  const account = await request.login();
  const result = await db.write(async (tx) => {
    const at = now();
    const atMs = clock.now().getTime();
    const existing = await findGrantByEmail(tx, email);
    if (existing) {
      reconnectable(principal, existing, email, kind);
      await account.save(tx, existing.id, { reconnect: true, atMs });
      const [row] = await tx
        .update(tables.grants)
        .set({
          grantStatus: 'valid',
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.state !== undefined ? { state: input.state } : {}),
          ...(input.scope !== undefined ? { scope: input.scope } : {}),
          credentialId: input.credential_id ?? null,
          updatedAt: at,
        })
        .where(eq(tables.grants.id, existing.id))
        .returning();
      const grant = await grantOf(tx, row!);
      await record(tx, {
        applicationId: principal.applicationId,
        grantId: existing.id,
        type: 'grant.updated',
        objectId: existing.id,
        object: grantNotification(grant, 'grant.updated', true),
        createdAt: at,
      });
      return { grant, created: false };
    }
    const workspaceId = chooseWorkspace({
      applicationId: principal.applicationId,
      email,
      requestedWorkspaceId: input.workspace_id,
      workspaces: await workspacesOf(tx, principal.applicationId),
    });
    const id = newId();
    const [row] = await tx
      .insert(tables.grants)
      .values({
        id,
        applicationId: principal.applicationId,
        provider: kind.name,
        email,
        name: input.name ?? null,
        state: input.state ?? null,
        workspaceId,
        settings: {},
        scope: input.scope ?? [],
        credentialId: input.credential_id ?? null,
        createdAt: at,
        updatedAt: at,
      })
      .returning();
    await account.save(tx, id, { reconnect: false, atMs });
    const grant = await grantOf(tx, row!);
    await record(tx, {
      applicationId: principal.applicationId,
      grantId: id,
      type: 'grant.created',
      objectId: id,
      object: grantNotification(grant, 'grant.created'),
      createdAt: at,
    });
    return { grant, created: true };
  });
  // The sync's wake (core.accounts.sync.wake): its first pass starts now, not at its next scan.
  hooks.onConnected?.(result.grant.id);
  return result;
}

/** Refuses to connect an address that is another application's grant, or this application's Agent Account. */
function reconnectable(principal: Principal, existing: GrantRow, email: string, kind: { name: string }): void {
  if (existing.applicationId !== principal.applicationId) {
    throw new AppError('conflict', `settings.email: ${email} is already in use.`, { field: 'settings.email' });
  }
  if (existing.provider !== kind.name && existing.provider !== HOSTED_PROVIDER) {
    throw new AppError(
      'conflict',
      `settings.email: ${email} is a ${existing.provider} grant of this application (grant ${existing.id}); delete it first to connect it as ${kind.name}.`,
      { field: 'settings.email' },
    );
  }
  if (existing.provider !== kind.name) {
    throw new AppError(
      'conflict',
      `settings.email: ${email} is an Agent Account of this application (grant ${existing.id}), not a connected account; delete it first to connect the mailbox instead.`,
      {
        field: 'settings.email',
      },
    );
  }
}
