/**
 * @module outbound/outbound-stage
 * The outbound stage around the pure decision of ./send-policy.ts: it loads what applies to the sending grant
 * (`core.admin.enforcement`), counts the grant's sends of the UTC day, records the evaluation, and turns a refusal into
 * the error the caller answers. It runs for every send of a grant before anything is stored or queued: a send now
 * and a draft sent (submission.ts `accept`), a send being scheduled (checked then, without the quota) and a
 * scheduled send when it fires (through `accept` again: a refusal then marks the schedule failed).
 *
 * - {@link OutboundStage.prepare} loads the enforcement outside the write transaction. A load that fails fails
 *   closed: 503 (`unavailable`), recorded as `blocked_by_evaluation_error` when the database still takes the row.
 * - {@link OutboundStage.admit} runs INSIDE the send's transaction: it increments the grant's `sent` count of the
 *   day (one upsert that returns the new count, so concurrent sends cannot pass the quota together), decides, and
 *   on a refusal throws a {@link RefusedSend}, which rolls the transaction (and the increment) back.
 * - {@link OutboundStage.record} writes the evaluation of an admitted send in the same transaction, with the id of
 *   the sent copy; {@link OutboundStage.settle} records a refused one in a write of its own.
 *
 * The cheap path: a grant whose workspace has no outbound rule and no policy is not evaluated at all (one cached
 * look-up): no evaluation row, no count. Sends are counted only while a policy applies, so a quota added to a
 * policy counts from then on, and a policy newly given to a workspace starts counting that day from its first send.
 */
import { and, eq } from 'drizzle-orm';
import { tables, type GrantRow, type Tx } from '../../storage/index.js';
import {
  evaluationRow,
  recordEvaluations,
  type EvaluationRow,
  type Enforcement,
  evaluationInputOf,
} from '../admin/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { AppError } from '../errors.js';
import type { RateLimitDetails } from '../access.js';
import type { SendDryRun } from '../schemas/send.js';
import type {
  Admitted,
  OutboundCheck,
  OutboundStage,
  SendCandidate,
  SendDecision,
  SendPolicy,
  SendRefusal,
} from './contracts.js';
import { countGrantSend } from './outbound-store.js';
import { decideSend, nextUtcMidnight, refusedRecipients, utcDayOf } from './send-policy.js';

/** The error codes of the stage's refusals. */
type RefusalCode = 'forbidden' | 'rate_limited' | 'payload_too_large';

/** A send refused by the stage: the AppError the caller answers, with the evaluation row to record. */
export class RefusedSend extends AppError {
  constructor(
    code: RefusalCode,
    message: string,
    details: unknown,
    readonly row: EvaluationRow,
  ) {
    super(code, message, details);
  }
}

/** Creates the outbound stage. */
export function createOutboundStage(
  deps: Pick<CoreDeps, 'db' | 'clock' | 'newId' | 'logger'>,
  parts: { enforcement: Pick<Enforcement, 'forGrant'> },
): OutboundStage {
  const { db, clock, newId, logger } = deps;
  const { enforcement } = parts;

  function rowOf(
    check: OutboundCheck,
    decision: SendDecision,
    phase: 'send' | 'schedule',
    messageId: string | undefined,
    refusal?: SendRefusal,
  ): EvaluationRow {
    return evaluationRow(newId, {
      applicationId: check.grant.applicationId,
      grantId: check.grant.id,
      messageId,
      stage: 'outbound_send',
      input: decision.input,
      matchedRuleIds: decision.outcome.matchedRuleIds,
      appliedActions: refusal ? { blocked: true } : {},
      verdicts: { phase, ...decision.verdicts, ...(refusal ? { refusal: refusal.kind } : {}) },
      at: unixSeconds(clock.now()),
    });
  }

  /** The error of a refusal, its message written for the caller (names the rule; says when the quota resets). */
  async function refusalError(
    check: OutboundCheck,
    refusal: SendRefusal,
    reader: Pick<Tx, 'select'>,
  ): Promise<{ code: RefusalCode; message: string; details?: unknown }> {
    switch (refusal.kind) {
      case 'rule': {
        const [rule] = await reader
          .select({ name: tables.rules.name })
          .from(tables.rules)
          .where(eq(tables.rules.id, refusal.ruleId))
          .limit(1);
        const named = rule ? ` ("${rule.name}")` : '';
        return {
          code: 'forbidden',
          message: `Sending is blocked by outbound rule ${refusal.ruleId}${named} of this mailbox's workspace; nothing was sent. A dry run (dry_run: true) lists the recipients it refuses; drop them, or ask an administrator to change the rule.`,
          details: { rule_id: refusal.ruleId },
        };
      }
      case 'quota': {
        const now = clock.now();
        const reset = nextUtcMidnight(now);
        const retryAfterSeconds = Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000));
        const details: RateLimitDetails = { retryAfterSeconds };
        return {
          code: 'rate_limited',
          message: `The daily send limit of this mailbox (${refusal.limit} messages, limit_count_daily_email_sent) is reached: ${refusal.sentToday} sent today (UTC); nothing was sent. It resets at ${reset.toISOString()} (in ${retryAfterSeconds} seconds); send again then.`,
          details,
        };
      }
      case 'size':
        return {
          code: 'payload_too_large',
          message: `The composed message is ${refusal.bytes} bytes; this mailbox's policy allows at most ${refusal.limit} bytes (limit_size_total_mime); nothing was sent. Send fewer or smaller attachments.`,
        };
    }
  }

  /** The policy of what applies to a grant, or undefined when nothing does (the cheap path). Fails closed (503). */
  async function load(grant: GrantRow, candidate: SendCandidate): Promise<OutboundCheck | undefined> {
    let applied;
    try {
      applied = await enforcement.forGrant(grant);
    } catch (error) {
      logger.error('outbound stage: the rules and policy could not be loaded; the send is refused', {
        grant_id: grant.id,
        error: String(error),
      });
      const input = evaluationInputOf({
        from: candidate.from,
        recipients: candidate.recipients,
        outboundType: candidate.reply ? 'reply' : 'compose',
      });
      const row = evaluationRow(newId, {
        applicationId: grant.applicationId,
        grantId: grant.id,
        stage: 'outbound_send',
        input,
        matchedRuleIds: [],
        appliedActions: { blocked_by_evaluation_error: true },
        at: unixSeconds(clock.now()),
      });
      await db.write((tx) => recordEvaluations(tx, [row])).catch(() => undefined);
      throw new AppError(
        'unavailable',
        "The send could not be checked against the rules and policy of this mailbox's workspace, so nothing was sent. Try again in a moment.",
        undefined,
        { cause: error },
      );
    }
    if (!applied.policy && applied.outbound.length === 0) return undefined;
    return {
      grant,
      policy: { rules: applied.outbound, lists: applied.lists, limits: applied.policy?.limits },
      counted: applied.policy !== undefined,
      candidate,
    };
  }

  /** The grant's sends so far on `day`. */
  async function sentOn(grantId: string, day: number): Promise<number> {
    const [row] = await db.orm
      .select({ sent: tables.grantDailyUsage.sent })
      .from(tables.grantDailyUsage)
      .where(and(eq(tables.grantDailyUsage.grantId, grantId), eq(tables.grantDailyUsage.day, day)));
    return row?.sent ?? 0;
  }

  return {
    /** Loads what applies to a send of `grant` (outside the transaction). Undefined: nothing applies. 503 when it cannot. */
    prepare: load,

    /**
     * Inside the send's transaction: counts the send (send phase, under a policy), decides, and throws a
     * {@link RefusedSend} when it may not go. `schedule`: a send being scheduled, checked without the quota.
     */
    async admit(tx: Tx, check: OutboundCheck | undefined, phase: 'send' | 'schedule'): Promise<Admitted | undefined> {
      if (!check) return undefined;
      const counting = phase === 'send' && check.counted;
      const sentBefore = counting ? await countGrantSend(tx, check.grant.id, utcDayOf(clock.now())) : undefined;
      const decision = decideSend(check.policy, check.candidate, sentBefore);
      if (decision.refusal) {
        const error = await refusalError(check, decision.refusal, tx);
        throw new RefusedSend(
          error.code,
          error.message,
          error.details,
          rowOf(check, decision, phase, undefined, decision.refusal),
        );
      }
      return { check, decision, phase };
    },

    /** Records an admitted send's evaluation in its transaction (`messageId`: the sent copy). */
    async record(tx: Tx, admitted: Admitted | undefined, messageId: string | undefined): Promise<void> {
      if (!admitted) return;
      await recordEvaluations(tx, [rowOf(admitted.check, admitted.decision, admitted.phase, messageId)]);
    },

    /** Awaits a send; a {@link RefusedSend} (its transaction rolled back) is recorded in a write of its own, then rethrown. */
    async settle<T>(work: Promise<T>): Promise<T> {
      try {
        return await work;
      } catch (error) {
        if (error instanceof RefusedSend) {
          await db
            .write((tx) => recordEvaluations(tx, [error.row]))
            .catch((cause: unknown) =>
              logger.error('outbound stage: a refusal could not be recorded', { error: String(cause) }),
            );
        }
        throw error;
      }
    },

    /**
     * What a send would meet, without sending: the decision against today's count, the recipients rules refuse
     * (each on its own) and those `undeliverable` names (an unknown mailbox of this service). Writes nothing.
     */
    async dryRun(
      grant: GrantRow,
      candidate: SendCandidate,
      undeliverable: ReadonlyMap<string, string>,
    ): Promise<SendDryRun> {
      const check = await load(grant, candidate);
      const policy: SendPolicy = check?.policy ?? { rules: [], lists: new Map(), limits: undefined };
      const sentToday = check?.counted ? await sentOn(grant.id, utcDayOf(clock.now())) : 0;
      const decision = decideSend(policy, candidate, sentToday);
      const refused: SendDryRun['refused_recipients'] = [];
      for (const [email, ruleId] of refusedRecipients(policy, candidate))
        refused.push({ email, reason: `blocked by outbound rule ${ruleId}`, rule_id: ruleId });
      for (const [email, reason] of undeliverable)
        if (!refused.some((entry) => entry.email === email)) refused.push({ email, reason });
      const error = decision.refusal && check ? await refusalError(check, decision.refusal, db.orm) : undefined;
      return {
        dry_run: true,
        blocked: decision.refusal !== undefined,
        ...(error ? { reason: error.message } : {}),
        matched_rule_ids: decision.outcome.matchedRuleIds,
        verdicts: decision.verdicts,
        refused_recipients: refused,
      };
    },
  };
}

/** The outbound stage's type. */
