/**
 * @module oversight/oversight
 * The send gate (issue 37): the oversight a grant is under (its own mode, else its policy's, with every setting
 * resolved to its default), every guard run in order on each send (./guards.ts), and what an agent's reads leave for
 * the untrusted-read gate (a flagged message read by a key or an MCP session).
 */
import type { Enforcement } from '../admin/contracts.js';
import type { OperationContext, Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import type { GrantRow } from '../../storage/index.js';
import type {
  ApprovalRequest,
  Oversight,
  ResolvedOversight,
  SendAttempt,
  SendGuard,
  SendVerdict,
} from './contracts.js';
import { builtInGuards, readOnlyError, readersOf, suspendedError } from './guards.js';
import { recordUntrustedReads, type UntrustedRead } from './oversight-store.js';

/** Defaults of the settings (docs/oversight.md). */
export const OVERSIGHT_DEFAULTS = {
  untrustedReadWindowMinutes: 60,
  injectionThreshold: 0.7,
  threadAgentSendsPerHour: 5,
  loopMessages: 10,
  loopMinutes: 10,
  burstQueueMax: 1000,
} as const;

/** Parts of the gate. */
export interface OversightParts {
  enforcement: Pick<Enforcement, 'forGrant'>;
  /** A grant the principal may reach, by id or address. */
  requireGrant: (principal: Principal, ref: string) => Promise<GrantRow>;
  /** Guards run after the mode's refusals and before the approvals (runaway, loop, budgets). */
  guards?: readonly SendGuard[] | undefined;
}

/** Creates the send gate. */
export function createOversight(deps: Pick<CoreDeps, 'db' | 'clock'>, parts: OversightParts): Oversight & ReadNotes {
  const { db } = deps;
  const guards = builtInGuards(db, parts.guards);

  async function resolve(grant: GrantRow): Promise<ResolvedOversight> {
    const policy = (await parts.enforcement.forGrant(grant)).policy?.oversight ?? {};
    const mode = grant.oversightMode ?? policy.oversight_mode ?? 'autonomous';
    const modeFrom = grant.oversightMode ? 'grant' : policy.oversight_mode ? 'policy' : 'default';
    return {
      mode: mode as ResolvedOversight['mode'],
      modeFrom,
      untrustedReadGate: policy.untrusted_read_gate ?? (mode === 'autonomous' ? 'off' : 'new_recipients'),
      untrustedReadWindowMs:
        (policy.untrusted_read_window_minutes ?? OVERSIGHT_DEFAULTS.untrustedReadWindowMinutes) * 60_000,
      injectionThreshold: policy.untrusted_injection_threshold ?? OVERSIGHT_DEFAULTS.injectionThreshold,
      allowedRecipients: policy.allowed_recipients ?? [],
      reviewers: policy.reviewers ?? [],
      agentHeaders: policy.agent_headers ?? true,
      threadAgentSendsPerHour:
        policy.thread_agent_sends_per_hour === 0
          ? null
          : (policy.thread_agent_sends_per_hour ?? OVERSIGHT_DEFAULTS.threadAgentSendsPerHour),
      loopMessages: policy.loop_messages ?? OVERSIGHT_DEFAULTS.loopMessages,
      loopMinutes: policy.loop_minutes ?? OVERSIGHT_DEFAULTS.loopMinutes,
      sendsPerHour: policy.sends_per_hour ?? null,
      sendsPerDay: policy.sends_per_day ?? null,
      newRecipientsPerDay: policy.new_recipients_per_day ?? null,
      sendRatePerMinute: policy.send_rate_per_minute ?? null,
      burstQueueMax: policy.burst_queue_max ?? OVERSIGHT_DEFAULTS.burstQueueMax,
      policy,
    };
  }

  async function check(attempt: SendAttempt): Promise<SendVerdict> {
    const requests: ApprovalRequest[] = [];
    let queued: Extract<SendVerdict, { outcome: 'queue' }> | undefined;
    for (const guard of guards) {
      const verdict = await guard.check(attempt);
      if (!verdict) continue;
      if (verdict.outcome === 'refuse') return { outcome: 'refuse', error: verdict.error, check: guard.name };
      if (verdict.outcome === 'approve') requests.push(verdict.request);
      else queued ??= { outcome: 'queue', sendAt: verdict.sendAt, check: verdict.check, reason: verdict.reason };
    }
    if (requests.length > 0) return { outcome: 'approve', requests };
    if (queued) return queued;
    return { outcome: 'send', monitored: attempt.oversight.mode === 'monitored' };
  }

  return {
    resolve,
    check,
    async assertWritable(grant, what) {
      if (grant.suspendedAt != null) throw suspendedError(grant.suspendedReason);
      if ((await resolve(grant)).mode === 'read_only') throw readOnlyError(what);
    },
    async noteReads(principal, context, grantRef, result) {
      // Nothing in the result could be flagged at any threshold: no grant read, no setting resolved.
      if (flaggedMessages(result, Number.MIN_VALUE).length === 0) return;
      const grant = await parts.requireGrant(principal, grantRef);
      const flagged = flaggedMessages(result, (await resolve(grant)).injectionThreshold);
      if (flagged.length === 0) return;
      const at = deps.clock.now().getTime();
      const reads: UntrustedRead[] = readersOf(principal, context.client?.session).flatMap((reader) =>
        flagged.map((message) => ({
          reader,
          messageId: message.id,
          applicationId: grant.applicationId,
          grantId: grant.id,
          threadId: message.threadId,
          reasons: message.reasons,
          at,
        })),
      );
      await recordUntrustedReads(db, reads);
    },
  };
}

/** What the operations tell the gate of the messages a call read. */
export interface ReadNotes {
  /**
   * Records the messages of `result` (a message, a list of them, a thread with its messages) whose trust block flags
   * them, as read by the caller (its MCP session and its key) on the grant `grantRef` names.
   */
  noteReads(
    principal: Principal,
    context: Pick<OperationContext, 'client'>,
    grantRef: string,
    result: unknown,
  ): Promise<void>;
}

interface FlaggedMessage {
  id: string;
  threadId: string | null;
  reasons: string[];
}

/** At most this many objects of a result are looked at. */
const MAX_SCANNED = 500;

/** The messages of a read result whose `trust` block flags them: injection at the threshold, DMARC fail, a spoofed name. */
export function flaggedMessages(result: unknown, threshold: number): FlaggedMessage[] {
  const found: FlaggedMessage[] = [];
  const queue: unknown[] = [result];
  let scanned = 0;
  while (queue.length > 0 && scanned < MAX_SCANNED) {
    const value = queue.shift();
    scanned++;
    if (Array.isArray(value)) {
      queue.push(...(value as unknown[]).slice(0, MAX_SCANNED));
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const record = value as Record<string, unknown>;
    if (record.data !== undefined) queue.push(record.data);
    if (Array.isArray(record.messages)) queue.push(record.messages);
    const trust = record.trust as
      { injection?: { score?: number }; dmarc?: string; display_name_spoof?: { detected?: boolean } } | undefined;
    if (!trust || typeof record.id !== 'string') continue;
    const reasons: string[] = [];
    if ((trust.injection?.score ?? 0) >= threshold) reasons.push(`injection score ${trust.injection!.score}`);
    if (trust.dmarc === 'fail') reasons.push('DMARC fail');
    if (trust.display_name_spoof?.detected === true) reasons.push('spoofed display name');
    if (reasons.length > 0)
      found.push({ id: record.id, threadId: typeof record.thread_id === 'string' ? record.thread_id : null, reasons });
  }
  return found;
}
