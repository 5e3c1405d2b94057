/**
 * @module admin/rule-service
 * Rules (`/v3/rules`): conditions over the sender, the recipients and the kind of send, and the actions taken when
 * they match (semantics in ./rule-engine.ts). Beyond the schema, a rule is checked as a whole before it is stored:
 * - `in_list` names lists of this application (another application's list, or a missing one, is a 404);
 * - every other operator compares one string (`greater_than` / `less_than` one number);
 * - `outbound.type` takes only `is` / `is_not` and the values `compose` / `reply`;
 * - `trust.injection` takes only `greater_than` / `less_than` and a number from 0 to 1; `trust.dmarc` a verdict word;
 * - `message.automated` takes only `is` / `is_not` and `true`, `false` or a kind (`auto_reply`, `bounce`, …);
 * - `assign_to_folder` has a folder name; `block` stands alone.
 * Deleting a rule removes its id from the workspaces and policies that name it.
 */
import { eq } from 'drizzle-orm';
import { tables, type StoredRuleAction, type StoredRuleCondition, type Tx } from '../../storage/index.js';
import type { Principal } from '../access.js';
import { unixSeconds } from '../time.js';
import type { CoreDeps } from '../ports/index.js';
import { invalid } from '../errors.js';
import {
  ADMIN_LIMITS,
  type CreateRuleInput,
  type PageInput,
  type Rule,
  type UpdateRuleInput,
} from '../schemas/admin.js';
import { TRUST_AUTH_RESULTS } from '../schemas/trust.js';
import { AUTOMATED_KINDS } from '../schemas/messages.js';
import type { RuleService } from './contracts.js';
import { adminWriter, requireOwned, requireOwnedRow, unique } from './ownership.js';
import { pageOfOwned } from './paging.js';

type RuleRow = typeof tables.rules.$inferSelect;

/** The values `message.automated` compares: true, false or a kind of automated mail. */
const AUTOMATED_VALUES: readonly string[] = ['true', 'false', ...AUTOMATED_KINDS];

/** Default priority of a rule (lower runs first). */
export const DEFAULT_RULE_PRIORITY = 10;

/** A row in wire form. */
export function toRule(row: RuleRow): Rule {
  return {
    id: row.id,
    name: row.name,
    ...(row.description !== null ? { description: row.description } : {}),
    priority: row.priority,
    enabled: row.enabled,
    trigger: row.trigger,
    match: { operator: row.matchOperator, conditions: row.conditions },
    actions: row.actions,
    application_id: row.applicationId,
    organization_id: row.applicationId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The list ids of a rule's `in_list` conditions. */
export function listIdsOf(conditions: readonly StoredRuleCondition[]): string[] {
  return conditions.flatMap((condition) =>
    condition.operator !== 'in_list'
      ? []
      : Array.isArray(condition.value)
        ? condition.value
        : [String(condition.value)],
  );
}

/**
 * Checks a whole rule's conditions and actions and returns them as stored (values of string operators lower-cased
 * and trimmed, `in_list` values always an array, `trust.injection` values numbers). Throws a 400 naming the first fault.
 */
function normalizeRule(
  conditions: readonly StoredRuleCondition[],
  actions: readonly StoredRuleAction[],
): { conditions: StoredRuleCondition[]; actions: StoredRuleAction[] } {
  const stored = conditions.map((condition, index): StoredRuleCondition => {
    const at = `match.conditions[${index}]`;
    if (condition.field === 'outbound.type' && condition.operator !== 'is' && condition.operator !== 'is_not') {
      throw invalid(
        `${at}.operator`,
        `outbound.type takes only the operators is and is_not, not ${condition.operator}.`,
      );
    }
    const numeric = condition.operator === 'greater_than' || condition.operator === 'less_than';
    if (condition.field === 'trust.injection') {
      const value = typeof condition.value === 'string' ? Number(condition.value.trim()) : condition.value;
      if (!numeric)
        throw invalid(`${at}.operator`, `trust.injection takes greater_than or less_than, not ${condition.operator}.`);
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1)
        throw invalid(`${at}.value`, 'trust.injection compares a number from 0 to 1 (0.7 or more reads as hostile).');
      return { field: condition.field, operator: condition.operator, value };
    }
    if (numeric)
      throw invalid(`${at}.operator`, `${condition.operator} compares numbers: only trust.injection takes it.`);
    if (typeof condition.value === 'number')
      throw invalid(`${at}.value`, `${condition.field} compares a string, not a number.`);
    if (condition.field === 'trust.dmarc' && condition.operator === 'in_list')
      throw invalid(`${at}.operator`, 'trust.dmarc takes is, is_not or contains, not in_list.');
    if (condition.operator === 'in_list') {
      return {
        ...condition,
        value: [...new Set(Array.isArray(condition.value) ? condition.value : [condition.value])],
      };
    }
    if (Array.isArray(condition.value))
      throw invalid(
        `${at}.value`,
        `the operator ${condition.operator} compares one string; only in_list takes an array of list ids.`,
      );
    const value = condition.value.trim().toLowerCase();
    if (value === '') throw invalid(`${at}.value`, 'must not be blank.');
    if (condition.field === 'outbound.type' && value !== 'compose' && value !== 'reply') {
      throw invalid(`${at}.value`, `outbound.type is compose or reply, not ${JSON.stringify(condition.value)}.`);
    }
    if (condition.field === 'message.automated' && condition.operator !== 'is' && condition.operator !== 'is_not')
      throw invalid(`${at}.operator`, `message.automated takes is or is_not, not ${condition.operator}.`);
    if (condition.field === 'message.automated' && !AUTOMATED_VALUES.includes(value))
      throw invalid(
        `${at}.value`,
        `message.automated is one of ${AUTOMATED_VALUES.join(', ')}, not ${JSON.stringify(condition.value)}.`,
      );
    if (condition.field === 'trust.dmarc' && !(TRUST_AUTH_RESULTS as readonly string[]).includes(value)) {
      throw invalid(
        `${at}.value`,
        `trust.dmarc is one of ${TRUST_AUTH_RESULTS.join(', ')}, not ${JSON.stringify(condition.value)}.`,
      );
    }
    return { field: condition.field, operator: condition.operator, value };
  });
  if (actions.some((action) => action.type === 'block') && actions.length > 1) {
    throw invalid('actions', 'block stops the message, so it must be the only action of its rule.');
  }
  const storedActions = actions.map((action, index): StoredRuleAction => {
    if (action.type !== 'assign_to_folder') return { type: action.type };
    const folder = action.value?.trim();
    if (!folder) throw invalid(`actions[${index}].value`, 'assign_to_folder needs the folder name as value.');
    return { type: action.type, value: folder };
  });
  return { conditions: stored, actions: storedActions };
}

/**
 * The workspaces a new rule is to be applied in (`workspace_ids` of create_rule), each this application's (else 404)
 * and with room for one more rule id (else 400).
 */
async function workspacesToApplyIn(tx: Tx, applicationId: string, ids: readonly string[]) {
  const rows = [];
  for (const id of unique(ids)) {
    const row = await requireOwnedRow(tx, 'workspace', applicationId, id);
    if (row.ruleIds.length >= ADMIN_LIMITS.ruleIds)
      throw invalid('workspace_ids', `Workspace ${id} already has ${ADMIN_LIMITS.ruleIds} rules, its most.`);
    rows.push(row);
  }
  return rows;
}

/** Creates the rule service; `invalidate` runs after every write (enforcement caches). */
export function createRuleService({ db, clock, newId }: CoreDeps, invalidate: () => void): RuleService {
  const now = () => unixSeconds(clock.now());
  const write = adminWriter(db, invalidate);

  /** Normalizes a rule and checks that its lists are the application's. */
  async function checked(
    tx: Tx,
    applicationId: string,
    conditions: readonly StoredRuleCondition[],
    actions: readonly StoredRuleAction[],
  ) {
    const rule = normalizeRule(conditions, actions);
    await requireOwned(tx, applicationId, 'list', listIdsOf(rule.conditions), 'match.conditions.value');
    return rule;
  }

  return {
    /** The application's rules, oldest first, cursor-paginated. */
    async list(principal: Principal, input: PageInput): Promise<{ data: Rule[]; next_cursor?: string }> {
      return pageOfOwned(db.orm, tables.rules, principal.applicationId, input, toRule);
    },

    /** One rule. */
    async find(principal: Principal, ruleId: string): Promise<Rule> {
      return toRule(await requireOwnedRow(db.orm, 'rule', principal.applicationId, ruleId));
    },

    /** Creates a rule (priority 10, enabled, inbound and match all unless given). */
    async create(principal: Principal, input: CreateRuleInput): Promise<Rule> {
      const at = now();
      return toRule(
        await write(async (tx) => {
          const rule = await checked(tx, principal.applicationId, input.match.conditions, input.actions);
          const workspaces = await workspacesToApplyIn(tx, principal.applicationId, input.workspace_ids ?? []);
          const [row] = await tx
            .insert(tables.rules)
            .values({
              id: newId(),
              applicationId: principal.applicationId,
              name: input.name,
              description: input.description ?? null,
              priority: input.priority ?? DEFAULT_RULE_PRIORITY,
              enabled: input.enabled ?? true,
              trigger: input.trigger ?? 'inbound',
              matchOperator: input.match.operator ?? 'all',
              conditions: rule.conditions,
              actions: rule.actions,
              createdAt: at,
              updatedAt: at,
            })
            .returning();
          // Applied where asked in the same transaction: a person's form makes and applies a rule in one step.
          for (const workspace of workspaces)
            await tx
              .update(tables.workspaces)
              .set({ ruleIds: [...workspace.ruleIds, row!.id], updatedAt: at })
              .where(eq(tables.workspaces.id, workspace.id));
          return row!;
        }),
      );
    },

    /** Changes a rule: fields given replace the stored ones (`match` and `actions` whole); the result is checked whole. */
    async update(principal: Principal, input: UpdateRuleInput): Promise<Rule> {
      return toRule(
        await write(async (tx) => {
          const current = await requireOwnedRow(tx, 'rule', principal.applicationId, input.rule_id);
          const rule = await checked(
            tx,
            principal.applicationId,
            input.match?.conditions ?? current.conditions,
            input.actions ?? current.actions,
          );
          const [row] = await tx
            .update(tables.rules)
            .set({
              ...(input.name !== undefined ? { name: input.name } : {}),
              ...(input.description !== undefined ? { description: input.description } : {}),
              ...(input.priority !== undefined ? { priority: input.priority } : {}),
              ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
              ...(input.trigger !== undefined ? { trigger: input.trigger } : {}),
              ...(input.match !== undefined ? { matchOperator: input.match.operator ?? 'all' } : {}),
              conditions: rule.conditions,
              actions: rule.actions,
              updatedAt: now(),
            })
            .where(eq(tables.rules.id, current.id))
            .returning();
          return row!;
        }),
      );
    },

    /** Deletes a rule and removes its id from the workspaces and policies that name it. */
    async destroy(principal: Principal, ruleId: string): Promise<void> {
      await write(async (tx) => {
        const current = await requireOwnedRow(tx, 'rule', principal.applicationId, ruleId);
        const at = now();
        const workspaces = await tx
          .select({ id: tables.workspaces.id, ruleIds: tables.workspaces.ruleIds })
          .from(tables.workspaces)
          .where(eq(tables.workspaces.applicationId, principal.applicationId));
        for (const workspace of workspaces.filter((row) => row.ruleIds.includes(current.id))) {
          await tx
            .update(tables.workspaces)
            .set({ ruleIds: workspace.ruleIds.filter((id) => id !== current.id), updatedAt: at })
            .where(eq(tables.workspaces.id, workspace.id));
        }
        const policies = await tx
          .select({ id: tables.policies.id, ruleIds: tables.policies.ruleIds })
          .from(tables.policies)
          .where(eq(tables.policies.applicationId, principal.applicationId));
        for (const policy of policies.filter((row) => row.ruleIds.includes(current.id))) {
          await tx
            .update(tables.policies)
            .set({ ruleIds: policy.ruleIds.filter((id) => id !== current.id), updatedAt: at })
            .where(eq(tables.policies.id, policy.id));
        }
        await tx.delete(tables.rules).where(eq(tables.rules.id, current.id));
      });
    },
  };
}
