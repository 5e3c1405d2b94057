/**
 * @module webhooks/delivery-runner
 * Runs `webhook.deliver` jobs (./delivery.ts makes them) at the rate of the network rather than of the database:
 *
 * - **Ordered batch claims.** One write transaction records the outcomes of the finished deliveries (plain
 *   successes with one DELETE) and claims the next batch of up to {@link MAX_HELD} jobs, skipping every job
 *   while an earlier job of its order key (`<webhook id> <grant id>`) is leased or waits for a retry
 *   ({@link JobQueue.settleAndClaimOrdered}). A round costs one commit, whatever the number of deliveries.
 * - **Chains.** The jobs of one order key in a claim are delivered one after another, oldest first. When one
 *   fails (it is retried later), the rest of its chain is released unrun and waits behind it: a grant's
 *   notifications reach a subscription in event order, at least once each.
 * - **Lanes.** At most {@link MAX_IN_FLIGHT_PER_ENDPOINT} requests are in flight to one subscription, and one
 *   subscription holds at most {@link MAX_HELD_PER_ENDPOINT} claimed jobs (it is left out of claims beyond that),
 *   so a slow or failing endpoint cannot take the slots of the others.
 * - **Leases** of everything this runner holds are extended together, so a long chain to a slow endpoint keeps
 *   them; if the process dies, they lapse and another runner delivers the jobs again (at-least-once).
 *
 * Several runners, in one process or many, may share a database: a job is held by one lease at a time.
 */
import type { Clock, Logger, Metrics } from '../ports/index.js';
import {
  type Job,
  type JobOutcome,
  type JobQueue,
  type OrderedJob,
  type Settlement,
  startPollingLoop,
  type PollingLoop,
} from '../jobs/index.js';
import type { WebhookRow } from './webhook-service.js';

/** Claimed jobs held by one runner at most (claimed, not yet settled). */
export const MAX_HELD = 1024;

/**
 * Jobs one claim takes at most: large enough that a round costs little per delivery, small enough that other
 * runners (processes) on the database find keys left to claim.
 */
export const CLAIM_BATCH = 256;

/**
 * Order keys (grant streams of a subscription) one claim takes at most, and jobs of one key: a key's jobs go out
 * one at a time, so a runner holding every key would leave the other runners (processes) nothing to do.
 */
export const CLAIM_KEYS = 32;
export const CLAIM_PER_KEY = 64;

/**
 * Grant streams one runner holds at once at most: it lets the runners of other processes, which wake only at
 * their poll, find streams left to take on a busy database, and still keeps 256 chains going per process.
 */
export const MAX_KEYS_HELD = 256;

/** Claimed jobs one subscription may hold in one runner; beyond it, claims leave that subscription out. */
export const MAX_HELD_PER_ENDPOINT = 512;

/**
 * Requests in flight to one subscription at once. It bounds the connections kept open to one endpoint (the
 * HTTP client's pool allows as many) and lets independent chains (grants) overlap.
 */
export const MAX_IN_FLIGHT_PER_ENDPOINT = 16;

/** Finished deliveries that make a round (a settle) start at once; fewer wait up to {@link SETTLE_WINDOW_MS}. */
const SETTLE_BATCH = 64;

/** Longest wait of a finished delivery before its outcome is recorded while others are still in flight. */
const SETTLE_WINDOW_MS = 5;

/** What the runner needs of ./delivery.ts. */
export interface DeliveryFunctions {
  /** One attempt; the job's outcome. */
  deliver(job: Job, webhook: WebhookRow | undefined): Promise<JobOutcome>;
  /** The subscriptions of these ids. */
  loadWebhooks(ids: readonly string[]): Promise<Map<string, WebhookRow>>;
}

/** Options of {@link startDeliveryRunner}. */
export interface DeliveryRunnerOptions {
  queue: JobQueue;
  delivery: DeliveryFunctions;
  /** The job kind (`webhook.deliver`). */
  kind: string;
  clock: Clock;
  logger: Logger;
  /** Lease owner; unique per runner. */
  owner: string;
  /** Longest wait between polls, in real milliseconds. */
  pollIntervalMs: number;
  /** Lease length in clock milliseconds. */
  leaseMs: number;
  metrics?: Pick<Metrics, 'jobRun'> | undefined;
  onBeat?: () => void;
  /** Overrides of the limits (tests). */
  limits?: { maxHeld?: number; maxHeldPerEndpoint?: number; maxInFlightPerEndpoint?: number };
}

/** A running runner. */
export interface DeliveryRunner {
  readonly owner: string;
  /** Claims now (after an enqueue, or after a test moved its clock). */
  wake(): void;
  /** Stops claiming, waits for the deliveries under way (and releases the jobs not started), records outcomes. */
  stop(): Promise<void>;
}

/** Counts requests in flight to one subscription and queues the rest. */
class Lane {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** Claimed jobs of this subscription held by the runner. */
  held = 0;
  constructor(private readonly limit: number) {}
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}

/** The webhook id of a delivery job (its order key's group). */
function webhookIdOf(job: Job): string {
  return (job.payload as { webhook_id: string }).webhook_id;
}

/** Starts the runner. */
export function startDeliveryRunner(options: DeliveryRunnerOptions): DeliveryRunner {
  const { queue, delivery, kind, clock, logger, owner, leaseMs } = options;
  const maxHeld = options.limits?.maxHeld ?? MAX_HELD;
  const maxHeldPerEndpoint = options.limits?.maxHeldPerEndpoint ?? MAX_HELD_PER_ENDPOINT;
  const maxInFlight = options.limits?.maxInFlightPerEndpoint ?? MAX_IN_FLIGHT_PER_ENDPOINT;

  const lanes = new Map<string, Lane>();
  /** Claimed, unsettled jobs by order key: the streams this runner holds. */
  const keysHeld = new Map<string, number>();
  const chains = new Set<Promise<void>>();
  let held = 0;
  let pending: Settlement[] = [];
  /** When the oldest outcome in `pending` arrived (performance.now()). */
  let pendingSince = 0;
  let backlog = false;
  let stopping = false;
  let loop: PollingLoop | undefined;

  const laneOf = (webhookId: string) => {
    let lane = lanes.get(webhookId);
    if (!lane) {
      lane = new Lane(maxInFlight);
      lanes.set(webhookId, lane);
    }
    return lane;
  };

  function settle(job: Job, outcome: JobOutcome) {
    if (pending.length === 0) pendingSince = performance.now();
    pending.push({ job, owner, outcome });
    if (pending.length >= SETTLE_BATCH || pending.length === held) loop?.nudge();
  }

  /** Delivers one key's jobs in order; after a failure, releases the rest unrun. */
  async function runChain(jobs: readonly OrderedJob[], webhook: WebhookRow | undefined): Promise<void> {
    const lane = laneOf(webhookIdOf(jobs[0]!));
    let blocked = false;
    for (const job of jobs) {
      if (blocked || stopping) {
        settle(job, { type: 'release' });
        continue;
      }
      const started = performance.now();
      let outcome: JobOutcome;
      try {
        outcome = await lane.run(() => delivery.deliver(job, webhook));
      } catch (error) {
        // deliver() records failures itself; a throw is a database error: try this job again shortly.
        const message = error instanceof Error ? error.message : String(error);
        logger.warn('webhook delivery failed', { job_id: job.id, error: message });
        outcome = { type: 'retry', at: new Date(clock.now().getTime() + 5_000), error: message };
      }
      if (outcome.type !== 'release')
        options.metrics?.jobRun(job.kind, outcome.type, (performance.now() - started) / 1000);
      // A retry keeps the key's later jobs waiting behind this one (order); done and give_up let them go.
      if (outcome.type === 'retry') blocked = true;
      settle(job, outcome);
    }
  }

  function start(claimed: readonly OrderedJob[], webhooks: Map<string, WebhookRow>) {
    const byKey = new Map<string, OrderedJob[]>();
    for (const job of claimed) {
      const key = job.orderKey ?? job.id;
      byKey.set(key, [...(byKey.get(key) ?? []), job]);
    }
    for (const [key, jobs] of byKey) {
      keysHeld.set(key, (keysHeld.get(key) ?? 0) + jobs.length);
      const webhookId = webhookIdOf(jobs[0]!);
      laneOf(webhookId).held += jobs.length;
      const running: Promise<void> = runChain(jobs, webhooks.get(webhookId)).finally(() => chains.delete(running));
      chains.add(running);
    }
  }

  function report(settlements: readonly Settlement[], kept: readonly boolean[]) {
    settlements.forEach(({ job, outcome }, index) => {
      held -= 1;
      const key = job.orderKey ?? job.id;
      const left = (keysHeld.get(key) ?? 1) - 1;
      if (left > 0) keysHeld.set(key, left);
      else keysHeld.delete(key);
      const lane = lanes.get(webhookIdOf(job));
      if (lane) {
        lane.held -= 1;
        if (lane.held === 0) lanes.delete(webhookIdOf(job));
      }
      if (!kept[index])
        logger.warn('job lease lapsed before the job finished; another worker may run it again', {
          job_id: job.id,
          kind: job.kind,
          owner,
        });
      if (outcome.type === 'give_up')
        logger.warn('job given up', { job_id: job.id, kind: job.kind, attempts: job.attempts, error: outcome.error });
    });
  }

  /** Records the finished outcomes and, when `claim`, claims the next batch; one transaction. */
  async function round(claim: boolean): Promise<number> {
    const settlements = pending;
    pending = [];
    const full = [...lanes].filter(([, lane]) => lane.held >= maxHeldPerEndpoint).map(([id]) => id);
    const keys = Math.min(CLAIM_KEYS, MAX_KEYS_HELD - keysHeld.size);
    const limit = claim && keys > 0 ? Math.min(CLAIM_BATCH, maxHeld - held + settlements.length) : 0;
    let result: Awaited<ReturnType<JobQueue['settleAndClaimOrdered']>>;
    try {
      result = await queue.settleAndClaimOrdered(
        settlements,
        limit > 0
          ? { owner, kind, limit, leaseMs, skipGroups: full, maxKeys: keys, maxPerKey: CLAIM_PER_KEY }
          : undefined,
      );
    } catch (error) {
      // Keep the outcomes for the next round; if this process dies first, the leases lapse (at-least-once).
      pending = [...settlements, ...pending];
      pendingSince = performance.now();
      throw error;
    }
    report(settlements, result.settled);
    const { claimed } = result;
    held += claimed.length;
    backlog = limit > 0 && claimed.length === limit;
    if (claimed.length > 0) {
      let webhooks: Map<string, WebhookRow>;
      try {
        webhooks = await delivery.loadWebhooks(claimed.map(webhookIdOf));
      } catch (error) {
        for (const job of claimed) {
          laneOf(webhookIdOf(job)).held += 1;
          settle(job, { type: 'release' });
        }
        throw error;
      }
      start(claimed, webhooks);
    }
    return claimed.length;
  }

  loop = startPollingLoop({
    name: 'webhook delivery',
    intervalMs: options.pollIntervalMs,
    logger,
    ...(options.onBeat ? { onBeat: options.onBeat } : {}),
    async step(woken) {
      // Claim when there is room for a useful batch (a quarter of the budget, or anything when nothing is held).
      const room = maxHeld - held + pending.length;
      let claim = !stopping && room > 0 && (held === pending.length || room >= Math.min(CLAIM_BATCH, maxHeld / 4));
      if (pending.length === 0) {
        if (claim && !woken && !backlog) {
          // A cheap read first, so an idle runner makes no writes.
          const next = await queue.nextClaimableAt([kind]);
          claim = next !== undefined && next <= clock.now().getTime();
          if (!claim) return next === undefined ? false : next - clock.now().getTime();
        }
        if (!claim) return false;
      } else if (!stopping && pending.length < SETTLE_BATCH && pending.length < held) {
        // Outcomes trickling in while deliveries are under way are recorded together, within a short window.
        const waited = performance.now() - pendingSince;
        if (waited < SETTLE_WINDOW_MS) return SETTLE_WINDOW_MS - waited;
      }
      await round(claim);
      if (backlog || pending.length >= SETTLE_BATCH || (pending.length > 0 && pending.length === held)) return true;
      return pending.length > 0 ? SETTLE_WINDOW_MS : held > 0 ? false : backlog;
    },
  });
  const unsubscribe = queue.onEnqueue(() => loop?.wake());

  // The leases of everything held are pushed forward together, well before they lapse.
  const extender = setInterval(
    () => {
      if (held === 0) return;
      queue.extendLeases(owner, leaseMs).catch((error: unknown) =>
        logger.warn('could not extend webhook delivery leases', {
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    },
    Math.max(1_000, leaseMs / 3),
  );
  extender.unref();

  return {
    owner,
    wake: () => loop?.wake(),
    async stop() {
      stopping = true;
      unsubscribe();
      clearInterval(extender);
      await loop?.stop();
      while (chains.size > 0) await Promise.all([...chains]);
      if (pending.length > 0)
        await round(false).catch((error: unknown) =>
          logger.error('could not record webhook delivery outcomes at stop', {
            error: error instanceof Error ? error.message : String(error),
          }),
        );
    },
  };
}
