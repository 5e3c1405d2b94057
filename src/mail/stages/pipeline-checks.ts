/**
 * @module mail/stages/pipeline-checks
 * The I/O around the inbound stages (./inbound-pipeline.ts): what applies to a grant (failing closed), the usage its
 * limits need, stage 1 for one recipient with its evaluation row, and the spam verdicts.
 */
import type { GrantRow } from '../../../storage/index.js';
import { evaluationRow, type EvaluationRow, type GrantEnforcement } from '../../admin/index.js';
import type { AuthenticationVerdict, SpamVerdict } from '../../ports/index.js';
import { unixSeconds } from '../../time.js';
import { usageNeeded, type Refusal, type UsageFacts } from './policy-limits.js';
import { anythingApplies, decideSmtpRcpt } from './smtp-rcpt.js';
import { failClosed, type PipelineMessage, type PipelineState } from './pipeline-state.js';

/** What applies to a grant; a failure to load it fails closed. */
export async function enforcementOf(pipeline: PipelineState, grant: GrantRow): Promise<GrantEnforcement> {
  try {
    return await pipeline.enforcement.forGrant(grant);
  } catch (error) {
    pipeline.log.later([
      evaluationRow(pipeline.newId, {
        applicationId: grant.applicationId,
        grantId: grant.id,
        stage: 'smtp_rcpt',
        input: {},
        matchedRuleIds: [],
        appliedActions: { blocked_by_evaluation_error: true },
        verdicts: { error: 'the rules and policy of the mailbox could not be loaded' },
        at: unixSeconds(pipeline.clock.now()),
      }),
    ]);
    throw failClosed(`The rules and policy of ${grant.email ?? grant.id}`, error);
  }
}

/** The usage the grant's policy limits need (only what they need). */
export async function usageOf(
  pipeline: PipelineState,
  grant: GrantRow,
  applies: GrantEnforcement,
  size: number | undefined,
): Promise<UsageFacts> {
  const needed = usageNeeded(applies.policy?.limits);
  return {
    size,
    receivedToday: needed.receivedToday ? await pipeline.usage.receivedToday(grant.id) : undefined,
    storedBytes: needed.storedBytes ? await pipeline.usage.storedBytes(grant.id) : undefined,
  };
}

/** Stage 1 for one recipient: its refusal, or undefined; the evaluation's row, when there was one. */
export async function rcptStage(
  pipeline: PipelineState,
  grant: GrantRow,
  envelope: { mailFrom: string; recipient: string; size?: number | undefined },
): Promise<{ refusal: Refusal | undefined; row: EvaluationRow | undefined }> {
  const applies = await enforcementOf(pipeline, grant);
  if (!anythingApplies(applies)) return { refusal: undefined, row: undefined };
  const facts = await usageOf(pipeline, grant, applies, envelope.size);
  const decision = decideSmtpRcpt({
    enforcement: applies,
    mailFrom: envelope.mailFrom,
    recipient: envelope.recipient,
    usage: facts,
  });
  const row = evaluationRow(pipeline.newId, {
    applicationId: grant.applicationId,
    grantId: grant.id,
    stage: 'smtp_rcpt',
    input: decision.input,
    matchedRuleIds: decision.outcome.matchedRuleIds,
    // At RCPT TO only a block acts; the other actions of matching rules apply at inbox_processing.
    appliedActions: decision.outcome.block ? { blocked: true } : {},
    verdicts: decision.refusal
      ? {
          refused: {
            code: decision.refusal.code,
            enhanced: decision.refusal.enhanced,
            reason: decision.refusal.reason,
          },
        }
      : {},
    at: unixSeconds(pipeline.clock.now()),
  });
  return { refusal: decision.refusal, row };
}

/** Spam verdicts by the settings asked for (copies under the same settings share one check). */
export async function spamVerdicts(
  pipeline: PipelineState,
  raw: Buffer,
  message: PipelineMessage,
  authentication: AuthenticationVerdict | undefined,
  applied: GrantEnforcement[],
): Promise<(SpamVerdict | undefined)[]> {
  const checker = pipeline.stages.spamChecker;
  if (!checker) return applied.map(() => undefined);
  const checks = new Map<string, Promise<SpamVerdict>>();
  return Promise.all(
    applied.map((applies) => {
      const settings = applies.policy?.spamDetection;
      if (!settings || Object.keys(settings).length === 0) return Promise.resolve(undefined);
      const key = JSON.stringify(settings);
      let check = checks.get(key);
      if (!check) {
        check = checker({ raw, mailFrom: message.mailFrom, client: message.client, authentication }, settings);
        checks.set(key, check);
      }
      return check;
    }),
  );
}
