/**
 * @module admin/evaluation-service
 * `GET /v3/grants/{id}/rule-evaluations`: the audit rows the mail stages write (./audit.ts), newest first, in the
 * wire shape of the reference §15.4 plus the `verdicts` extension and the `rule_id` filter (extension).
 */
import { and, desc, eq, lt, or, type SQL } from 'drizzle-orm';
import { findGrantByRef, tables } from '../../storage/index.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import { notFound } from '../errors.js';
import { decodeCursor, DEFAULT_PAGE_SIZE, toPage } from '../pagination.js';
import type { ListRuleEvaluationsInput, RuleEvaluation } from '../schemas/admin.js';
import type { EvaluationService } from './contracts.js';
import { matchedRule } from './evaluation-store.js';

type EvaluationRow = typeof tables.ruleEvaluations.$inferSelect;

/** A row in wire form: `message_id` only when there is one, `applied_actions` with only the keys that happened. */
export function toRuleEvaluation(row: EvaluationRow): RuleEvaluation {
  const applied = Object.fromEntries(
    Object.entries(row.appliedActions).filter(
      ([, value]) => value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0),
    ),
  );
  return {
    id: row.id,
    grant_id: row.grantId,
    ...(row.messageId !== null && row.stage !== 'smtp_rcpt' ? { message_id: row.messageId } : {}),
    evaluated_at: row.evaluatedAt,
    evaluation_stage: row.stage,
    evaluation_input: row.input,
    applied_actions: applied,
    matched_rule_ids: row.matchedRuleIds,
    verdicts: row.verdicts,
    application_id: row.applicationId,
    organization_id: row.applicationId,
    created_at: row.createdAt,
    updated_at: row.createdAt,
  };
}

/** Creates the rule-evaluation listing. */
export function createEvaluationService({ db }: CoreDeps): EvaluationService {
  return {
    /**
     * A grant's evaluations, newest first, cursor-paginated; with `rule_id`, only those that matched it. Another
     * application's grant is a 404.
     */
    async list(
      principal: Principal,
      input: ListRuleEvaluationsInput,
    ): Promise<{ data: RuleEvaluation[]; next_cursor?: string }> {
      const grant = await findGrantByRef(db.orm, principal.applicationId, input.grant_id);
      if (!grant) throw notFound('Grant', input.grant_id);
      const limit = input.limit ?? DEFAULT_PAGE_SIZE;
      const before = decodeCursor(input.page_token, 2) as [number, string] | undefined;
      const conditions: SQL[] = [
        eq(tables.ruleEvaluations.grantId, grant.id),
        eq(tables.ruleEvaluations.applicationId, principal.applicationId),
      ];
      if (input.rule_id !== undefined) conditions.push(matchedRule(input.rule_id));
      if (before) {
        conditions.push(
          or(
            lt(tables.ruleEvaluations.evaluatedAt, before[0]),
            and(eq(tables.ruleEvaluations.evaluatedAt, before[0]), lt(tables.ruleEvaluations.id, before[1])),
          )!,
        );
      }
      const rows = await db.orm
        .select()
        .from(tables.ruleEvaluations)
        .where(and(...conditions))
        .orderBy(desc(tables.ruleEvaluations.evaluatedAt), desc(tables.ruleEvaluations.id))
        .limit(limit + 1);
      return toPage(rows, limit, (row) => [row.evaluatedAt, row.id], toRuleEvaluation);
    },
  };
}
