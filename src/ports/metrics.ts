/**
 * @module ports/metrics
 * What the core reports for monitoring (the default that records nothing: `noMetrics`, src/system/metrics.ts).
 */
import type { TextUsage } from './text-generator.js';

/** How an SMTP reply was reached: the greeting, or the answer to MAIL FROM, RCPT TO or the message data. */
export type SmtpStage = 'greeting' | 'mail' | 'rcpt' | 'data';

/**
 * How a Smart Compose call ended: a suggestion; the provider's rate limit, the timeout, another provider error; or
 * `cancelled`, the caller went away before the end.
 */
export type SmartComposeOutcome = 'ok' | 'rate_limited' | 'timeout' | 'provider_error' | 'cancelled';

/**
 * What the core reports for monitoring (`GET /metrics`). The server records it with prom-client
 * (server/metrics.ts); the core only calls these methods, so it never depends on a metrics library. Counts
 * read from the database (queue depth, jobs by state) are taken by the server at scrape time instead.
 */
export interface Metrics {
  /** An inbound SMTP connection was accepted by the listener (whatever its greeting). */
  smtpSession(): void;
  /** An inbound SMTP reply: `code` 220/250 accept, 4xx/5xx refuse, at `stage`. */
  smtpReply(stage: SmtpStage, code: number): void;
  /** Seconds from the end of a message's data to its reply (parse, store, durable commit). */
  ingestSeconds(seconds: number): void;
  /** One delivery attempt of an outbound message to one recipient, by route and result. */
  outboundAttempt(route: 'local' | 'remote', outcome: 'delivered' | 'deferred' | 'failed'): void;
  /** One webhook POST: `lagSeconds` from the event's commit to this attempt's end. */
  webhookDelivery(outcome: 'delivered' | 'failed', lagSeconds: number): void;
  /** One run of a background job, by kind, with its outcome and duration. */
  jobRun(kind: string, outcome: 'done' | 'retry' | 'give_up', seconds: number): void;
  /**
   * One Smart Compose call of a grant that reached the model, by outcome, with the tokens the model read (`input`)
   * and wrote (`output`) as the provider reported them (0 when it reported none, or failed before answering).
   */
  smartCompose(grantId: string, outcome: SmartComposeOutcome, usage: TextUsage): void;
  /** Access-log rows not recorded because the write queue was full (src/access-log). */
  accessLogDropped(rows: number): void;
}
