/**
 * @module server/metrics
 * `GET /metrics` in the Prometheus text format (prom-client). Each service instance has its own registry, so
 * several services in one process (tests, embedding) never mix their counts. The core reports through the
 * small {@link Metrics} interface (src/ports/metrics.ts); counts that live in the database (jobs by kind and state, the
 * outbound queue's depth) are read at scrape time.
 */
import { timingSafeEqual } from 'node:crypto';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { countJobsByState, type Database } from '../storage/index.js';
import type { Logger, Metrics, SmtpStage } from '../src/index.js';

/** The job kind of one outbound delivery attempt (src/outbound/outbound-queue.ts): its live jobs are the queue. */
const DELIVER_JOB = 'mail.deliver';

/** Buckets of ingest time (end of DATA to reply), seconds: a synced commit takes milliseconds, a parse more. */
const INGEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Buckets of webhook lag, seconds (event times are whole seconds): from at once to the 72-hour retry window. */
const LAG_BUCKETS = [1, 2, 5, 10, 30, 60, 300, 1_800, 7_200, 21_600, 86_400, 259_200];
/** Buckets of HTTP latency, seconds. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A service instance's metrics: what the core reports, HTTP requests, and the scrape. */
export interface ServiceMetrics extends Metrics {
  /** One HTTP request answered: method, route pattern (`/v3/grants/:grant_id/messages`), status, seconds. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** The registry (for extra metrics of an embedding application). */
  readonly registry: Registry;
  /** The exposition text and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** Creates the registry of one service on `db`. `now` is the core's clock in ms (job states depend on it). */
export function createServiceMetrics(db: Database, now: () => number, logger: Logger): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const smtpSessions = new Counter({
    name: 'agentpost_smtp_sessions_total',
    help: 'Inbound SMTP connections accepted by the listener (whatever their greeting).',
    registers: [registry],
  });
  const smtpReplies = new Counter({
    name: 'agentpost_smtp_replies_total',
    help: 'Inbound SMTP replies by stage (greeting, mail, rcpt, data) and code: 220/250 accepted, 4xx/5xx rejected. Messages accepted: stage="data",code="250".',
    labelNames: ['stage', 'code'] as const,
    registers: [registry],
  });
  const ingest = new Histogram({
    name: 'agentpost_smtp_ingest_seconds',
    help: "Seconds from the end of a message's data to its SMTP reply (parse, store, durable commit).",
    buckets: INGEST_BUCKETS,
    registers: [registry],
  });
  const readJobs = async () => {
    try {
      return await countJobsByState(db, now());
    } catch (error) {
      logger.warn('metrics: cannot read the jobs table', { error: (error as Error).message });
      return undefined;
    }
  };
  new Gauge({
    name: 'agentpost_outbound_queue_depth',
    help: 'Outbound deliveries waiting (one per message and destination: live mail.deliver jobs, running or not).',
    registers: [registry],
    async collect() {
      const rows = await readJobs();
      if (rows)
        this.set(
          rows
            .filter((row) => row.kind === DELIVER_JOB && row.state !== 'dead')
            .reduce((sum, row) => sum + row.count, 0),
        );
    },
  });
  const outboundAttempts = new Counter({
    name: 'agentpost_outbound_attempts_total',
    help: 'Outbound delivery attempts, one per recipient, by route (local, remote) and outcome (delivered, deferred, failed).',
    labelNames: ['route', 'outcome'] as const,
    registers: [registry],
  });
  const outboundFailures = new Counter({
    name: 'agentpost_outbound_failures_total',
    help: 'Outbound delivery attempts that did not deliver, by route and whether the failure is permanent.',
    labelNames: ['route', 'permanent'] as const,
    registers: [registry],
  });
  const webhookDeliveries = new Counter({
    name: 'agentpost_webhook_deliveries_total',
    help: 'Webhook POSTs by outcome (delivered: a 2xx; failed: anything else).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const webhookFailures = new Counter({
    name: 'agentpost_webhook_failures_total',
    help: 'Webhook POSTs that failed (no 2xx in time).',
    registers: [registry],
  });
  const webhookLag = new Histogram({
    name: 'agentpost_webhook_lag_seconds',
    help: "Seconds from an event's commit to the end of a successful webhook POST of it.",
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: 'agentpost_jobs',
    help: 'Jobs in the queue by kind and state (running: leased; due; scheduled: later; dead: given up, kept 7 days).',
    labelNames: ['kind', 'state'] as const,
    registers: [registry],
    async collect() {
      const rows = await readJobs();
      if (!rows) return;
      this.reset();
      for (const row of rows) this.set({ kind: row.kind, state: row.state }, row.count);
    },
  });
  const jobRuns = new Counter({
    name: 'agentpost_job_runs_total',
    help: 'Background job runs by kind and outcome (done, retry, give_up).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const jobSeconds = new Histogram({
    name: 'agentpost_job_run_seconds',
    help: 'Duration of background job runs by kind.',
    labelNames: ['kind'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });
  const composeCalls = new Counter({
    name: 'agentpost_smart_compose_requests_total',
    help: 'Smart Compose calls that reached the model, by grant and outcome (ok, rate_limited, timeout, provider_error, cancelled: the client went away).',
    labelNames: ['grant_id', 'outcome'] as const,
    registers: [registry],
  });
  const composeTokens = new Counter({
    name: 'agentpost_smart_compose_tokens_total',
    help: 'Tokens of Smart Compose calls as the model provider reported them, by grant and direction (input: read by the model, output: written).',
    labelNames: ['grant_id', 'direction'] as const,
    registers: [registry],
  });
  const accessLogDrops = new Counter({
    name: 'agentpost_access_log_dropped_total',
    help: 'Access-log rows not recorded because the write queue was full (the database fell behind).',
    registers: [registry],
  });
  const http = new Histogram({
    name: 'agentpost_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status, with their latency.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });

  return {
    registry,
    smtpSession: () => smtpSessions.inc(),
    smtpReply: (stage: SmtpStage, code: number) => smtpReplies.inc({ stage, code: String(code) }),
    ingestSeconds: (seconds) => ingest.observe(seconds),
    outboundAttempt(route, outcome) {
      outboundAttempts.inc({ route, outcome });
      if (outcome !== 'delivered') outboundFailures.inc({ route, permanent: String(outcome === 'failed') });
    },
    webhookDelivery(outcome, lagSeconds) {
      webhookDeliveries.inc({ outcome });
      if (outcome === 'failed') webhookFailures.inc();
      else webhookLag.observe(lagSeconds);
    },
    jobRun(kind, outcome, seconds) {
      jobRuns.inc({ kind, outcome });
      jobSeconds.observe({ kind }, seconds);
    },
    smartCompose(grantId, outcome, usage) {
      composeCalls.inc({ grant_id: grantId, outcome });
      // Both series exist from a grant's first call on, so a rate over them never starts from nothing.
      composeTokens.inc({ grant_id: grantId, direction: 'input' }, usage.inputTokens ?? 0);
      composeTokens.inc({ grant_id: grantId, direction: 'output' }, usage.outputTokens ?? 0);
    },
    accessLogDropped: (rows) => accessLogDrops.inc(rows),
    httpRequest: (method, route, status, seconds) => http.observe({ method, route, status: String(status) }, seconds),
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** Whether an `Authorization` header carries `token` as a Bearer token (compared in constant time). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '');
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}
