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
 *    limits are removed after the parse ({@link InboundPipeline.stripAttachments});
 * 5. `inbox_processing` (./inbox-processing.ts): folders, read, starred, or dropped.
 * An evaluation that cannot complete (what applies could not be loaded, a stage threw) fails closed: `unavailable`,
 * which the SMTP listener answers `451 4.3.0`.
 *
 * Audit: every evaluation at `smtp_rcpt` and `inbox_processing` of a grant that has inbound rules or a policy is a
 * rule-evaluation row (grants with neither are not evaluated, so not recorded). `inbox_processing` rows go in the
 * message's own transaction, `smtp_rcpt` rows soon after the decision (./evaluation-log.ts).
 */
import type { GrantRow } from '../../../storage/index.js';
import {
  evaluationRow,
  type EvaluationRow,
  type Enforcement,
  type GrantEnforcement,
  appliedActionsOf,
  evaluationInputOf,
} from '../../admin/index.js';
import type { AuthenticationVerdict, CoreDeps, InboundStages, SpamVerdict } from '../../ports/index.js';
import { unixSeconds } from '../../time.js';
import { AppError } from '../../errors.js';
import { ensureFoldersByName } from '../../grants/index.js';
import type { NewMessage } from '../../messages/index.js';
import { type ParsedMessage, readRawHeaders, fromHeaderAddress } from '../../mime/index.js';
import { createEvaluationLog } from './evaluation-log.js';
import type { CopyPlan, InboundPipeline, MessagePlan, PipelineMessage, PipelineTarget, Refusal } from '../contracts.js';
import { decideInboxProcessing } from './inbox-processing.js';
import { decideAttachments, limitRefusal, usageNeeded, type UsageFacts } from './policy-limits.js';
import { anythingApplies, decideSmtpRcpt } from './smtp-rcpt.js';
import { createUsageMeter, unixDay } from './usage-meter.js';

export type { CopyPlan, MessagePlan, PipelineMessage, PipelineTarget } from '../contracts.js';

/** Throws the refusal of a stage as the error the SMTP listener answers with its code. */
function refuse(refusal: Refusal): never {
  const code = refusal.code === 552 ? 'payload_too_large' : refusal.code === 550 ? 'forbidden' : 'rate_limited';
  throw new AppError(code, refusal.message, { smtp: { code: refusal.code, enhanced: refusal.enhanced } });
}

/** A stage that could not complete: the message is refused for now (451 4.3.0), never let through unchecked. */
function failClosed(what: string, error: unknown): AppError {
  return new AppError('unavailable', `${what} could not be evaluated, try again later`, undefined, { cause: error });
}

/** The first address of a From header as sent (src/mime/from-header.ts). */
export { fromHeaderAddress } from '../../mime/index.js';

/** The sender `from.*` rules look at: the From header's address, else MAIL FROM. */
export function senderOf(raw: Buffer, mailFrom: string, parsedFrom?: ParsedMessage['from']): string {
  const parsed = parsedFrom?.[0]?.email;
  if (parsed) return parsed.toLowerCase();
  const header = readRawHeaders(raw, 64 * 1024, 200).find((entry) => entry.name.toLowerCase() === 'from');
  return (header && fromHeaderAddress(header.value)) || mailFrom.toLowerCase();
}

/** Creates the pipeline. */
export function createInboundPipeline(
  deps: CoreDeps,
  { enforcement, stages = {} }: { enforcement: Enforcement; stages?: InboundStages },
): InboundPipeline {
  const { clock, newId } = deps;
  const usage = createUsageMeter(deps);
  const log = createEvaluationLog(deps);

  /** What applies to a grant; a failure to load it fails closed. */
  async function enforcementOf(grant: GrantRow): Promise<GrantEnforcement> {
    try {
      return await enforcement.forGrant(grant);
    } catch (error) {
      log.later([
        evaluationRow(newId, {
          applicationId: grant.applicationId,
          grantId: grant.id,
          stage: 'smtp_rcpt',
          input: {},
          matchedRuleIds: [],
          appliedActions: { blocked_by_evaluation_error: true },
          verdicts: { error: 'the rules and policy of the mailbox could not be loaded' },
          at: unixSeconds(clock.now()),
        }),
      ]);
      throw failClosed(`The rules and policy of ${grant.email ?? grant.id}`, error);
    }
  }

  /** The usage the grant's policy limits need (only what they need). */
  async function usageOf(grant: GrantRow, applies: GrantEnforcement, size: number | undefined): Promise<UsageFacts> {
    const needed = usageNeeded(applies.policy?.limits);
    return {
      size,
      receivedToday: needed.receivedToday ? await usage.receivedToday(grant.id) : undefined,
      storedBytes: needed.storedBytes ? await usage.storedBytes(grant.id) : undefined,
    };
  }

  /** Stage 1 for one recipient: its refusal, or undefined; the evaluation's row, when there was one. */
  async function rcptStage(
    grant: GrantRow,
    envelope: { mailFrom: string; recipient: string; size?: number | undefined },
  ): Promise<{ refusal: Refusal | undefined; row: EvaluationRow | undefined }> {
    const applies = await enforcementOf(grant);
    if (!anythingApplies(applies)) return { refusal: undefined, row: undefined };
    const facts = await usageOf(grant, applies, envelope.size);
    const decision = decideSmtpRcpt({
      enforcement: applies,
      mailFrom: envelope.mailFrom,
      recipient: envelope.recipient,
      usage: facts,
    });
    const row = evaluationRow(newId, {
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
      at: unixSeconds(clock.now()),
    });
    return { refusal: decision.refusal, row };
  }

  /** Spam verdicts by the settings asked for (copies under the same settings share one check). */
  async function spamVerdicts(
    raw: Buffer,
    message: PipelineMessage,
    authentication: AuthenticationVerdict | undefined,
    applied: GrantEnforcement[],
  ): Promise<(SpamVerdict | undefined)[]> {
    const checker = stages.spamChecker;
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

  return {
    /**
     * Stage 1 at RCPT TO, for a hosted recipient: undefined to accept it, else its refusal. Rejects (→ 451 4.3.0) when
     * the evaluation cannot complete. The evaluation's row is written soon after.
     */
    async admitRecipient(
      grant: GrantRow,
      envelope: { mailFrom: string; recipient: string; size?: number | undefined },
    ): Promise<Refusal | undefined> {
      const { refusal, row } = await rcptStage(grant, envelope);
      if (row) log.later([row]);
      return refusal;
    },

    /**
     * Stages 1 (local deliveries), 2, 3, 4 (all but attachments) and 5 for a message. Throws the refusal of a limit
     * (`payload_too_large` 552, `rate_limited` 452, with `details.smtp`) when any recipient's policy refuses the
     * message, and `unavailable` when a stage cannot complete.
     */
    async decide(message: PipelineMessage): Promise<MessagePlan> {
      const at = unixSeconds(clock.now());
      const day = unixDay(clock.now());
      const earlyRows: EvaluationRow[] = [];
      const refused: MessagePlan['refused'] = [];
      let targets = message.targets;
      if (!message.recipientsAdmitted) {
        const admitted: PipelineTarget[] = [];
        for (const target of targets) {
          const { refusal, row } = await rcptStage(target.grant, {
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
      const applied = await Promise.all(targets.map((target) => enforcementOf(target.grant)));

      let raw = message.raw;
      let authentication: AuthenticationVerdict | undefined;
      if (message.client && stages.authenticator && targets.length > 0) {
        try {
          authentication = await stages.authenticator({ raw, mailFrom: message.mailFrom, client: message.client });
        } catch (error) {
          throw failClosed('The authentication of the message', error);
        }
        raw = Buffer.concat([Buffer.from(`${authentication.header}\r\n`), raw]);
      }

      let spam: (SpamVerdict | undefined)[];
      try {
        spam = await spamVerdicts(raw, message, authentication, applied);
      } catch (error) {
        throw failClosed('The spam check of the message', error);
      }

      for (const [index, target] of targets.entries()) {
        const applies = applied[index]!;
        if (!applies.policy) continue;
        const refusal = limitRefusal(applies.policy.limits, await usageOf(target.grant, applies, raw.length));
        if (refusal) {
          // The refusal is an evaluation of its own: recorded (no message id: nothing was stored) with the ones before it.
          const refused = evaluationRow(newId, {
            applicationId: target.grant.applicationId,
            grantId: target.grant.id,
            stage: 'inbox_processing',
            input: evaluationInputOf({ from: senderOf(raw, message.mailFrom), recipients: [target.recipient] }),
            matchedRuleIds: [],
            appliedActions: { blocked: true },
            verdicts: { refused: { code: refusal.code, enhanced: refusal.enhanced, reason: refusal.reason } },
            at: unixSeconds(clock.now()),
          });
          log.later([...earlyRows, refused]);
          refuse(refusal);
        }
      }

      const from = senderOf(raw, message.mailFrom);
      const copies: CopyPlan[] = [];
      const dropped: CopyPlan[] = [];
      for (const [index, target] of targets.entries()) {
        const applies = applied[index]!;
        const inbox = decideInboxProcessing({
          enforcement: applies,
          from,
          recipient: target.recipient,
          spam: spam[index],
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
          plan.assignedFolderIds = named.length > 0 ? await ensureFoldersByName(deps, target.grant, named) : [];
          plan.folderIds = [...system, ...plan.assignedFolderIds];
        } catch (error) {
          throw failClosed('The folders of the message', error);
        }
        copies.push(plan);
      }
      return { raw, authentication, copies, dropped, refused, earlyRows, day, at };
    },

    /** Stage 4 for attachments (after the parse): the parsed message each copy keeps, and what it lost. */
    stripAttachments(plan: CopyPlan, parsed: ParsedMessage): ParsedMessage {
      const limits = plan.enforcement.policy?.limits;
      if (!limits || parsed.attachments.length === 0) return parsed;
      const { keep, removed } = decideAttachments(
        limits,
        parsed.attachments.map((attachment) => ({
          filename: attachment.filename ?? '',
          contentType: attachment.contentType,
          size: attachment.content.length,
        })),
      );
      plan.removedAttachments = removed;
      return removed.length === 0
        ? parsed
        : { ...parsed, attachments: parsed.attachments.filter((_, index) => keep[index]) };
    },

    /** What a copy stores besides the parse: folders, flags and the verdict. */
    shellOf(plan: MessagePlan, copy: CopyPlan): Pick<NewMessage, 'folders' | 'unread' | 'starred' | 'verdict'> {
      const verdict: NonNullable<NewMessage['verdict']> = {};
      if (plan.authentication) verdict.authentication = plan.authentication;
      if (copy.spam) verdict.spam = copy.spam;
      if (copy.removedAttachments.length > 0) verdict.removed_attachments = copy.removedAttachments;
      return {
        folders: copy.folderIds,
        unread: copy.inbox.unread,
        starred: copy.inbox.starred,
        verdict: Object.keys(verdict).length > 0 ? verdict : undefined,
      };
    },

    /**
     * The rule-evaluation rows to write with the message: its `inbox_processing` rows (stored copies with their message
     * ids, in order; dropped copies without) and its early rows.
     */
    rowsOf(plan: MessagePlan, messageIds: readonly string[]): EvaluationRow[] {
      const rows = [...plan.earlyRows];
      const add = (copy: CopyPlan, messageId: string | undefined) => {
        if (!copy.inbox.evaluated) return;
        const verdicts: Record<string, unknown> = {};
        if (copy.spam) verdicts.spam = copy.spam;
        if (plan.authentication)
          verdicts.authentication = { spf: plan.authentication.spf?.result, dmarc: plan.authentication.dmarc?.result };
        if (copy.removedAttachments.length > 0) verdicts.removed_attachments = copy.removedAttachments;
        rows.push(
          evaluationRow(newId, {
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
    },

    /** The daily counters the stored copies add to. */
    usageOf(plan: MessagePlan) {
      return plan.copies.map((copy) => ({ grantId: copy.grant.id, day: plan.day, received: 1, sent: 0 }));
    },

    /** After the message's transaction committed: counts it. */
    stored(plan: MessagePlan): void {
      for (const copy of plan.copies) usage.added(copy.grant.id, plan.raw.length, plan.day);
    },

    /** Rows waiting from RCPT TO, for the next message's transaction (give them back with `later` when it fails). */
    takeWaiting: (): EvaluationRow[] => log.take(),

    /** Rows of a message whose transaction failed or that stored nothing: written by themselves, soon. */
    later(rows: readonly EvaluationRow[]): void {
      log.later(rows);
    },

    /** Writes the rows waiting (tests, shutdown). */
    flush: () => log.flush(),
  };
}

export type { InboundPipeline } from '../contracts.js';
