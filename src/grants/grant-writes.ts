/**
 * @module grants/grant-writes
 * The grant service's changes to an existing grant (./grant-service.ts): its name, settings, scope and workspace
 * (and resuming its sending), and its deletion with everything it owns.
 */
import { and, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import { hashPassword } from '../applications/index.js';
import type { Principal } from '../access.js';
import { AppError, notFound } from '../errors.js';
import type { Grant, UpdateGrantInput } from '../schemas/grants.js';
import { chooseWorkspace } from './placement.js';
import { resumeSending } from './sending-state.js';
import { grantOf } from './grant-mapper.js';
import { requireGrant, workspacesOf, type GrantState } from './grant-state.js';

/**
 * Changes the display name, settings (merged), scope or workspace of a grant; `sending.status: "active"` resumes
 * a paused grant's sending (recorded in `sending_state_changes` with `requestId` as the actor). A connected
 * account's servers, credentials and sync options are not settings to merge: connecting it again changes them.
 */
export async function updateGrant(
  state: GrantState,
  principal: Principal,
  input: UpdateGrantInput,
  context: { requestId?: string | undefined } = {},
): Promise<Grant> {
  const { db, clock, newId, randomBytes, config, record, now } = state;
  const current = await requireGrant(state, principal, input.grant_id);
  const kind = state.connectedKinds.get(current.provider);
  if (kind) {
    const named = input.settings !== undefined ? kind.reconnectOnly(input.settings) : undefined;
    if (named !== undefined) {
      throw new AppError(
        'invalid_request',
        `settings.${named}: a connected account's servers, credentials and sync options change by connecting it again (POST /v3/connect/custom with provider "${kind.name}" and the same address), which checks the logins first.`,
        { field: `settings.${named}` },
      );
    }
  }
  const appPasswordHash = input.settings?.app_password
    ? await hashPassword(input.settings.app_password, randomBytes(16))
    : undefined;
  return db.write(async (tx) => {
    if (input.workspace_id !== undefined) {
      chooseWorkspace({
        applicationId: principal.applicationId,
        email: current.email,
        requestedWorkspaceId: input.workspace_id,
        workspaces: await workspacesOf(tx, principal.applicationId),
      });
    }
    const { app_password: _secret, email: _email, ...settings } = input.settings ?? {};
    if (input.sending?.status === 'active') {
      await resumeSending(tx, newId, current.id, {
        actor: context.requestId ?? `local:${principal.via}`,
        now: clock.now(),
        windowDays: config.deliverability.pauseWindowDays,
      });
    }
    const [row] = await tx
      .update(tables.grants)
      .set({
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.scope !== undefined ? { scope: input.scope } : {}),
        ...(input.workspace_id !== undefined ? { workspaceId: input.workspace_id } : {}),
        ...(input.oversight_mode !== undefined ? { oversightMode: input.oversight_mode } : {}),
        ...(appPasswordHash !== undefined ? { appPasswordHash } : {}),
        settings: { ...current.settings, ...settings },
        updatedAt: now(),
      })
      .where(and(eq(tables.grants.id, current.id), eq(tables.grants.applicationId, principal.applicationId)))
      .returning();
    if (!row) throw notFound('Grant', input.grant_id);
    const grant = await grantOf(tx, row);
    await record(tx, {
      applicationId: principal.applicationId,
      grantId: row.id,
      type: 'grant.updated',
      objectId: row.id,
      object: grant,
      createdAt: row.updatedAt,
    });
    return grant;
  });
}

/** Deletes a grant and everything it owns (folders, calendars, mail; a connected account's `imap_*` rows). */
export async function destroyGrant(state: GrantState, principal: Principal, ref: string): Promise<void> {
  const { db, record, hooks } = state;
  const current = await requireGrant(state, principal, ref);
  await db.write(async (tx) => {
    const removed = await tx
      .delete(tables.grants)
      .where(and(eq(tables.grants.id, current.id), eq(tables.grants.applicationId, principal.applicationId)))
      .returning({ id: tables.grants.id });
    if (removed.length === 0) throw notFound('Grant', ref);
    await record(tx, {
      applicationId: principal.applicationId,
      grantId: current.id,
      type: 'grant.deleted',
      object: { id: current.id, email: current.email },
    });
  });
  hooks.onDeleted?.(current.id);
}
