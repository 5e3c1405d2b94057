/**
 * @module deliverability/contracts
 * The seams between the parts of deliverability, so each stays its own module:
 * - the report intake (bounces and complaints: ./reports.ts) tells {@link ReportListener}s of every report it
 *   records, inside the transaction that records it; sending health (./sending-health.ts) counts them per grant and
 *   day and pauses a grant's sending when a rate crosses its threshold; so it does per sending domain
 *   (./domain-reputation.ts).
 * It also declares the area's services as other areas see them: the report intake, the send gates, sending health,
 * the signing keys, the tracking service and the suppression list.
 */
import type { GrantRow, tables, Tx } from '../../storage/index.js';
import type { BounceType } from '../../storage/schema/deliverability.js';
import type { Principal } from '../access.js';
import type { GetMessageEngagementInput, MessageEngagement } from '../schemas/engagement.js';
import type {
  AddSuppressionInput,
  DeliveryReport,
  ListDeliveryReportsInput,
  ListSuppressionsInput,
  Suppression,
} from '../schemas/suppressions.js';

/** A message in the outbound queue, as the report intake reads it. */
type OutboundRow = typeof tables.outboundMessages.$inferSelect;

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

/**
 * What createSuppressionService() returns (src/deliverability/suppressions.ts): the list, and the bounces and
 * complaints that fill it (./report-log.ts).
 */
export interface SuppressionService extends ReportLog {
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

/** What createReportLog() returns (src/deliverability/report-log.ts): the bounces and complaints recorded. */
export interface ReportLog {
  /** The application's bounces and complaints, newest first; `kind` narrows to one. */
  reports(
    principal: Principal,
    input: ListDeliveryReportsInput,
  ): Promise<{
    data: DeliveryReport[];
    next_cursor?: string;
  }>;
}

/** One send as the gates see it. */
export interface GatedSend {
  applicationId: string;
  /** The sending grant; absent for sends from a domain (transactional). */
  grant: GrantRow | undefined;
  /** Lower-cased sender address (the From). */
  from: string;
  /** Lower-cased recipients (to, cc and bcc), each once. */
  recipients: string[];
  /** Unix milliseconds of the send. */
  at: number;
}

/** One check on sends. Throws an AppError to refuse (the transaction rolls back); resolves to let the send through. */
export interface SendGate {
  /** For logs. */
  name: string;
  check(tx: Tx, send: GatedSend): Promise<void>;
}

/** Signs and checks tokens with the installation's key. */
export interface TokenSigner {
  /** `<base64url(payload)>.<base64url(mac)>`, the mac over `purpose` and the payload. */
  sign(purpose: string, payload: string): string;
  /** The payload of a token this key signed for `purpose`, or undefined for anything else (forged, altered, truncated, another purpose). */
  verify(purpose: string, token: string): string | undefined;
  /** The first `bytes` (default `MAC_BYTES`, 16: ./signing.ts) of HMAC-SHA256 over `purpose` and `data`. */
  mac(purpose: string, data: string, bytes?: number): Buffer;
  /** Compares two MACs in constant time. */
  same(a: Buffer, b: Buffer): boolean;
}

/** A report about to be recorded. */
export interface NewReport {
  outbound: OutboundRow;
  /** Lower-cased recipient. */
  recipient: string;
  kind: 'bounce' | 'complaint';
  bounceType?: BounceType | undefined;
  /** Enhanced status code, when known. */
  statusCode?: string | undefined;
  smtpCode?: number | undefined;
  /** Diagnostic text (bounces) or the feedback type (complaints). */
  reason: string;
  source: 'dsn' | 'smtp' | 'timeout' | 'arf';
  /** The raw report's blob (DSNs and ARF reports). */
  rawHash?: string | undefined;
}

/** What the listener should answer to a RCPT TO, as far as return paths go. */
export type ReturnPathCheck =
  /** Not a return path: the mailbox check decides. */
  | { kind: 'none' }
  | { kind: 'accept' }
  /** `relay`: not a domain of ours (550 5.7.1); `unknown`: a forged or altered token (550 5.1.1). */
  | { kind: 'refuse'; reason: 'relay' | 'unknown'; message: string };

/** What {@link ReportIntake.receive} did with a message to return paths. */
export interface ReceiveOutcome {
  /** Ids of the reports recorded. */
  recorded: string[];
  /** Why the rest recorded nothing (for the log and the 250 text). */
  ignored: string[];
}

/** Options of createReportIntake() (./reports.ts). */
export interface ReportIntakeOptions {
  signing: SigningKeys;
  /** Told of every report in the transaction that records it (sending health pauses grants on their rates). */
  listeners: readonly ReportListener[];
}

/** Who asked for a tracking URL. */
export interface HitSource {
  ip: string | undefined;
  userAgent: string | undefined;
  /** A HEAD request. */
  head: boolean;
}

/** What createReportIntake() returns (src/deliverability/reports.ts): bounces and complaints, recorded. */
export interface ReportIntake {
  /** Records a report and its effects inside the caller's transaction. Returns its id (undefined for system mail). */
  record: (tx: Tx, report: NewReport) => Promise<string | undefined>;
  /**
   * A permanent failure during delivery, as a bounce (inside the transaction that records the attempt): `smtp` for
   * a 5xx reply, `timeout` when the queue gave up (always soft).
   */
  recordDeliveryFailure: (
    tx: Tx,
    outbound: OutboundRow,
    failure: { email: string; code: number; response: string; source: 'smtp' | 'timeout' },
  ) => Promise<void>;
  /**
   * The envelope sender of each recipient of a message: a return path of its own when the message belongs to an
   * application (the service's own mail keeps its plain sender), on the domain of the plain sender (the From).
   */
  returnPaths: (
    outbound: Pick<OutboundRow, 'id' | 'applicationId' | 'envelopeFrom'>,
    allRecipients: readonly string[],
  ) => Promise<(email: string) => string>;
  /** Whether an address is a return path the listener should accept (RCPT TO). */
  checkAddress: (address: string) => Promise<ReturnPathCheck>;
  /**
   * Reads, attributes and records a message that arrived for return paths (`rcptTo`: those recipients only).
   * Resolves after everything it records is committed and synced, so the listener may answer 250. Never throws for
   * what the message says; rejects only when the store fails (the listener answers 4xx and the sender retries).
   */
  receive: (message: { raw: Buffer; rcptTo: readonly string[] }) => Promise<ReceiveOutcome>;
  /**
   * Reads and records a report that reached a mailbox itself rather than a return path (a connected account's
   * bounce or complaint, synced from its inbox), attributed only to a message sent by that mailbox. Never throws for
   * what the message says.
   */
  receiveInMailbox: (grant: { id: string }, raw: Buffer) => Promise<ReceiveOutcome>;
}

/** What createSendGates() returns (src/deliverability/send-gates.ts): the gates in order, and the count of sends. */
export interface SendGates {
  /** Each gate in order; the first refusal throws. */
  check(tx: Tx, send: GatedSend): Promise<void>;
  /** Counts an accepted send: recipients per grant and day, and per sending domain and day (when the domain is registered). */
  count(tx: Tx, send: GatedSend): Promise<void>;
}

/** What createSendingHealth() returns (src/deliverability/sending-health.ts). */
export interface SendingHealth {
  /** Counts reports per grant and day, and pauses a grant's sending when a rate crosses its threshold. */
  listener: ReportListener;
  /** Refuses the sends of a grant whose sending is paused. */
  gate: SendGate;
}

/** What createSigningKeys() returns (src/deliverability/signing.ts): the installation's signer, loaded once. */
export interface SigningKeys {
  /** The signer (loads the key on first call). */
  signer(): Promise<TokenSigner>;
  /** The signer if it was loaded already (hot paths that cannot wait; call {@link signer} once at start). */
  loadedSigner: () => TokenSigner | undefined;
}

/** What createTrackingService() returns (src/deliverability/tracking-service.ts): opens, clicks and engagement. */
export interface TrackingService {
  /**
   * A pixel request: true (and the hit is recorded) when the token is a pixel token of this installation for a
   * tracked message with opens on; false otherwise. Synchronous when the key and the message are at hand.
   */
  open(token: string, source: HitSource): boolean | Promise<boolean>;
  /**
   * A link request: the original URL recorded for the token's link (and the hit is recorded), or undefined when the
   * token is not a link token of this installation for a link of a tracked message.
   */
  click(token: string, source: HitSource): string | undefined | Promise<string | undefined>;
  /** Writes every hit buffered so far (tests; shutdown). */
  flush: () => Promise<void>;
  /** Flushes, at shutdown: the hits answered before are written. */
  close: () => Promise<void>;
  /** Forgets the cached lookups of a deleted grant, so its tracking URLs answer 404 at once in this process. */
  forgetGrant(grantId: string): void;
  /** One sent message's engagement: opens, clicks per link, replies, and each recipient's delivery state. */
  engagement(principal: Principal, input: GetMessageEngagementInput): Promise<MessageEngagement>;
}
