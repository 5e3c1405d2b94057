/**
 * @module admin/evaluation-store
 * The raw SQL of the rule-evaluation listing (./evaluation-service.ts): the filter on one matched rule, over the
 * JSON array `matched_rule_ids`.
 */
import { sql, type SQL } from 'drizzle-orm';
import { tables } from '../../storage/index.js';

/** Evaluations whose `matched_rule_ids` include `ruleId` (the array is at most a workspace's rules long). */
export function matchedRule(ruleId: string): SQL {
  return sql`EXISTS (SELECT 1 FROM json_each(${tables.ruleEvaluations.matchedRuleIds}) WHERE json_each.value = ${ruleId})`;
}
