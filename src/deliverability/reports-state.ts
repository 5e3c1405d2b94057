/**
 * @module deliverability/reports-state
 * What the parts of the report intake (./reports.ts) share: the state made once by `createReportIntake`, a report
 * about to be recorded, the answers of the intake, and the webhook objects of a recorded report.
 */
import { tables } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import type { eventRecorder } from '../outbox/index.js';
import { classifyBounce } from './bounce-classification.js';
import type { NewReport, ReportIntakeOptions } from './contracts.js';

export type { NewReport, ReceiveOutcome, ReportIntakeOptions, ReturnPathCheck } from './contracts.js';
import { type BounceEntry } from './report-parser.js';

/** A message in the queue, as the intake reads it. */
export type OutboundRow = typeof tables.outboundMessages.$inferSelect;

/** Longest reason kept. */
export const MAX_REASON = 1000;

/** The webhook object of `message.bounce_detected`. */
export function bounceObject(outbound: OutboundRow, report: NewReport, id: string, at: number) {
  const messageId = outbound.messageId ?? outbound.id;
  return {
    object: 'message',
    id: messageId,
    message_id: messageId,
    grant_id: outbound.grantId,
    subject: outbound.subject,
    message_id_header: `<${outbound.headerMessageId}>`,
    bounce: {
      type: report.bounceType ?? 'soft',
      recipient: report.recipient,
      code: report.statusCode ?? null,
      smtp_code: report.smtpCode ?? null,
      reason: report.reason,
      bounced_at: unixSeconds(new Date(at)),
      source: report.source,
      report_id: id,
    },
  };
}

/** The webhook object of `message.complaint` (the agent-account deliverability shape of reference §13.4, plus id and grant). */
export function complaintObject(outbound: OutboundRow, report: NewReport, id: string, at: number) {
  const messageId = outbound.messageId ?? outbound.id;
  return {
    object: 'message',
    id: messageId,
    grant_id: outbound.grantId,
    message: {
      id: messageId,
      subject: outbound.subject,
      from: outbound.envelopeFrom,
      to: [report.recipient],
      sent_at: unixSeconds(new Date(outbound.acceptedAt)),
      message_id_header: `<${outbound.headerMessageId}>`,
    },
    complaint: {
      complained_at: unixSeconds(new Date(at)),
      type: report.reason,
      recipients: [{ email: report.recipient }],
      source: report.source,
      report_id: id,
    },
  };
}

/** The bounce a DSN's per-recipient group makes for `recipient` of a sent message. */
export function bounceReport(outbound: OutboundRow, recipient: string, entry: BounceEntry, rawHash: string): NewReport {
  return {
    outbound,
    recipient,
    kind: 'bounce',
    bounceType: classifyBounce(entry),
    statusCode: entry.status,
    smtpCode: entry.smtpCode,
    reason: entry.diagnostic || (entry.status ? `Status ${entry.status}` : 'undeliverable'),
    source: 'dsn',
    rawHash,
  };
}

/** What the functions of the intake share, made once by `createReportIntake`. */
export interface IntakeState {
  db: CoreDeps['db'];
  clock: CoreDeps['clock'];
  newId: CoreDeps['newId'];
  logger: CoreDeps['logger'];
  options: ReportIntakeOptions;
  recordOutboxEvent: ReturnType<typeof eventRecorder>;
}
