/**
 * @module grants/grant-create
 * Creating an Agent Account (./grant-service.ts): the grant with its six system folders, its primary calendar and
 * the folders its workspace's policy adds, in one transaction.
 */
import { and, eq } from 'drizzle-orm';
import { findGrantByEmail, SYSTEM_FOLDERS, tables } from '../../storage/index.js';
import { hashPassword } from '../applications/index.js';
import type { Principal } from '../access.js';
import { AppError } from '../errors.js';
import {
  HostedGrantSettingsSchema,
  ImapGrantSettingsSchema,
  type CreateGrantInput,
  type Grant,
} from '../schemas/grants.js';
import { HOSTED_PROVIDER } from '../providers/index.js';
import { isDomainUsable } from '../domains/index.js';
import { chooseWorkspace } from './placement.js';
import { addMissingFolders, policyFolderNames } from './policy-folders.js';
import { toGrant } from './grant-mapper.js';
import { workspacesOf, type GrantState } from './grant-state.js';

/**
 * Creates an Agent Account. The address must be on a usable domain of the caller's application; the same
 * address again returns the existing grant (`created: false`).
 */
export async function createHosted(
  { db, newId, randomBytes, record, now }: GrantState,
  principal: Principal,
  input: CreateGrantInput,
): Promise<{ grant: Grant; created: boolean }> {
  const hostedSettings = HostedGrantSettingsSchema.parse(input.settings);
  const email = hostedSettings.email.trim().toLowerCase();
  const domainAddress = email.slice(email.lastIndexOf('@') + 1);
  const appPasswordHash = hostedSettings.app_password
    ? await hashPassword(hostedSettings.app_password, randomBytes(16))
    : null;
  const { app_password: _secret, email: _email, ...rest } = hostedSettings;
  // A connected account's fields (passwords among them) mean nothing here: never kept in an Agent Account's settings.
  const settings = Object.fromEntries(Object.entries(rest).filter(([key]) => !(key in ImapGrantSettingsSchema.shape)));

  return db.write(async (tx) => {
    const domain = await tx.query.domains.findFirst({
      where: and(
        eq(tables.domains.domainAddress, domainAddress),
        eq(tables.domains.applicationId, principal.applicationId),
      ),
    });
    if (!domain) {
      throw new AppError(
        'invalid_request',
        `settings.email: ${domainAddress} is not a registered domain of this application. Register it first (POST /v3/admin/domains), or use an address on a trial subdomain.`,
        { field: 'settings.email' },
      );
    }
    if (!isDomainUsable(domain)) {
      throw new AppError(
        'invalid_request',
        `settings.email: the domain ${domainAddress} is not verified yet. Publish its DNS records (POST /v3/admin/domains/${domain.id}/info) and verify ownership (POST /v3/admin/domains/${domain.id}/verify).`,
        { field: 'settings.email' },
      );
    }
    const existing = await findGrantByEmail(tx, email);
    if (existing) {
      if (existing.applicationId !== principal.applicationId) {
        throw new AppError('conflict', `settings.email: ${email} is already in use.`, { field: 'settings.email' });
      }
      if (existing.provider !== HOSTED_PROVIDER) {
        throw new AppError(
          'conflict',
          `settings.email: ${email} is a connected ${existing.provider} account of this application (grant ${existing.id}), not an Agent Account.`,
          { field: 'settings.email' },
        );
      }
      return { grant: toGrant(existing), created: false };
    }
    const workspaceId = chooseWorkspace({
      applicationId: principal.applicationId,
      email,
      requestedWorkspaceId: input.workspace_id,
      workspaces: await workspacesOf(tx, principal.applicationId),
    });
    const at = now();
    const id = newId();
    const [row] = await tx
      .insert(tables.grants)
      .values({
        id,
        applicationId: principal.applicationId,
        provider: HOSTED_PROVIDER,
        email,
        name: input.name ?? null,
        state: input.state ?? null,
        workspaceId,
        settings,
        scope: [],
        appPasswordHash,
        createdAt: at,
        updatedAt: at,
      })
      .returning();
    await tx.insert(tables.folders).values(
      SYSTEM_FOLDERS.map((role, index) => ({
        id: role,
        grantId: id,
        name: role,
        systemRole: role,
        sortOrder: index,
        createdAt: at,
        updatedAt: at,
      })),
    );
    await tx.insert(tables.calendars).values({
      id: newId(),
      grantId: id,
      name: input.name ?? email,
      isPrimary: true,
      timezone: 'UTC',
      createdAt: at,
      updatedAt: at,
    });
    // The folders the policy of its workspace adds to every mailbox (options.additional_folders).
    await addMissingFolders(
      tx,
      id,
      await policyFolderNames(tx, principal.applicationId, workspaceId ?? null),
      at,
      newId,
    );
    const grant = toGrant(row!);
    await record(tx, {
      applicationId: principal.applicationId,
      grantId: id,
      type: 'grant.created',
      objectId: id,
      object: grant,
      createdAt: at,
    });
    return { grant, created: true };
  });
}
