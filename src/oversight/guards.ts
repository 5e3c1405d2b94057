/**
 * @module oversight/guards
 * The send gate's built-in checks, in the order they run (docs/oversight.md, "The order of the checks"):
 * 1. `suspended`: the kill switch (403 naming the reason);
 * 2. `read_only`: the mode refuses every send (403 naming it);
 * 3. the runaway and loop guards and the budgets (./runaway-guards.ts and ./budget-guards.ts, when present);
 * 4. `untrusted_read`: the reader read a flagged message within the window: sends outside its thread (or all) wait;
 * 5. the mode: `gated_all` waits for every send, `gated_send` for one to anyone outside the thread and the allowlist.
 * `monitored` is not a check: its sends go out and are listed for review.
 */
import type { Principal } from '../access.js';
import type { Database } from '../../storage/index.js';
import { AppError } from '../errors.js';
import type { GuardVerdict, ResolvedOversight, SendAttempt, SendGuard } from './contracts.js';
import { threadParticipants, untrustedReadsSince } from './oversight-store.js';

/** The refusal of a suspended grant: every send and agent write names the reason. */
export function suspendedError(reason: string | null): AppError {
  return new AppError(
    'forbidden',
    `This grant is suspended${reason ? `: ${reason}` : ''}. Nothing is sent or written for it until someone resumes it (POST /v3/grants/{id}/resume).`,
    undefined,
    { type: 'grant_suspended' },
  );
}

/** The refusal of a read-only grant, naming the mode and what it refuses. */
export function readOnlyError(what: string): AppError {
  return new AppError(
    'forbidden',
    `This grant's oversight mode is read_only: ${what} is not accepted. Someone with admin rights can change the mode (PATCH /v3/grants/{id} oversight_mode).`,
    undefined,
    { type: 'oversight_read_only' },
  );
}

/** The readers a call is known by, for the untrusted-read gate: its MCP session, its key, else its application. */
export function readersOf(principal: Principal, session: string | undefined): string[] {
  const readers: string[] = [];
  if (session) readers.push(`session:${session}`);
  if (principal.key) readers.push(`key:${principal.key.id}`);
  if (readers.length === 0) readers.push(`app:${principal.applicationId}`);
  return readers;
}

/** Whether an address is on an allowlist of addresses and domains (`@example.com` or `example.com`). */
export function allowlisted(address: string, allowlist: readonly string[]): boolean {
  const email = address.toLowerCase();
  const domain = email.slice(email.lastIndexOf('@') + 1);
  return allowlist.some((entry) => {
    const item = entry.trim().toLowerCase();
    if (item.includes('@') && !item.startsWith('@')) return item === email;
    return (item.startsWith('@') ? item.slice(1) : item) === domain;
  });
}

/** The recipients of an attempt outside its thread's participants and the allowlist. */
async function outsiders(db: Database, attempt: SendAttempt, oversight: ResolvedOversight): Promise<string[]> {
  const participants = attempt.threadId
    ? await threadParticipants(db, attempt.grant.id, attempt.threadId)
    : new Set<string>();
  return attempt.recipients.filter(
    (recipient) => !participants.has(recipient) && !allowlisted(recipient, oversight.allowedRecipients),
  );
}

const suspended: SendGuard = {
  name: 'suspended',
  check: async (attempt) =>
    attempt.grant.suspendedAt != null
      ? { outcome: 'refuse', error: suspendedError(attempt.grant.suspendedReason) }
      : undefined,
};

const readOnly: SendGuard = {
  name: 'read_only',
  check: async (attempt) =>
    attempt.oversight.mode === 'read_only' ? { outcome: 'refuse', error: readOnlyError('a send') } : undefined,
};

/** The untrusted-read gate (issue 37, item 3). */
function untrustedRead(db: Database): SendGuard {
  return {
    name: 'untrusted_read',
    async check(attempt): Promise<GuardVerdict | undefined> {
      const { oversight } = attempt;
      if (oversight.untrustedReadGate === 'off') return undefined;
      const readers = readersOf(attempt.principal, attempt.context.client?.session);
      const reads = await untrustedReadsSince(
        db,
        readers,
        attempt.grant.id,
        attempt.at - oversight.untrustedReadWindowMs,
      );
      if (reads.length === 0) return undefined;
      const trust = [...new Set(reads.flatMap((read) => read.reasons))];
      const minutes = Math.round(oversight.untrustedReadWindowMs / 60_000);
      const read = `read ${reads.length === 1 ? 'a message' : `${reads.length} messages`} flagged by its trust block (${trust.join(', ')}) in the last ${minutes} minutes`;
      if (oversight.untrustedReadGate === 'all_sends')
        return {
          outcome: 'approve',
          request: { check: 'untrusted_read', reason: `The caller ${read}: every send waits for approval.`, trust },
        };
      const participants = new Set<string>();
      for (const threadId of new Set(reads.map((entry) => entry.threadId).filter((id): id is string => id !== null)))
        for (const address of await threadParticipants(db, attempt.grant.id, threadId)) participants.add(address);
      const fresh = attempt.recipients.filter((recipient) => !participants.has(recipient));
      if (fresh.length === 0) return undefined;
      return {
        outcome: 'approve',
        request: {
          check: 'untrusted_read',
          reason: `The caller ${read}; ${fresh.join(', ')} ${fresh.length === 1 ? 'is' : 'are'} not in that thread, so the send waits for approval.`,
          trust,
        },
      };
    },
  };
}

/** `gated_all` and `gated_send`. */
function modeGate(db: Database): SendGuard {
  return {
    name: 'mode',
    async check(attempt): Promise<GuardVerdict | undefined> {
      const { oversight } = attempt;
      if (oversight.mode === 'gated_all')
        return {
          outcome: 'approve',
          request: { check: 'gated_all', reason: 'The grant is in gated_all mode: every send waits for approval.' },
        };
      if (oversight.mode !== 'gated_send') return undefined;
      const outside = await outsiders(db, attempt, oversight);
      if (outside.length === 0) return undefined;
      return {
        outcome: 'approve',
        request: {
          check: 'gated_send',
          reason: `The grant is in gated_send mode and ${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} outside the thread's participants and the allowlist.`,
        },
      };
    },
  };
}

/** The guards in their order; `extra` (runaway, loop, budgets) run between the mode's refusals and the approvals. */
export function builtInGuards(db: Database, extra: readonly SendGuard[] = []): SendGuard[] {
  return [suspended, readOnly, ...extra, untrustedRead(db), modeGate(db)];
}
