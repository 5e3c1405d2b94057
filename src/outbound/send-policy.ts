/**
 * @module outbound/send-policy
 * The outbound stage's decision, pure: given what applies to the sending grant (its workspace's outbound rules and
 * lists, its policy's limits), a message ready to go and the grant's sends so far today, whether it may go, and the
 * verdicts that say why. No database, no clock: the caller (./outbound-stage.ts) loads, counts and records.
 *
 * Refusals are checked in this order, and the first one wins:
 * 1. an `outbound_send` rule that blocks (403, naming the rule);
 * 2. the daily send quota, `limit_count_daily_email_sent` (429 until the next UTC midnight);
 * 3. the size of the composed message, `limit_size_total_mime` (413).
 * A limit that is absent or negative (-1) is no limit. The quota counts messages (one a send, whatever the number
 * of recipients), per grant and UTC day.
 *
 * Attachment limits (`limit_attachment_*`) are reported in the verdicts but do not refuse a send: they are what an
 * Agentpost mailbox under the policy removes from mail it receives (the inbound stage), not a rule for mail out.
 */
import type { StoredPolicyLimits } from '../../storage/index.js';
import { evaluateRules, evaluationInputOf } from '../admin/index.js';
import type { OutgoingFile, SendCandidate, SendDecision, SendPolicy, SendRefusal, SendVerdicts } from './contracts.js';

/** Milliseconds in a UTC day. */
const DAY_MS = 86_400_000;

/** The UTC day of an instant: whole days since 1970-01-01 (the `day` of `grant_daily_usage`). */
export function utcDayOf(date: Date): number {
  return Math.floor(date.getTime() / DAY_MS);
}

/** The next UTC midnight after `date` (when a daily quota resets). */
export function nextUtcMidnight(date: Date): Date {
  return new Date((utcDayOf(date) + 1) * DAY_MS);
}

/** A limit as it applies: absent, non-numeric or negative (-1) is none. */
export function limitOf(value: number | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** Whether a content type is among the allowed ones (`image/*` allows every image; parameters are ignored). */
function typeAllowed(contentType: string, allowed: readonly string[]): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return allowed.some((entry) => {
    const pattern = entry.trim().toLowerCase();
    return pattern === type || (pattern.endsWith('/*') && type.startsWith(pattern.slice(0, -1)));
  });
}

/** The attachment verdict: counts and the files outside the policy's attachment limits. */
function attachmentVerdict(
  files: readonly OutgoingFile[],
  limits: StoredPolicyLimits | undefined,
): SendVerdicts['attachments'] {
  const countLimit = limitOf(limits?.limit_attachment_count_limit);
  const sizeLimit = limitOf(limits?.limit_attachment_size_limit);
  const allowed =
    limits?.limit_attachment_allowed_types && limits.limit_attachment_allowed_types.length > 0
      ? limits.limit_attachment_allowed_types
      : undefined;
  const outside: { filename: string; reason: string }[] = [];
  files.forEach((file, index) => {
    if (countLimit !== undefined && index >= countLimit)
      outside.push({ filename: file.filename, reason: `beyond the ${countLimit} attachments a message may carry` });
    else if (sizeLimit !== undefined && file.size > sizeLimit)
      outside.push({
        filename: file.filename,
        reason: `${file.size} bytes, over the ${sizeLimit}-byte attachment limit`,
      });
    else if (allowed && !typeAllowed(file.contentType, allowed))
      outside.push({ filename: file.filename, reason: `type ${file.contentType} is not among the allowed types` });
  });
  return {
    count: files.length,
    total_bytes: files.reduce((total, file) => total + file.size, 0),
    count_limit: countLimit ?? null,
    size_limit: sizeLimit ?? null,
    allowed_types: allowed ? [...allowed] : null,
    outside_limits: outside,
  };
}

/**
 * Decides a send. `sentToday` is the grant's count of sends this UTC day before this one; pass `undefined` to leave
 * the quota out (a send being scheduled counts on the day it goes out).
 */
export function decideSend(policy: SendPolicy, candidate: SendCandidate, sentToday: number | undefined): SendDecision {
  const input = evaluationInputOf({
    from: candidate.from,
    recipients: candidate.recipients,
    outboundType: candidate.reply ? 'reply' : 'compose',
  });
  const outcome = evaluateRules(policy.rules, input, policy.lists);
  const sizeLimit = limitOf(policy.limits?.limit_size_total_mime);
  const quotaLimit = limitOf(policy.limits?.limit_count_daily_email_sent);
  const sent = sentToday ?? 0;
  const quotaOk = sentToday === undefined || quotaLimit === undefined || sent < quotaLimit;
  const sizeOk = sizeLimit === undefined || candidate.sizeBytes <= sizeLimit;
  const verdicts: SendVerdicts = {
    size: { bytes: candidate.sizeBytes, limit: sizeLimit ?? null, ok: sizeOk },
    attachments: attachmentVerdict(candidate.attachments, policy.limits),
    quota: {
      sent_today: sent,
      limit: quotaLimit ?? null,
      left_today: quotaLimit === undefined ? null : Math.max(0, quotaLimit - sent),
      ok: quotaOk,
    },
  };
  let refusal: SendRefusal | undefined;
  const blocking = outcome.block ? outcome.matchedRuleIds.at(-1) : undefined;
  if (blocking !== undefined) refusal = { kind: 'rule', ruleId: blocking };
  else if (!quotaOk) refusal = { kind: 'quota', sentToday: sent, limit: quotaLimit };
  else if (!sizeOk) refusal = { kind: 'size', bytes: candidate.sizeBytes, limit: sizeLimit };
  return { input, outcome, verdicts, refusal };
}

/**
 * The recipients a rule would refuse on their own: each recipient evaluated alone (with the sender and the send's
 * type), so an agent sees which addresses to drop. Rule ids by address.
 */
export function refusedRecipients(
  policy: SendPolicy,
  candidate: Pick<SendCandidate, 'from' | 'recipients' | 'reply'>,
): Map<string, string> {
  const refused = new Map<string, string>();
  if (policy.rules.length === 0) return refused;
  for (const recipient of new Set(candidate.recipients.map((address) => address.trim().toLowerCase()))) {
    const input = evaluationInputOf({
      from: candidate.from,
      recipients: [recipient],
      outboundType: candidate.reply ? 'reply' : 'compose',
    });
    const outcome = evaluateRules(policy.rules, input, policy.lists);
    if (outcome.block) refused.set(recipient, outcome.matchedRuleIds.at(-1)!);
  }
  return refused;
}
