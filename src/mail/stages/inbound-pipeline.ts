/**
 * @module mail/stages/inbound-pipeline
 * The inbound stages in order, each a pure decision (its own module) with the I/O around it here; the store is
 * written last (src/mail/inbound.ts) with what was decided:
 * 1. `smtp_rcpt` (./smtp-rcpt.ts): at RCPT TO for SMTP ({@link InboundPipeline.admitRecipient}), or here for local
 *    deliveries, which have no RCPT TO;
 * 2. authentication (the injected {@link Authenticator}): mail that came over SMTP only; its `Authentication-Results`
 *    header is prepended to the stored message and its verdict kept on the message;
 * 3. spam (the injected {@link SpamChecker}): when the grant's policy has `spam_detection` settings; spam goes to junk;
 * 4. policy limits (./policy-limits.ts): size, daily count and storage refuse the message; attachments outside the
 *    limits are removed after the parse ({@link InboundPipeline.stripAttachments}), from the parsed message and from
 *    the raw message the copy stores (./policy-raw.ts);
 * 5. `inbox_processing` (./inbox-processing.ts): folders, read, starred, or dropped; for a grant whose rules read the
 *    trust block (`trust.injection`, `trust.dmarc`), the message's injection score and DMARC verdict first
 *    (./trust-stage.ts).
 * An evaluation that cannot complete (what applies could not be loaded, a stage threw) fails closed: `unavailable`,
 * which the SMTP listener answers `451 4.3.0`.
 *
 * Audit: every evaluation at `smtp_rcpt` and `inbox_processing` of a grant that has inbound rules or a policy is a
 * rule-evaluation row (grants with neither are not evaluated, so not recorded). `inbox_processing` rows go in the
 * message's own transaction, `smtp_rcpt` rows soon after the decision (./evaluation-log.ts).
 *
 * The pipeline is plain functions over a small state made here: the I/O around the stages (./pipeline-checks.ts),
 * the decision for a message (./pipeline-decide.ts), what a plan gives the store (./pipeline-plan.ts) and what they
 * share (./pipeline-state.ts).
 */
import type { InboundPipeline } from '../contracts.js';
import type { GrantRow } from '../../../storage/index.js';
import type { EvaluationRow, Enforcement } from '../../admin/index.js';
import type { CoreDeps, InboundStages } from '../../ports/index.js';
import type { NewMessage } from '../../messages/index.js';
import type { MimeParser, ParsedMessage } from '../../mime/index.js';
import { createEvaluationLog } from './evaluation-log.js';
import type { Refusal } from './policy-limits.js';
import { createUsageMeter } from './usage-meter.js';
import { rcptStage } from './pipeline-checks.js';
import { decide } from './pipeline-decide.js';
import { rowsOf, shellOf, stripAttachments } from './pipeline-plan.js';
import type { CopyPlan, MessagePlan, PipelineMessage, PipelineState } from './pipeline-state.js';

export {
  senderOf,
  type CopyPlan,
  type MessagePlan,
  type PipelineMessage,
  type PipelineTarget,
} from './pipeline-state.js';

/** The first address of a From header as sent (src/mime/from-header.ts). */
export { fromHeaderAddress } from '../../mime/index.js';

/** Creates the pipeline. */
export function createInboundPipeline(
  deps: CoreDeps,
  {
    enforcement,
    stages = {},
    parser,
  }: { enforcement: Enforcement; stages?: InboundStages; parser: Pick<MimeParser, 'parse' | 'cut'> },
): InboundPipeline {
  const { clock, newId } = deps;
  const pipeline: PipelineState = {
    deps,
    clock,
    newId,
    enforcement,
    stages,
    usage: createUsageMeter(deps),
    log: createEvaluationLog(deps),
    parser,
  };

  return {
    /**
     * Stage 1 at RCPT TO, for a hosted recipient: undefined to accept it, else its refusal. Rejects (→ 451 4.3.0) when
     * the evaluation cannot complete. The evaluation's row is written soon after.
     */
    async admitRecipient(
      grant: GrantRow,
      envelope: { mailFrom: string; recipient: string; size?: number | undefined },
    ): Promise<Refusal | undefined> {
      const { refusal, row } = await rcptStage(pipeline, grant, envelope);
      if (row) pipeline.log.later([row]);
      return refusal;
    },

    /**
     * Stages 1 (local deliveries), 2, 3, 4 (all but attachments) and 5 for a message. Throws the refusal of a limit
     * (`payload_too_large` 552, `rate_limited` 452, with `details.smtp`) when any recipient's policy refuses the
     * message, and `unavailable` when a stage cannot complete.
     */
    decide: (message: PipelineMessage): Promise<MessagePlan> => decide(pipeline, message),

    /**
     * Stage 4 for attachments (after the parse): the parsed message each copy keeps, what it lost, and the raw message
     * it stores (without what its policy removed).
     */
    stripAttachments: (
      plan: CopyPlan,
      parsed: ParsedMessage,
      raw: Buffer,
      options: { parseFailed: boolean; rewrites?: Map<string, Promise<Buffer>> },
    ): Promise<{ parsed: ParsedMessage; raw: Buffer }> => stripAttachments(parser, plan, parsed, raw, options),

    /** What a copy stores besides the parse: folders, flags and the verdict. */
    shellOf: (plan: MessagePlan, copy: CopyPlan): Pick<NewMessage, 'folders' | 'unread' | 'starred' | 'verdict'> =>
      shellOf(plan, copy),

    /**
     * The rule-evaluation rows to write with the message: its `inbox_processing` rows (stored copies with their message
     * ids, in order; dropped copies without) and its early rows.
     */
    rowsOf: (plan: MessagePlan, messageIds: readonly string[]): EvaluationRow[] => rowsOf(pipeline, plan, messageIds),

    /** The daily counters the stored copies add to. */
    usageOf(plan: MessagePlan) {
      return plan.copies.map((copy) => ({ grantId: copy.grant.id, day: plan.day, received: 1, sent: 0 }));
    },

    /** After the message's transaction committed: counts it. */
    stored(plan: MessagePlan): void {
      for (const copy of plan.copies) pipeline.usage.added(copy.grant.id, plan.raw.length, plan.day);
    },

    /** Rows waiting from RCPT TO, for the next message's transaction (give them back with `later` when it fails). */
    takeWaiting: (): EvaluationRow[] => pipeline.log.take(),

    /** Rows of a message whose transaction failed or that stored nothing: written by themselves, soon. */
    later(rows: readonly EvaluationRow[]): void {
      pipeline.log.later(rows);
    },

    /** Writes the rows waiting (tests, shutdown). */
    flush: () => pipeline.log.flush(),
  };
}

export type { InboundPipeline } from '../contracts.js';
