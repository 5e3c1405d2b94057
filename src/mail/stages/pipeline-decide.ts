/**
 * @module mail/stages/pipeline-decide
 * The inbound stages for one message (./inbound-pipeline.ts): 1 (local deliveries), 2 authentication, 3 spam, 4 the
 * policy limits (all but attachments) and 5 `inbox_processing`, giving the plan the store is written with.
 */
import { evaluationRow, evaluationInputOf, type EvaluationRow } from '../../admin/index.js';
import type { AuthenticationVerdict, SpamVerdict } from '../../ports/index.js';
import { unixSeconds } from '../../time.js';
import { ensureFoldersByName } from '../../grants/index.js';
import { automatedOfRaw } from './automated.js';
import { decideInboxProcessing } from './inbox-processing.js';
import { limitRefusal } from './policy-limits.js';
import { ingestTrust, trustNeeded, type IngestTrust } from './trust-stage.js';
import { unixDay } from './usage-meter.js';
import { enforcementOf, rcptStage, spamVerdicts, usageOf } from './pipeline-checks.js';
import {
  failClosed,
  refuse,
  senderOf,
  type CopyPlan,
  type MessagePlan,
  type PipelineMessage,
  type PipelineState,
  type PipelineTarget,
} from './pipeline-state.js';

/**
 * Stages 1 (local deliveries), 2, 3, 4 (all but attachments) and 5 for a message. Throws the refusal of a limit
 * (`payload_too_large` 552, `rate_limited` 452, with `details.smtp`) when any recipient's policy refuses the
 * message, and `unavailable` when a stage cannot complete.
 */
export async function decide(pipeline: PipelineState, message: PipelineMessage): Promise<MessagePlan> {
  const at = unixSeconds(pipeline.clock.now());
  const day = unixDay(pipeline.clock.now());
  const earlyRows: EvaluationRow[] = [];
  const refused: MessagePlan['refused'] = [];
  let targets = message.targets;
  if (!message.recipientsAdmitted) {
    const admitted: PipelineTarget[] = [];
    for (const target of targets) {
      const { refusal, row } = await rcptStage(pipeline, target.grant, {
        mailFrom: message.mailFrom,
        recipient: target.recipient,
      });
      if (row) earlyRows.push(row);
      if (refusal?.code === 550)
        refused.push({ recipient: target.recipient, reason: `${refusal.enhanced} ${refusal.message}` });
      else admitted.push(target);
    }
    targets = admitted;
  }
  const applied = await Promise.all(targets.map((target) => enforcementOf(pipeline, target.grant)));

  let raw = message.raw;
  let authentication: AuthenticationVerdict | undefined;
  if (message.client && pipeline.stages.authenticator && targets.length > 0) {
    try {
      authentication = await pipeline.stages.authenticator({ raw, mailFrom: message.mailFrom, client: message.client });
    } catch (error) {
      throw failClosed('The authentication of the message', error);
    }
    raw = Buffer.concat([Buffer.from(`${authentication.header}\r\n`), raw]);
  }

  let spam: (SpamVerdict | undefined)[];
  try {
    spam = await spamVerdicts(pipeline, raw, message, authentication, applied);
  } catch (error) {
    throw failClosed('The spam check of the message', error);
  }

  for (const [index, target] of targets.entries()) {
    const applies = applied[index]!;
    if (!applies.policy) continue;
    const refusal = limitRefusal(applies.policy.limits, await usageOf(pipeline, target.grant, applies, raw.length));
    if (refusal) {
      // The refusal is an evaluation of its own: recorded (no message id: nothing was stored) with the ones before it.
      const refused = evaluationRow(pipeline.newId, {
        applicationId: target.grant.applicationId,
        grantId: target.grant.id,
        stage: 'inbox_processing',
        input: evaluationInputOf({ from: senderOf(raw, message.mailFrom), recipients: [target.recipient] }),
        matchedRuleIds: [],
        appliedActions: { blocked: true },
        verdicts: { refused: { code: refusal.code, enhanced: refusal.enhanced, reason: refusal.reason } },
        at: unixSeconds(pipeline.clock.now()),
      });
      pipeline.log.later([...earlyRows, refused]);
      refuse(refusal);
    }
  }

  let trust: IngestTrust | undefined;
  if (trustNeeded(applied)) {
    try {
      trust = await ingestTrust(pipeline.parser, raw, authentication);
    } catch (error) {
      throw failClosed('The trust block of the message', error);
    }
  }

  const from = senderOf(raw, message.mailFrom);
  const automated = automatedOfRaw(message.raw, message.mailFrom);
  const copies: CopyPlan[] = [];
  const dropped: CopyPlan[] = [];
  for (const [index, target] of targets.entries()) {
    const applies = applied[index]!;
    const inbox = decideInboxProcessing({
      enforcement: applies,
      from,
      recipient: target.recipient,
      spam: spam[index],
      trust,
      automated: automated?.kind,
    });
    const plan: CopyPlan = {
      ...target,
      enforcement: applies,
      inbox,
      folderIds: [],
      assignedFolderIds: [],
      spam: spam[index],
      removedAttachments: [],
    };
    if (inbox.drop) {
      dropped.push(plan);
      continue;
    }
    const system = inbox.folders.flatMap((folder) => ('system' in folder ? [folder.system] : []));
    const named = inbox.folders.flatMap((folder) => ('name' in folder ? [folder.name] : []));
    try {
      plan.assignedFolderIds = named.length > 0 ? await ensureFoldersByName(pipeline.deps, target.grant, named) : [];
      plan.folderIds = [...system, ...plan.assignedFolderIds];
    } catch (error) {
      throw failClosed('The folders of the message', error);
    }
    copies.push(plan);
  }
  return { raw, authentication, automated, copies, dropped, refused, earlyRows, day, at };
}
