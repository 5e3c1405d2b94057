/**
 * @module deliverability/contracts
 * The seams between the parts of deliverability, so each stays its own module:
 * - the report intake (bounces and complaints: ./reports.ts) tells {@link ReportListener}s of every report it
 *   records, inside the transaction that records it; sending health (./sending-health.ts) counts them per grant and
 *   day and pauses a grant's sending when a rate crosses its threshold; so it does per sending domain
 *   (./domain-reputation.ts).
 */
import type { Tx } from '../../storage/index.js';
import type { BounceType } from '../../storage/schema/deliverability.js';

/** A bounce or complaint just recorded against a sent message. */
export interface RecordedReport {
  applicationId: string;
  /** The sending grant; null for sends from a domain or the service's own mail. */
  grantId: string | null;
  kind: 'bounce' | 'complaint';
  /** Bounces only. */
  bounceType: BounceType | undefined;
  /** Lower-cased recipient. */
  recipient: string;
  /** The sender of the reported message (its MAIL FROM, the From's address): its domain's reputation counts the report. */
  from: string;
  /** Unix milliseconds of the report. */
  at: number;
}

/** Told of each report in the transaction that records it; what it writes commits (or not) with the report. */
export interface ReportListener {
  reported(tx: Tx, report: RecordedReport): Promise<void>;
}

/** What a window of sending holds (sends, hard bounces, complaints), for a grant or a domain. */
export interface WindowTotals {
  sent: number;
  hardBounces: number;
  complaints: number;
}
