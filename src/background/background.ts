/**
 * @module background/background
 * The background role of a service process: the outbox dispatcher, one job worker running every job kind
 * the core has handlers for, the webhook delivery runner (src/webhooks/delivery-runner.ts: ordered batch claims
 * of `webhook.deliver` jobs), and the retention purge (./retention.ts: old outbox events and dead jobs), followed
 * in the same loop by the policy upkeep (admin/policy-upkeep.ts: retention periods and additional folders).
 * `server/main.ts` starts it in a process with the `worker` role (`serve --roles`, `AGENTPOST_ROLES`; every process by
 * default) and stops it in `close()`.
 * Several processes on one database may each run it: claims are leased and the outbox batch is taken by the
 * UPDATE that marks it, so no work is done twice at once. Work that another process queued (mail taken by an
 * `smtp`-only process, a send through an `http`-only one) wakes nothing here: the loops find it at their next poll.
 * It also runs the sync of connected IMAP accounts (`core.accounts.sync`, src/imap/sync-runner.ts).
 *
 * To add a kind of background work: give the service a `handlers` record (job kind → JobHandler), spread it
 * into `core.jobs.handlers` in `createCore` (src/core.ts), and enqueue with `core.jobs.queue.enqueue(...)` or, inside
 * a write transaction, `core.jobs.queue.enqueueIn(tx, ...)`.
 */
import type { Core } from '../core-types.js';
import type { TimerRunOptions } from '../calendar/index.js';
import { onEventRecorded } from '../outbox/index.js';
import { startPollingLoop, createWorker, type Worker } from '../jobs/index.js';
import { createRetention, PURGE_FIRST_DELAY_MS, PURGE_INTERVAL_MS } from './retention.js';
import { startDeliveryRunner, type DeliveryRunner } from '../webhooks/index.js';
import type { FollowUpSender } from '../outbound/index.js';

/** Pause between an event being recorded in this process and the dispatcher running. */
const DISPATCH_DEBOUNCE_MS = 10;

/** Options of {@link startBackgroundWork}. */
export interface BackgroundOptions {
  /** Longest wait between polls, in real milliseconds (default `config.workerPollMs`). */
  pollIntervalMs?: number;
  /** Jobs run at once by this process (default 16: webhook deliveries mostly wait on the network). */
  concurrency?: number;
  /** Real milliseconds between retention purges (default {@link PURGE_INTERVAL_MS}); `wake()` also runs one. */
  purgeIntervalMs?: number;
  /** Real milliseconds from start to the first purge (default {@link PURGE_FIRST_DELAY_MS}). */
  purgeFirstDelayMs?: number;
  /**
   * How follow-ups are sent: `send_message` through the operation runner (server/main.ts passes it; areas do not
   * reach the operations). Absent, this process runs no follow-ups.
   */
  send?: FollowUpSender;
}

/** The running background role. */
export interface BackgroundWork {
  worker: Worker;
  webhookRunner: DeliveryRunner;
  /** Polls the outbox and the jobs table and runs a retention purge now (e.g. after a test moved its clock). */
  wake(): void;
  /** Stops dispatching, claiming and purging, and waits for the jobs in progress. */
  stop(): Promise<void>;
}

/** Starts the dispatcher and a worker for `core`. */
export function startBackgroundWork(core: Core, options: BackgroundOptions = {}): BackgroundWork {
  const { clock, logger, newId, config } = core.deps;
  const pollIntervalMs = options.pollIntervalMs ?? config.workerPollMs;

  const dispatcher = startPollingLoop({
    name: 'outbox dispatcher',
    intervalMs: pollIntervalMs,
    logger,
    onBeat: core.health.heartbeat('outbox dispatcher', pollIntervalMs),
    async step(woken) {
      // Woken by an event of this process: its transaction may not have committed yet, so skip the read of
      // pending rows (the dispatch is a write, queued behind that transaction) but still skip when nobody listens.
      if (!(woken ? await core.notifications.outbox.interested() : await core.notifications.outbox.hasPending()))
        return false;
      const taken = await core.notifications.outbox.dispatchBatch();
      return taken > 0;
    },
  });
  // Events recorded in this process wake the dispatcher after a short pause, so a burst of changes is fanned
  // out in one transaction rather than one commit per change.
  let debounce: NodeJS.Timeout | undefined;
  const unsubscribe = onEventRecorded(() => {
    debounce ??= setTimeout(() => {
      debounce = undefined;
      dispatcher.wake();
    }, DISPATCH_DEBOUNCE_MS);
  });

  const worker = createWorker({
    queue: core.jobs.queue,
    handlers: core.jobs.handlers,
    clock,
    logger,
    owner: `worker-${newId()}`,
    concurrency: options.concurrency ?? 16,
    pollIntervalMs,
    // Longer than the longest webhook attempt (a challenge-free delivery is one request with this deadline).
    leaseMs: Math.max(60_000, 2 * config.webhookTimeoutMs + 10_000),
    onBeat: core.health.heartbeat('job worker', pollIntervalMs),
    ...(core.deps.metrics ? { metrics: core.deps.metrics } : {}),
  });

  const webhookRunner = startDeliveryRunner({
    queue: core.jobs.queue,
    delivery: core.notifications.deliveries,
    kind: core.notifications.deliveries.kind,
    clock,
    logger,
    owner: `webhooks-${newId()}`,
    pollIntervalMs,
    // Longer than the longest webhook attempt; the runner extends the leases of what it holds besides.
    leaseMs: Math.max(60_000, 2 * config.webhookTimeoutMs + 10_000),
    onBeat: core.health.heartbeat('webhook delivery', pollIntervalMs),
    metrics: core.deps.metrics,
  });

  // Retention: once shortly after start, then every interval (and on wake). A purge in progress stops between
  // chunks when the role stops.
  const retention = createRetention(core.deps, {
    interested: () => core.notifications.outbox.interested(),
    dispatchedRetentionMs: config.eventStream.retentionHours * 3_600_000,
  });
  const purgeAbort = new AbortController();
  let firstPurgeDue = false;
  const purger = startPollingLoop({
    name: 'retention purge',
    intervalMs: options.purgeIntervalMs ?? PURGE_INTERVAL_MS,
    logger,
    onBeat: core.health.heartbeat('retention purge', options.purgeIntervalMs ?? PURGE_INTERVAL_MS),
    async step(woken) {
      if (!firstPurgeDue && !woken) {
        firstPurgeDue = true;
        return options.purgeFirstDelayMs ?? PURGE_FIRST_DELAY_MS;
      }
      firstPurgeDue = true;
      const purged = await retention.purge(purgeAbort.signal);
      if (purged.dispatchedEvents + purged.undispatchedEvents + purged.deadJobs + purged.lapsedClaims > 0) {
        logger.info('retention purge', {
          dispatched_events: purged.dispatchedEvents,
          undispatched_events: purged.undispatchedEvents,
          dead_jobs: purged.deadJobs,
          lapsed_claims: purged.lapsedClaims,
        });
      }
      // Sends held for approval past AGENTPOST_APPROVAL_EXPIRY_HOURS expire as rejected (approval.decided).
      const expired = await expireApprovals(core);
      if (expired > 0) logger.info('approvals expired', { approvals: expired });
      // Tentative holds past their ttl (their slots are already free to reads): expired, event.hold_expired.
      const holds = await core.calendar.holds.expire();
      if (holds > 0) logger.info('holds expired', { holds });
      // The access log's rows past AGENTPOST_ACCESS_LOG_RETENTION_DAYS.
      const accessRows = await core.accessLog.purge(purgeAbort.signal);
      if (accessRows > 0) logger.info('access log purge', { rows: accessRows });
      const upkept = await core.admin.policyUpkeep.run(purgeAbort.signal);
      if (upkept.inboxDeleted + upkept.junkDeleted + upkept.foldersCreated > 0) {
        logger.info('policy upkeep', {
          inbox_deleted: upkept.inboxDeleted,
          junk_deleted: upkept.junkDeleted,
          folders_created: upkept.foldersCreated,
        });
      }
      return false;
    },
  });

  // Calendar timers (event.starting, event.ending): what fell due since the last poll, by the service's clock.
  const timers = startPollingLoop({
    name: 'calendar timers',
    intervalMs: pollIntervalMs,
    logger,
    onBeat: core.health.heartbeat('calendar timers', pollIntervalMs),
    async step() {
      await runDueTimers(core, clock.now());
      return false;
    },
  });

  // Follow-ups of production applications (a test-mode application's wait for its test clock): replies cancel them,
  // due ones are sent through send_message (src/outbound/follow-ups.ts).
  const send = options.send;
  const followUps = send
    ? startPollingLoop({
        name: 'follow-ups',
        intervalMs: pollIntervalMs,
        logger,
        onBeat: core.health.heartbeat('follow-ups', pollIntervalMs),
        async step() {
          const done = await core.sending.followUps.runDue(clock.now(), { send });
          return done.sent + done.failed > 0;
        },
      })
    : undefined;

  // The sync of connected IMAP accounts (src/imap/sync-runner.ts).
  core.accounts.sync.start();
  // The sync of connected accounts' calendars and contacts (src/dav/dav-runner.ts).
  core.accounts.davSync.start();

  return {
    worker,
    webhookRunner,
    wake() {
      dispatcher.wake();
      worker.wake();
      webhookRunner.wake();
      purger.wake();
      timers.wake();
      followUps?.wake();
    },
    async stop() {
      unsubscribe();
      clearTimeout(debounce);
      await core.accounts.sync.stop();
      await core.accounts.davSync.stop();
      purgeAbort.abort();
      await purger.stop();
      await timers.stop();
      await dispatcher.stop();
      await Promise.all([worker.stop(), webhookRunner.stop(), followUps?.stop()]);
      for (const loop of ['outbox dispatcher', 'job worker', 'webhook delivery', 'retention purge', 'calendar timers'])
        core.health.stopped(loop);
      if (followUps) core.health.stopped('follow-ups');
    },
  };
}

/**
 * Fires the calendar timers (`event.starting`, `event.ending`; src/calendar/event-timers.ts) due up to `now`, each
 * once; how many fired. The background loop calls it at every poll with the service's clock; a test clock calls it
 * with its own time and `applicationId` (that application's events only, with a runner mark of its own).
 */
export function runDueTimers(
  core: { calendar: Pick<Core['calendar'], 'timers'> },
  now: Date,
  options?: TimerRunOptions,
): Promise<number> {
  return core.calendar.timers.runDue(now, options);
}

/**
 * Expires the sends held for approval past `AGENTPOST_APPROVAL_EXPIRY_HOURS` (each `approval.decided`, as rejected)
 * and records each in the access log as a decision of the service's own (face `worker`). How many expired.
 */
export async function expireApprovals(core: Core): Promise<number> {
  const expired = await core.oversight.approvals.expire();
  for (const approval of expired)
    core.accessLog.record({
      principal: { applicationId: approval.applicationId, via: 'local' },
      face: 'worker',
      operation: 'expire_approval',
      grantId: approval.grantId,
      objectIds: { approval_id: approval.id },
      status: 200,
    });
  return expired.length;
}
