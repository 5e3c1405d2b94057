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
 *
 * The queue is plain functions over a small state made here (./outbound-queue-state.ts): acceptance
 * (./outbound-queue-accept.ts), delivery (./outbound-queue-deliver.ts) and the delivery state of sent messages
 * (./outbound-queue-status.ts).
 */
import type { SmtpClient, CoreDeps } from '../ports/index.js';
import { eventRecorder } from '../outbox/index.js';
import type { InboundService } from '../mail/index.js';
import type { Job, JobQueue, JobHandler } from '../jobs/index.js';
import type { Tx } from '../../storage/index.js';
import type { ReportIntake } from '../deliverability/index.js';
import type { ProviderGrant, Providers } from '../providers/index.js';
import { createDeliveryAttempts } from './delivery-attempts.js';
import { queue } from './outbound-queue-accept.js';
import { deliver, runInline } from './outbound-queue-deliver.js';
import type { OutboundQueue, OutboundSpec, RoutedRecipient } from './contracts.js';
import { DELIVER_JOB, type QueueState } from './outbound-queue-state.js';
import { statusOf } from './outbound-queue-status.js';
import { createRouter, domainOf } from './routing.js';

export { DELIVER_JOB } from './outbound-queue-state.js';

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
export function createOutboundQueue(
  deps: CoreDeps,
  { inbound, jobs, smtp, reports, providers }: OutboundQueueParts,
): OutboundQueue {
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
  const state: QueueState = {
    db,
    newId,
    logger,
    config,
    deps,
    jobs,
    reports,
    providers,
    recordOutboxEvent,
    nowMs,
    deliverLocal,
    deliverRemote,
  };

  const handlers: Record<string, JobHandler> = { [DELIVER_JOB]: (job, context) => deliver(state, job, context) };
  return {
    route,
    routeFor,
    queue: (tx: Tx, spec: OutboundSpec, recipients: RoutedRecipient[]) => queue(state, tx, spec, recipients),
    runInline: (job: Job | undefined) => runInline(state, job),
    statusOf: (messageIds: string[]) => statusOf(state, messageIds),
    handlers,
  };
}
