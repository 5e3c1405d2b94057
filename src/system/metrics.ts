/**
 * @module system/metrics
 * The default metrics: none recorded (the server records them with prom-client, server/metrics.ts).
 */
import type { Metrics } from '../ports/metrics.js';

/** The default `Metrics`: records nothing. */
export const noMetrics: Metrics = {
  smtpSession() {},
  smtpReply() {},
  ingestSeconds() {},
  outboundAttempt() {},
  webhookDelivery() {},
  jobRun() {},
  smartCompose() {},
  accessLogDropped() {},
};
