/**
 * @module admin/enforcement
 * What applies to a grant: its workspace's policy, the rules of the workspace and of that policy (compiled), and the
 * lists those rules name (as sets). The mail stages ask for it on every message, so it is cached per workspace:
 * - an entry is used for {@link FRESH_MS}; after that the workspace, policy and rule rows (a few small rows) are
 *   read again, and each list's items only when the list's `version` changed (a list of 10,000 items is not
 *   reloaded while it stays the same);
 * - writes through this process's admin services call {@link Enforcement.invalidate}, so they apply at once here;
 *   other processes on the same database see them within {@link FRESH_MS}.
 * A grant without a workspace is under its application's default workspace.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { tables, type Database } from '../../storage/index.js';
import type { EnforcedGrant, Enforcement, GrantEnforcement, ListSet } from './contracts.js';
import { compileRules, type RuleDefinition } from './rule-engine.js';

/** How long a cached entry is used before its rows are read again, in milliseconds. */
export const FRESH_MS = 1_000;

const NOTHING: GrantEnforcement = {
  workspaceId: undefined,
  policy: undefined,
  inbound: [],
  outbound: [],
  lists: new Map(),
};

/** Creates the cached loader of what applies to a grant. */
export function createEnforcement({ db }: { db: Database }): Enforcement {
  const entries = new Map<string, { at: number; value: Promise<GrantEnforcement> }>();
  const listCache = new Map<string, { version: number; set: ListSet }>();
  /** Bumped by {@link invalidate}, so a load that started before a write does not refresh the entry after it. */
  let generation = 0;

  async function loadLists(applicationId: string, ids: readonly string[]): Promise<Map<string, ListSet>> {
    const result = new Map<string, ListSet>();
    if (ids.length === 0) return result;
    const rows = await db.orm
      .select({ id: tables.lists.id, type: tables.lists.type, version: tables.lists.version })
      .from(tables.lists)
      .where(and(eq(tables.lists.applicationId, applicationId), inArray(tables.lists.id, [...ids])));
    for (const row of rows) {
      const cached = listCache.get(row.id);
      if (cached && cached.version === row.version) {
        result.set(row.id, cached.set);
        continue;
      }
      const items = await db.orm
        .select({ value: tables.listItems.value })
        .from(tables.listItems)
        .where(eq(tables.listItems.listId, row.id));
      const set: ListSet = { id: row.id, type: row.type, items: new Set(items.map((item) => item.value)) };
      listCache.set(row.id, { version: row.version, set });
      result.set(row.id, set);
    }
    return result;
  }

  async function load(grant: EnforcedGrant): Promise<GrantEnforcement> {
    const workspace = grant.workspaceId
      ? await db.orm.query.workspaces.findFirst({
          where: and(
            eq(tables.workspaces.id, grant.workspaceId),
            eq(tables.workspaces.applicationId, grant.applicationId),
          ),
        })
      : await db.orm.query.workspaces.findFirst({
          where: and(eq(tables.workspaces.applicationId, grant.applicationId), eq(tables.workspaces.isDefault, true)),
        });
    if (!workspace) return NOTHING;
    const policyRow = workspace.policyId
      ? await db.orm.query.policies.findFirst({
          where: and(
            eq(tables.policies.id, workspace.policyId),
            eq(tables.policies.applicationId, grant.applicationId),
          ),
        })
      : undefined;
    const ruleIds = [...new Set([...workspace.ruleIds, ...(policyRow?.ruleIds ?? [])])];
    const ruleRows: RuleDefinition[] =
      ruleIds.length === 0
        ? []
        : await db.orm
            .select()
            .from(tables.rules)
            .where(and(eq(tables.rules.applicationId, grant.applicationId), inArray(tables.rules.id, ruleIds)));
    const listIds = new Set<string>();
    for (const rule of ruleRows) {
      for (const condition of rule.conditions) {
        if (condition.operator !== 'in_list') continue;
        for (const id of Array.isArray(condition.value) ? condition.value : [String(condition.value)]) listIds.add(id);
      }
    }
    return {
      workspaceId: workspace.id,
      policy: policyRow
        ? {
            id: policyRow.id,
            limits: policyRow.limits,
            spamDetection: policyRow.spamDetection,
            options: policyRow.options,
            oversight: policyRow.oversight,
          }
        : undefined,
      inbound: compileRules(ruleRows, 'inbound'),
      outbound: compileRules(ruleRows, 'outbound'),
      lists: await loadLists(grant.applicationId, [...listIds]),
    };
  }

  return {
    /** What applies to a grant (cached; see the module comment). Rejects when the database cannot be read. */
    forGrant(grant: EnforcedGrant): Promise<GrantEnforcement> {
      const key = `${grant.applicationId}\u0000${grant.workspaceId ?? ''}`;
      const now = performance.now();
      const cached = entries.get(key);
      if (cached && now - cached.at < FRESH_MS) return cached.value;
      const started = generation;
      const value = load(grant);
      entries.set(key, { at: now, value });
      // A failed load is not remembered: the next message tries again (and, failing, fails closed).
      value.catch(() => {
        if (entries.get(key)?.value === value) entries.delete(key);
      });
      void value.then(
        () => {
          if (generation !== started && entries.get(key)?.value === value) entries.delete(key);
        },
        () => undefined,
      );
      return value;
    },
    /** Forgets cached entries (after a write to workspaces, policies, rules or lists). */
    invalidate(): void {
      generation++;
      entries.clear();
    },
  };
}

export type { EffectivePolicy, EnforcedGrant, Enforcement, GrantEnforcement } from './contracts.js';
