/**
 * @module admin/policy-service
 * Policies (`/v3/policies`): limits, spam detection, options and legacy rule ids, applied through the workspaces
 * that name them. PUT replaces each object it carries (`limits`, `spam_detection`, `options`, `rules`) whole and
 * leaves the others. Deleting a policy clears it from the workspaces that name it.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type StoredPolicyLimits, type StoredPolicyOversight } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { unixSeconds } from '../time.js';
import type { CoreDeps } from '../ports/index.js';
import { invalid } from '../errors.js';
import type { CreatePolicyInput, PageInput, Policy, UpdatePolicyInput } from '../schemas/admin.js';
import type { PolicyService } from './contracts.js';
import { adminWriter, requireOwned, requireOwnedRow, unique } from './ownership.js';
import { pageOfOwned } from './paging.js';

type PolicyRow = typeof tables.policies.$inferSelect;

/** A row in wire form. */
export function toPolicy(row: PolicyRow): Policy {
  return {
    id: row.id,
    name: row.name,
    application_id: row.applicationId,
    organization_id: row.applicationId,
    options: row.options,
    limits: row.limits,
    rules: row.ruleIds,
    spam_detection: row.spamDetection,
    oversight_mode: row.oversight.oversight_mode ?? null,
    oversight: oversightSettingsOf(row.oversight),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The guard settings of a stored oversight (its mode is the wire's top-level `oversight_mode`). Pure. */
function oversightSettingsOf(stored: StoredPolicyOversight): Policy['oversight'] {
  const { oversight_mode: _mode, ...settings } = stored;
  return settings;
}

/** The stored oversight of a policy: `mode` and `settings` as given replace what they name; undefined keeps it. */
function storedOversight(
  current: StoredPolicyOversight,
  mode: Policy['oversight_mode'] | undefined,
  settings: Policy['oversight'] | undefined,
): StoredPolicyOversight {
  const kept = settings === undefined ? current : { ...settings, oversight_mode: current.oversight_mode };
  if (mode === undefined) return kept;
  const { oversight_mode: _mode, ...rest } = kept;
  return mode === null ? rest : { ...rest, oversight_mode: mode };
}

/** Cross-field checks the schema cannot make: spam is not kept longer than the inbox. */
function checkLimits(limits: StoredPolicyLimits): void {
  const inbox = limits.limit_inbox_retention_period;
  const spam = limits.limit_spam_retention_period;
  if (inbox !== undefined && spam !== undefined && spam > inbox) {
    throw invalid(
      'limits.limit_spam_retention_period',
      `spam is kept ${spam} days, longer than the inbox (limit_inbox_retention_period ${inbox}); it must not be longer.`,
    );
  }
}

/** Creates the policy service; `invalidate` runs after every write (enforcement caches). */
export function createPolicyService({ db, clock, newId }: CoreDeps, invalidate: () => void): PolicyService {
  const now = () => unixSeconds(clock.now());

  const write = adminWriter(db, invalidate);

  return {
    /** The application's policies, oldest first, cursor-paginated. */
    async list(principal: Principal, input: PageInput): Promise<{ data: Policy[]; next_cursor?: string }> {
      return pageOfOwned(db.orm, tables.policies, principal.applicationId, input, toPolicy);
    },

    /** One policy. */
    async find(principal: Principal, policyId: string): Promise<Policy> {
      return toPolicy(await requireOwnedRow(db.orm, 'policy', principal.applicationId, policyId));
    },

    /** Creates a policy. */
    async create(principal: Principal, input: CreatePolicyInput): Promise<Policy> {
      const limits = input.limits ?? {};
      checkLimits(limits);
      const at = now();
      return toPolicy(
        await write(async (tx) => {
          await requireOwned(tx, principal.applicationId, 'rule', input.rules ?? [], 'rules');
          const [row] = await tx
            .insert(tables.policies)
            .values({
              id: newId(),
              applicationId: principal.applicationId,
              name: input.name,
              limits,
              spamDetection: input.spam_detection ?? {},
              options: {
                ...input.options,
                ...(input.options?.additional_folders
                  ? { additional_folders: unique(input.options.additional_folders) }
                  : {}),
              },
              ruleIds: unique(input.rules ?? []),
              oversight: storedOversight({}, input.oversight_mode, input.oversight),
              createdAt: at,
              updatedAt: at,
            })
            .returning();
          return row!;
        }),
      );
    },

    /** Changes a policy: each object given replaces the stored one whole. */
    async update(principal: Principal, input: UpdatePolicyInput): Promise<Policy> {
      if (input.limits) checkLimits(input.limits);
      return toPolicy(
        await write(async (tx) => {
          const current = await requireOwnedRow(tx, 'policy', principal.applicationId, input.policy_id);
          if (input.rules) await requireOwned(tx, principal.applicationId, 'rule', input.rules, 'rules');
          const [row] = await tx
            .update(tables.policies)
            .set({
              ...(input.name !== undefined ? { name: input.name } : {}),
              ...(input.limits !== undefined ? { limits: input.limits } : {}),
              ...(input.spam_detection !== undefined ? { spamDetection: input.spam_detection } : {}),
              ...(input.options !== undefined
                ? {
                    options: {
                      ...input.options,
                      ...(input.options.additional_folders
                        ? { additional_folders: unique(input.options.additional_folders) }
                        : {}),
                    },
                  }
                : {}),
              ...(input.rules !== undefined ? { ruleIds: unique(input.rules) } : {}),
              ...(input.oversight_mode !== undefined || input.oversight !== undefined
                ? { oversight: storedOversight(current.oversight, input.oversight_mode, input.oversight) }
                : {}),
              updatedAt: now(),
            })
            .where(eq(tables.policies.id, current.id))
            .returning();
          return row!;
        }),
      );
    },

    /** Deletes a policy and clears it from the workspaces that name it. */
    async destroy(principal: Principal, policyId: string): Promise<void> {
      await write(async (tx) => {
        const current = await requireOwnedRow(tx, 'policy', principal.applicationId, policyId);
        await tx
          .update(tables.workspaces)
          .set({ policyId: null, updatedAt: now() })
          .where(
            and(
              eq(tables.workspaces.applicationId, principal.applicationId),
              eq(tables.workspaces.policyId, current.id),
            ),
          );
        await tx.delete(tables.policies).where(eq(tables.policies.id, current.id));
      });
    },
  };
}
