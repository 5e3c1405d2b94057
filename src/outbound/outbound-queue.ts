/**
 * @module outbound/outbound-queue
 * The durable outbound queue: a composed message accepted for delivery, the state of each recipient, and the
 * `mail.deliver` jobs that deliver it: one per message for the recipients on this service, one per recipient domain
 * for the others. Where each recipient goes is outbound/routing.ts; one attempt is outbound/delivery-attempts.ts.
 *
 * Reliability:
 * - Acceptance (the rows here, the jobs, and the sender's copy) is one transaction, so an accepted message is
 *   never lost; a crash before delivery leaves the job, which runs after the restart.
 * - Temporary failures (4xx, no connection, DNS trouble) are retried on `AGENTPOST_OUTBOUND_RETRY_SCHEDULE`
 *   (default 1 m, 5 m, 15 m, 30 m, 1 h, then hourly) until `AGENTPOST_OUTBOUND_GIVE_UP_AFTER` (5 days); a 5xx
 *   is a permanent failure at once. Either final failure is recorded on the recipient (the bounce record) with
 *   a `message.send_failed` event in the same transaction, and as a bounce report (src/deliverability/reports.ts:
 *   `source` `smtp` for a 5xx, `timeout` for the give-up, with `message.bounce_detected` and, when hard, a
 *   suppression). Remote delivery gives each recipient of an application's message its own VERP return path.
 * - Never twice: a job only sends to recipients still `queued` or `deferred`, and a run's per-recipient results
 *   commit in the same transaction as the job's outcome (`JobOutcome.commit`). The one window for a repeat is a
 *   crash after the remote server answered 250 and before that commit (at-least-once, as every MTA). Local
 *   delivery closes even that window: before storing, it looks for the Message-ID in the recipient's mailbox.
 */
import { and, eq, inArray } from 'drizzle-orm';
import { putBlobs, readBlob, releaseBlobs, tables, type Tx } from '../../storage/index.js';
import type { CoreDeps, SmtpClient } from '../ports/index.js';
import { eventRecorder } from '../outbox/index.js';
import type { InboundService } from '../mail/index.js';
import type { Job, JobOutcome, JobQueue, JobContext, JobHandler } from '../jobs/index.js';
import type { DeliveryStatus } from '../schemas/messages.js';
import type { StoredTrackingOptions } from '../../storage/schema/outbound.js';
import type { ReportIntake } from '../deliverability/index.js';
import type { ProviderGrant, Providers } from '../providers/index.js';
import type { AttemptResult, OutboundRow } from './contracts.js';
import { createDeliveryAttempts } from './delivery-attempts.js';
import { recordRecipientAttempt, reportsOf, sentStateOf } from './outbound-store.js';
import { createRouter, domainOf, type RoutedRecipient } from './routing.js';

/** The job kind of a delivery attempt. */
export const DELIVER_JOB = 'mail.deliver';
/** Lease of a first attempt run by the request that accepted the message (the worker takes over after it). */
const INLINE_LEASE_MS = 60_000;

/** One recipient of a message in the queue. */
type RecipientRow = typeof tables.outboundRecipients.$inferSelect;

/** A message to queue. */
export interface OutboundSpec {
  applicationId: string | null;
  grantId: string | null;
  /** The sender's copy in `messages`, when one was stored. */
  messageId: string | null;
  kind: 'message' | 'invitation' | 'system' | 'transactional';
  /** Without angle brackets. */
  headerMessageId: string;
  subject: string;
  envelopeFrom: string;
  raw: Buffer;
  rawHash: string;
  trackingOptions?: StoredTrackingOptions | undefined;
}

/** What the queue knows of a sent message: each recipient's delivery state and the tracking options. */
export interface SentState {
  deliveryStatus: DeliveryStatus[];
  trackingOptions: StoredTrackingOptions | undefined;
}

/** Parts the queue uses. */
export interface OutboundQueueParts {
  inbound: Pick<InboundService, 'checkRecipient' | 'deliverInbound'>;
  jobs: JobQueue;
  smtp: SmtpClient;
  /** Permanent failures become bounce reports; remote delivery asks it for each recipient's VERP return path. */
  reports: Pick<ReportIntake, 'recordDeliveryFailure' | 'returnPaths'>;
  /** The mailbox providers: a grant whose provider has a submitter sends through it (the `submission` route). */
  providers?: Providers | undefined;
}

/** Creates the queue: routing, acceptance inside a transaction, the delivery handler and the inline first attempt. */
export function createOutboundQueue(deps: CoreDeps, { inbound, jobs, smtp, reports, providers }: OutboundQueueParts) {
  const { db, clock, newId, logger, config } = deps;
  const recordOutboxEvent = eventRecorder({ newId, clock });
  const nowMs = () => clock.now().getTime();
  const router = createRouter(deps, inbound);
  const { route } = router;

  /**
   * Routes the recipients of a send of `grant` (or of the grant with that id): through its account's own SMTP server
   * when its provider has a submitter (a connected account), else to mailboxes here or over MX/relay ({@link route}).
   */
  async function routeFor(grant: ProviderGrant | string, emails: string[]): Promise<RoutedRecipient[]> {
    if (!providers) return route(emails);
    const provider =
      typeof grant === 'string' ? (await providers.ofGrantId(db.orm, grant)).provider : providers.of(grant);
    if (!provider.submitter) return route(emails);
    const unique = [...new Set(emails.map((email) => email.trim().toLowerCase()))];
    return unique.map((email) => ({ email, domain: domainOf(email), route: 'submission' }));
  }
  const { deliverLocal, deliverRemote } = createDeliveryAttempts(deps, { inbound, smtp, router });

  function eventObject(
    outbound: OutboundRow,
    rows: Pick<RecipientRow, 'email' | 'status' | 'lastCode' | 'lastResponse'>[],
  ) {
    return {
      id: outbound.messageId ?? outbound.id,
      grant_id: outbound.grantId,
      object: 'message',
      subject: outbound.subject,
      message_id_header: `<${outbound.headerMessageId}>`,
      recipients: rows.map((row) => ({
        email: row.email,
        status: row.status,
        code: row.lastCode ?? 0,
        diagnostic_code: row.lastResponse ?? '',
      })),
    };
  }

  /** Records `type` for the message when it belongs to an application. */
  async function emit(
    tx: Tx,
    outbound: OutboundRow,
    type: 'message.send_failed' | 'message.send_success',
    rows: Parameters<typeof eventObject>[1],
  ) {
    if (!outbound.applicationId || rows.length === 0) return;
    await recordOutboxEvent(tx, {
      applicationId: outbound.applicationId,
      grantId: outbound.grantId ?? undefined,
      type,
      objectId: outbound.messageId ?? outbound.id,
      object: eventObject(outbound, rows),
    });
  }

  /** Once every recipient is final: the queue lets go of the raw message (the sender's copy, if any, keeps it). */
  async function finishIfDone(tx: Tx, outbound: OutboundRow): Promise<void> {
    const rows = await tx
      .select()
      .from(tables.outboundRecipients)
      .where(eq(tables.outboundRecipients.outboundId, outbound.id));
    if (rows.some((row) => row.status === 'queued' || row.status === 'deferred')) return;
    await tx
      .update(tables.outboundMessages)
      .set({ pendingRawHash: null, updatedAt: nowMs() })
      .where(eq(tables.outboundMessages.id, outbound.id));
    await releaseBlobs(tx, [outbound.rawHash]);
    if (outbound.kind === 'message')
      await emit(
        tx,
        outbound,
        'message.send_success',
        rows.filter((row) => row.status === 'delivered'),
      );
  }

  /**
   * Queues a composed message inside the caller's transaction: the ledger rows, one job for the local recipients
   * (returned, already leased to the caller, who runs it at once with {@link runInline} after the commit) and one
   * per remote domain (the workers take those).
   */
  async function queue(
    tx: Tx,
    spec: OutboundSpec,
    recipients: RoutedRecipient[],
  ): Promise<{ outboundId: string; inline: Job | undefined }> {
    const at = nowMs();
    const id = newId();
    const open = recipients.some((recipient) => !recipient.failed);
    // The sender's copy stored the same bytes already in this transaction.
    if (spec.messageId === null) await putBlobs(tx, [{ bytes: spec.raw, hash: spec.rawHash }], Math.floor(at / 1000));
    const [outbound] = await tx
      .insert(tables.outboundMessages)
      .values({
        id,
        applicationId: spec.applicationId,
        grantId: spec.grantId,
        messageId: spec.messageId,
        kind: spec.kind,
        headerMessageId: spec.headerMessageId,
        subject: spec.subject.slice(0, 998),
        envelopeFrom: spec.envelopeFrom,
        rawHash: spec.rawHash,
        pendingRawHash: open ? spec.rawHash : null,
        rawSize: spec.raw.length,
        trackingOptions: spec.trackingOptions ?? null,
        acceptedAt: at,
        updatedAt: at,
      })
      .returning();
    const rows = recipients.map((recipient) => ({
      outboundId: id,
      email: recipient.email,
      domain: recipient.domain,
      route: recipient.route,
      status: recipient.failed ? ('failed' as const) : ('queued' as const),
      lastCode: recipient.failed?.code ?? null,
      lastResponse: recipient.failed?.response ?? null,
      updatedAt: at,
      finalAt: recipient.failed ? at : null,
    }));
    for (let index = 0; index < rows.length; index += 100)
      await tx.insert(tables.outboundRecipients).values(rows.slice(index, index + 100));
    const failedAtOnce = rows.filter((row) => row.status === 'failed');
    await emit(tx, outbound!, 'message.send_failed', failedAtOnce);
    // An unknown mailbox on a domain of ours: the synchronous 550 is a bounce too.
    for (const row of failedAtOnce)
      await reports.recordDeliveryFailure(tx, outbound!, {
        email: row.email,
        code: row.lastCode ?? 550,
        response: row.lastResponse ?? '',
        source: 'smtp',
      });
    if (!open) {
      await releaseBlobs(tx, [spec.rawHash]);
      return { outboundId: id, inline: undefined };
    }
    let inline: Job | undefined;
    const pending = recipients.filter((recipient) => !recipient.failed);
    // Local delivery, or a submission to the sending account's server, is tried at once by the request (a connected
    // account's recipients are all `submission`, never local or remote).
    const first = pending.some((recipient) => recipient.route === 'local')
      ? 'local'
      : pending.some((recipient) => recipient.route === 'submission')
        ? 'submission'
        : undefined;
    if (first) {
      const payload = { outbound_id: id, route: first };
      const { id: jobId } = await jobs.enqueueIn(tx, {
        kind: DELIVER_JOB,
        payload,
        dedupeKey: `${DELIVER_JOB}:${id}:${first}`,
      });
      const owner = `inline-${newId()}`;
      const leaseExpiresAt = at + INLINE_LEASE_MS;
      await tx
        .update(tables.jobs)
        .set({ leaseOwner: owner, leaseExpiresAt, attempts: 1 })
        .where(eq(tables.jobs.id, jobId));
      inline = {
        id: jobId,
        kind: DELIVER_JOB,
        payload,
        runAt: at,
        attempts: 1,
        leaseOwner: owner,
        leaseExpiresAt,
        lastError: null,
        dedupeKey: `${DELIVER_JOB}:${id}:${first}`,
        createdAt: at,
        deadAt: null,
        orderKey: null,
      };
    }
    for (const domain of new Set(
      pending.filter((recipient) => recipient.route === 'remote').map((recipient) => recipient.domain),
    )) {
      await jobs.enqueueIn(tx, {
        kind: DELIVER_JOB,
        payload: { outbound_id: id, route: 'remote', domain },
        dedupeKey: `${DELIVER_JOB}:${id}:${domain}`,
      });
    }
    return { outboundId: id, inline };
  }

  /**
   * Runs a first attempt the caller holds the lease of (local delivery right after acceptance, so the recipient
   * has the message when the send returns) and records its outcome. Never throws: if it fails, the job stays and a
   * worker retries it once the lease lapses.
   */
  async function runInline(job: Job | undefined): Promise<void> {
    if (!job) return;
    const owner = job.leaseOwner!;
    try {
      const outcome = await deliver(job, {
        owner,
        extendLease: (ms = INLINE_LEASE_MS) => jobs.extendLease(job, owner, ms),
      });
      await jobs.settleAndClaim([{ job, owner, outcome }], undefined);
    } catch (error) {
      logger.warn('first delivery attempt failed; the queue will retry', {
        job_id: job.id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /** Writes a run's results (inside the transaction that settles its job). */
  async function record(tx: Tx, outbound: OutboundRow, results: AttemptResult[], nextAt: number): Promise<void> {
    const at = nowMs();
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
          await reports.recordDeliveryFailure(tx, outbound, {
            email: result.email,
            code: result.code,
            response: result.response,
            source: result.cause === 'timeout' ? 'timeout' : 'smtp',
          });
      }
    }
    await emit(tx, outbound, 'message.send_failed', failed);
    await finishIfDone(tx, outbound);
  }

  /** The `mail.deliver` handler: one attempt for the job's recipients still owed the message. */
  async function deliver(job: Job, context: JobContext): Promise<JobOutcome> {
    const payload = job.payload as { outbound_id?: string; route?: 'local' | 'remote' | 'submission'; domain?: string };
    const routeOfJob = payload.route ?? 'local';
    const [outbound] = await db.orm
      .select()
      .from(tables.outboundMessages)
      .where(eq(tables.outboundMessages.id, String(payload.outbound_id)));
    if (!outbound) return { type: 'done' };
    const pending = await db.orm
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
    const raw = outbound.pendingRawHash ? await readBlob(db.orm, outbound.pendingRawHash) : undefined;
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
        outbound.grantId && providers
          ? (await providers.ofGrantId(db.orm, outbound.grantId)).provider.submitter
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
      const everyone = await db.orm
        .select({ email: tables.outboundRecipients.email })
        .from(tables.outboundRecipients)
        .where(eq(tables.outboundRecipients.outboundId, outbound.id));
      const returnPathOf = await reports.returnPaths(
        outbound,
        everyone.map((row) => row.email),
      );
      results = await deliverRemote(outbound, String(payload.domain), pending, raw, context, returnPathOf);
    } else results = await deliverLocal(outbound, pending, raw);

    const now = nowMs();
    const schedule = config.outboundRetrySchedule;
    const deadline = outbound.acceptedAt + config.outboundGiveUpMs;
    // The last attempt is made at the deadline; a recipient still deferred then fails for good.
    const nextAt = Math.min(now + schedule[Math.min(Math.max(job.attempts, 1) - 1, schedule.length - 1)]!, deadline);
    if (now >= deadline) {
      const days = Math.round((config.outboundGiveUpMs / 86_400_000) * 10) / 10;
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
      await record(tx, outbound, results, nextAt);
      await afterCommit?.(tx);
    };
    for (const result of results) {
      deps.metrics?.outboundAttempt(routeOfJob === 'local' ? 'local' : 'remote', result.outcome);
      if (result.outcome !== 'delivered')
        logger.info('delivery attempt', {
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

  /** Delivery state of each recipient, and the tracking options, of the given sender's copies, by message id. */
  async function statusOf(messageIds: string[]): Promise<Map<string, SentState>> {
    const byMessage = new Map<string, SentState>();
    if (messageIds.length === 0) return byMessage;
    const rows = await sentStateOf(db.orm, { ids: JSON.stringify(messageIds) });
    for (const { messageId, trackingOptions, recipient } of rows) {
      const state = byMessage.get(messageId!) ?? { deliveryStatus: [], trackingOptions: trackingOptions ?? undefined };
      state.deliveryStatus.push({
        email: recipient.email,
        status: recipient.status,
        attempts: recipient.attempts,
        ...(recipient.lastCode !== null ? { code: recipient.lastCode } : {}),
        ...(recipient.lastResponse !== null ? { response: recipient.lastResponse } : {}),
        ...(recipient.nextAttemptAt !== null ? { next_attempt_at: Math.floor(recipient.nextAttemptAt / 1000) } : {}),
        updated_at: Math.floor(recipient.updatedAt / 1000),
      });
      byMessage.set(messageId!, state);
    }
    if (byMessage.size === 0) return byMessage;
    // Later reports overwrite earlier ones: each recipient shows its latest bounce and complaint.
    for (const { messageId, report } of await reportsOf(db.orm, { ids: JSON.stringify([...byMessage.keys()]) })) {
      const status = byMessage.get(messageId!)?.deliveryStatus.find((entry) => entry.email === report.recipient);
      if (!status) continue;
      const at = Math.floor(report.at / 1000);
      if (report.kind === 'complaint') status.complaint = { type: report.reason, complained_at: at };
      else if (report.source !== 'arf') {
        status.bounce = {
          type: report.bounceType ?? 'soft',
          ...(report.statusCode !== null ? { code: report.statusCode } : {}),
          ...(report.smtpCode !== null ? { smtp_code: report.smtpCode } : {}),
          reason: report.reason,
          source: report.source,
          bounced_at: at,
        };
      }
    }
    return byMessage;
  }

  const handlers: Record<string, JobHandler> = { [DELIVER_JOB]: deliver };
  return { route, routeFor, queue, runInline, statusOf, handlers };
}

export type OutboundQueue = ReturnType<typeof createOutboundQueue>;
