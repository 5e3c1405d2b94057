/**
 * @module outbound/outbound-queue-deliver
 * The `mail.deliver` handler of the outbound queue (./outbound-queue.ts): one attempt for the recipients still owed
 * the message (here, over MX or relay, or through the sending account's server), the retry schedule and the give-up,
 * the results written in the transaction that settles the job, and the inline first attempt.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { readBlob, tables, type Tx } from '../../storage/index.js';
import type { Job, JobContext, JobOutcome } from '../jobs/index.js';
import type { DeliveryStatus } from '../schemas/messages.js';
import type { AttemptResult, OutboundRow } from './contracts.js';
import { recordRecipientAttempt } from './outbound-store.js';
import { emit, eventObject, finishIfDone, INLINE_LEASE_MS, type QueueState } from './outbound-queue-state.js';

/**
 * Runs a first attempt the caller holds the lease of (local delivery right after acceptance, so the recipient
 * has the message when the send returns) and records its outcome. Never throws: if it fails, the job stays and a
 * worker retries it once the lease lapses.
 */
export async function runInline(state: QueueState, job: Job | undefined): Promise<void> {
  if (!job) return;
  const owner = job.leaseOwner!;
  try {
    const outcome = await deliver(state, job, {
      owner,
      extendLease: (ms = INLINE_LEASE_MS) => state.jobs.extendLease(job, owner, ms),
    });
    await state.jobs.settleAndClaim([{ job, owner, outcome }], undefined);
  } catch (error) {
    state.logger.warn('first delivery attempt failed; the queue will retry', {
      job_id: job.id,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/** Writes a run's results (inside the transaction that settles its job). */
export async function record(
  state: QueueState,
  tx: Tx,
  outbound: OutboundRow,
  results: AttemptResult[],
  nextAt: number,
): Promise<void> {
  const at = state.nowMs();
  const failed: Parameters<typeof eventObject>[1] = [];
  for (const result of results) {
    const status: DeliveryStatus['status'] = result.outcome;
    const final = status !== 'deferred';
    const updated = await recordRecipientAttempt(tx, outbound.id, result.email, {
      status,
      code: result.code,
      response: result.response,
      nextAttemptAt: final ? null : nextAt,
      at,
      final,
    });
    if (status === 'failed' && updated[0]) {
      failed.push(updated[0]);
      // A permanent reply (5xx) or the queue giving up is a bounce; losing the bytes (our fault) or the sending
      // account's refused login is not the address's.
      if (result.cause !== 'lost' && result.cause !== 'account')
        await state.reports.recordDeliveryFailure(tx, outbound, {
          email: result.email,
          code: result.code,
          response: result.response,
          source: result.cause === 'timeout' ? 'timeout' : 'smtp',
        });
    }
  }
  await emit(state, tx, outbound, 'message.send_failed', failed);
  await finishIfDone(state, tx, outbound);
}

/** The `mail.deliver` handler: one attempt for the job's recipients still owed the message. */
export async function deliver(state: QueueState, job: Job, context: JobContext): Promise<JobOutcome> {
  const payload = job.payload as { outbound_id?: string; route?: 'local' | 'remote' | 'submission'; domain?: string };
  const routeOfJob = payload.route ?? 'local';
  const [outbound] = await state.db.orm
    .select()
    .from(tables.outboundMessages)
    .where(eq(tables.outboundMessages.id, String(payload.outbound_id)));
  if (!outbound) return { type: 'done' };
  const pending = await state.db.orm
    .select()
    .from(tables.outboundRecipients)
    .where(
      and(
        eq(tables.outboundRecipients.outboundId, outbound.id),
        eq(tables.outboundRecipients.route, routeOfJob),
        payload.route === 'remote' ? eq(tables.outboundRecipients.domain, String(payload.domain)) : undefined,
        inArray(tables.outboundRecipients.status, ['queued', 'deferred']),
      ),
    );
  if (pending.length === 0) return { type: 'done' };
  const raw = outbound.pendingRawHash ? await readBlob(state.db.orm, outbound.pendingRawHash) : undefined;
  let results: AttemptResult[];
  /** What else the commit of this attempt records (a connected account's sent copy, once delivered). */
  let afterCommit: ((tx: Tx) => Promise<void>) | undefined;
  if (!raw)
    results = pending.map((recipient) => ({
      email: recipient.email,
      outcome: 'failed',
      code: 550,
      response: '5.3.0 the message is no longer stored',
      cause: 'lost',
    }));
  else if (routeOfJob === 'submission') {
    const submitter =
      outbound.grantId && state.providers
        ? (await state.providers.ofGrantId(state.db.orm, outbound.grantId)).provider.submitter
        : undefined;
    results = submitter
      ? await submitter.submit(outbound, pending, raw)
      : pending.map((recipient) => ({
          email: recipient.email,
          outcome: 'failed',
          code: 550,
          response: '5.3.0 the sending account no longer sends through its own server',
          cause: 'account',
        }));
    if (submitter && results.some((result) => result.outcome === 'delivered'))
      afterCommit = (tx) => submitter.submitted(tx, outbound);
  } else if (payload.route === 'remote') {
    const everyone = await state.db.orm
      .select({ email: tables.outboundRecipients.email })
      .from(tables.outboundRecipients)
      .where(eq(tables.outboundRecipients.outboundId, outbound.id));
    const returnPathOf = await state.reports.returnPaths(
      outbound,
      everyone.map((row) => row.email),
    );
    results = await state.deliverRemote(outbound, String(payload.domain), pending, raw, context, returnPathOf);
  } else results = await state.deliverLocal(outbound, pending, raw);

  const now = state.nowMs();
  const schedule = state.config.outboundRetrySchedule;
  const deadline = outbound.acceptedAt + state.config.outboundGiveUpMs;
  // The last attempt is made at the deadline; a recipient still deferred then fails for good.
  const nextAt = Math.min(now + schedule[Math.min(Math.max(job.attempts, 1) - 1, schedule.length - 1)]!, deadline);
  if (now >= deadline) {
    const days = Math.round((state.config.outboundGiveUpMs / 86_400_000) * 10) / 10;
    results = results.map((result) =>
      result.outcome === 'deferred'
        ? {
            ...result,
            outcome: 'failed',
            response: `gave up after ${days} days of retries; last error: ${result.response}`.slice(0, 1000),
            cause: 'timeout',
          }
        : result,
    );
  }
  const deferred = results.filter((result) => result.outcome === 'deferred');
  const commit = async (tx: Tx) => {
    await record(state, tx, outbound, results, nextAt);
    await afterCommit?.(tx);
  };
  for (const result of results) {
    state.deps.metrics?.outboundAttempt(routeOfJob === 'local' ? 'local' : 'remote', result.outcome);
    if (result.outcome !== 'delivered')
      state.logger.info('delivery attempt', {
        outbound_id: outbound.id,
        recipient: result.email,
        outcome: result.outcome,
        code: result.code,
        response: result.response.slice(0, 200),
      });
  }
  if (deferred.length > 0)
    return {
      type: 'retry',
      at: new Date(nextAt),
      error: `${deferred.length} recipient(s) deferred: ${deferred[0]!.response}`.slice(0, 2000),
      commit,
    };
  return { type: 'done', commit };
}
