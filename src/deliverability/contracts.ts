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
import type { Principal } from '../access.js';
import type { AddSuppressionInput, ListSuppressionsInput, Suppression } from '../schemas/suppressions.js';

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

/** What createSuppressionService() returns (src/deliverability/suppressions.ts). */
export interface SuppressionService {
  /** The application's suppressed addresses, newest first; `email` filters to one address. */
  list(
    principal: Principal,
    input: ListSuppressionsInput,
  ): Promise<{
    next_cursor?: string;
    data: {
      object: 'suppression';
      email: string;
      reason: 'complaint' | 'hard_bounce' | 'manual';
      created_at: number;
      report_id?: string | undefined;
    }[];
  }>;
  /** Adds an address (reason `manual`); an address already on the list keeps its entry (and its reason). */
  add(principal: Principal, input: AddSuppressionInput): Promise<Suppression>;
  /** Removes an address, so sends to it are accepted again. 404 when it is not on this application's list. */
  remove(principal: Principal, email: string): Promise<Record<string, never>>;
}
