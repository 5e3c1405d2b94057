/**
 * @module mail/stages/smtp-rcpt
 * Stage 1 of inbound mail, at RCPT TO for each hosted recipient: the inbound rules of the recipient's workspace on the
 * envelope (`from.*` = MAIL FROM, `recipient.*` = that recipient). A `block` refuses the recipient with `550 5.7.1`
 * before DATA; otherwise the policy limits that are known this early (the SIZE declared at MAIL FROM, the daily
 * received count, the stored bytes) may refuse it (./policy-limits.ts). Pure: the caller loads what applies.
 */
import {
  type GrantEnforcement,
  evaluateRules,
  evaluationInputOf,
  type EvaluationInput,
  type RuleOutcome,
} from '../../admin/index.js';
import { limitRefusal, type Refusal, type UsageFacts } from './policy-limits.js';

/** What the stage looks at. */
export interface SmtpRcptInput {
  enforcement: GrantEnforcement;
  /** MAIL FROM (empty for bounces). */
  mailFrom: string;
  recipient: string;
  /** The declared SIZE and the grant's usage, when known. */
  usage?: UsageFacts;
}

/** What the stage decided. */
export interface SmtpRcptDecision {
  /** False when nothing applies to the grant (no inbound rule, no policy): nothing was evaluated or is recorded. */
  evaluated: boolean;
  input: EvaluationInput;
  outcome: RuleOutcome;
  /** Set when the recipient is refused. */
  refusal: Refusal | undefined;
}

const NO_OUTCOME: RuleOutcome = {
  matchedRuleIds: [],
  block: false,
  markAsSpam: false,
  markAsRead: false,
  markAsStarred: false,
  archive: false,
  trash: false,
  folders: [],
};

/** Whether anything applies to a grant's mail (rules or a policy); when not, the stages skip it. */
export function anythingApplies(enforcement: GrantEnforcement): boolean {
  return enforcement.inbound.length > 0 || enforcement.policy !== undefined;
}

/** Decides one recipient at RCPT TO. */
export function decideSmtpRcpt({ enforcement, mailFrom, recipient, usage }: SmtpRcptInput): SmtpRcptDecision {
  const input = evaluationInputOf({ from: mailFrom, recipients: [recipient] });
  if (!anythingApplies(enforcement)) return { evaluated: false, input, outcome: NO_OUTCOME, refusal: undefined };
  const outcome = evaluateRules(enforcement.inbound, input, enforcement.lists);
  if (outcome.block) {
    const rule = outcome.matchedRuleIds[outcome.matchedRuleIds.length - 1];
    return {
      evaluated: true,
      input,
      outcome,
      refusal: {
        code: 550,
        enhanced: '5.7.1',
        message: `Delivery refused by a rule of the recipient's administrator (${rule})`,
        reason: 'rule',
      },
    };
  }
  return {
    evaluated: true,
    input,
    outcome,
    refusal: usage ? limitRefusal(enforcement.policy?.limits, usage) : undefined,
  };
}
