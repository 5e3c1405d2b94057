/**
 * @module mail/stages/pipeline-plan
 * What a plan of the inbound pipeline (./inbound-pipeline.ts) gives the store: the attachments each copy keeps (stage
 * 4, after the parse), the folders, flags and verdict of a copy, and the rule-evaluation rows of the message.
 */
import { appliedActionsOf, evaluationRow, type EvaluationRow } from '../../admin/index.js';
import type { NewMessage } from '../../messages/index.js';
import type { MimeParser, ParsedMessage } from '../../mime/index.js';
import { decideAttachments } from './policy-limits.js';
import { limitsAttachments, policyRaw } from './policy-raw.js';
import type { CopyPlan, MessagePlan, PipelineState } from './pipeline-state.js';

/**
 * Stage 4 for attachments (after the parse): the parsed message each copy keeps, what it lost, and the raw message it
 * stores (./policy-raw.ts: without what its policy removed). `rewrites` shares a rewrite between copies whose
 * policies decided alike; `parseFailed` says the parse failed (then `parsed` is what the header section gave).
 */
export async function stripAttachments(
  parser: Pick<MimeParser, 'cut'>,
  plan: CopyPlan,
  parsed: ParsedMessage,
  raw: Buffer,
  { parseFailed, rewrites }: { parseFailed: boolean; rewrites?: Map<string, Promise<Buffer>> },
): Promise<{ parsed: ParsedMessage; raw: Buffer }> {
  const policy = plan.enforcement.policy;
  const limits = policy?.limits;
  const unchecked = parseFailed && limitsAttachments(limits);
  if (!policy || !limits || (parsed.attachments.length === 0 && !unchecked)) return { parsed, raw };
  const { keep, removed } = decideAttachments(
    limits,
    parsed.attachments.map((attachment) => ({
      filename: attachment.filename ?? '',
      contentType: attachment.contentType,
      size: attachment.content.length,
    })),
  );
  plan.removedAttachments = removed;
  if (removed.length === 0 && !unchecked) return { parsed, raw };
  const key = JSON.stringify([policy.id, keep, removed, unchecked]);
  let stored = rewrites?.get(key);
  if (!stored) {
    stored = policyRaw(parser, raw, parsed, { policyId: policy.id, keep, removed, unchecked });
    rewrites?.set(key, stored);
  }
  return {
    parsed:
      removed.length === 0 ? parsed : { ...parsed, attachments: parsed.attachments.filter((_, index) => keep[index]) },
    raw: await stored,
  };
}

/** What a copy stores besides the parse: folders, flags and the verdict. */
export function shellOf(
  plan: MessagePlan,
  copy: CopyPlan,
): Pick<NewMessage, 'folders' | 'unread' | 'starred' | 'verdict'> {
  const verdict: NonNullable<NewMessage['verdict']> = {};
  if (plan.authentication) verdict.authentication = plan.authentication;
  if (copy.spam) verdict.spam = copy.spam;
  if (copy.removedAttachments.length > 0) verdict.removed_attachments = copy.removedAttachments;
  if (plan.automated) verdict.automated = plan.automated;
  return {
    folders: copy.folderIds,
    unread: copy.inbox.unread,
    starred: copy.inbox.starred,
    verdict: Object.keys(verdict).length > 0 ? verdict : undefined,
  };
}

/**
 * The rule-evaluation rows to write with the message: its `inbox_processing` rows (stored copies with their message
 * ids, in order; dropped copies without) and its early rows.
 */
export function rowsOf(pipeline: PipelineState, plan: MessagePlan, messageIds: readonly string[]): EvaluationRow[] {
  const rows = [...plan.earlyRows];
  const add = (copy: CopyPlan, messageId: string | undefined) => {
    if (!copy.inbox.evaluated) return;
    const verdicts: Record<string, unknown> = {};
    if (copy.spam) verdicts.spam = copy.spam;
    if (plan.authentication)
      verdicts.authentication = { spf: plan.authentication.spf?.result, dmarc: plan.authentication.dmarc?.result };
    if (copy.removedAttachments.length > 0) verdicts.removed_attachments = copy.removedAttachments;
    rows.push(
      evaluationRow(pipeline.newId, {
        applicationId: copy.grant.applicationId,
        grantId: copy.grant.id,
        messageId,
        stage: 'inbox_processing',
        input: copy.inbox.input,
        matchedRuleIds: copy.inbox.outcome.matchedRuleIds,
        appliedActions: appliedActionsOf(copy.inbox.outcome, copy.assignedFolderIds),
        verdicts,
        at: plan.at,
      }),
    );
  };
  plan.copies.forEach((copy, index) => add(copy, messageIds[index]));
  for (const copy of plan.dropped) add(copy, undefined);
  return rows;
}
