/**
 * @module admin/audit
 * Rule-evaluation records: one per evaluation at every stage (`smtp_rcpt`, `inbox_processing`, `outbound_send`),
 * readable at `GET /v3/grants/{id}/rule-evaluations`. Stages build rows with {@link evaluationRow} and write them
 * with {@link recordEvaluations}, in the transaction of what they decided when there is one.
 */
import { tables, type StoredAppliedActions, type StoredEvaluationInput, type Tx } from '../../storage/index.js';
import type { IdGenerator } from '../ports/index.js';
import type { EvaluationRow } from './contracts.js';

export type { EvaluationRow } from './contracts.js';

/** The row of one evaluation. `at` is unix seconds. */
export function evaluationRow(
  newId: IdGenerator,
  fields: {
    applicationId: string;
    grantId: string;
    messageId?: string | null | undefined;
    stage: 'smtp_rcpt' | 'inbox_processing' | 'outbound_send';
    input: StoredEvaluationInput;
    matchedRuleIds: readonly string[];
    appliedActions: StoredAppliedActions;
    verdicts?: Record<string, unknown> | undefined;
    at: number;
  },
): EvaluationRow {
  return {
    id: newId(),
    applicationId: fields.applicationId,
    grantId: fields.grantId,
    messageId: fields.messageId ?? null,
    stage: fields.stage,
    input: fields.input,
    matchedRuleIds: [...fields.matchedRuleIds],
    appliedActions: fields.appliedActions,
    verdicts: fields.verdicts ?? {},
    evaluatedAt: fields.at,
    createdAt: fields.at,
  };
}

/** Writes evaluation rows (in batches of 100, within the given transaction). */
export async function recordEvaluations(tx: Tx, rows: readonly EvaluationRow[]): Promise<void> {
  for (let index = 0; index < rows.length; index += 100)
    await tx.insert(tables.ruleEvaluations).values(rows.slice(index, index + 100));
}
