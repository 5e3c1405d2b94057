/**
 * @module mail/inbound-smtp-state
 * What the inbound SMTP listener's parts (./inbound-smtp.ts) share: the state `startInboundSmtp` makes (its limits,
 * the sockets and their sessions, the unknown mailboxes per client), the SMTP errors and replies, and the counters.
 */
import type { Socket } from 'node:net';
import type { Logger, Metrics } from '../ports/index.js';
import { AppError, type ErrorCode } from '../errors.js';
import type { ReportIntake } from '../deliverability/index.js';
import type { DmarcReportIntake } from '../domains/index.js';
import type { InboundService } from './inbound.js';

/** A client connection as the listener tracks it. */
export interface TrackedSocket {
  socket: Socket;
  /** When its current partial line began (undefined: at a line end). */
  partialSince: number | undefined;
  /** The client it counts against (./inbound-smtp-connect.ts clientKey). */
  client: string;
  /** Unknown mailboxes the session tried. */
  unknownRecipients: number;
  returnPaths: Set<string>;
  ruaAddresses: Set<string>;
}

/** What the parts of the listener share, made once by `startInboundSmtp` (see InboundSmtpOptions for the limits). */
export interface InboundSmtpState {
  inbound: Pick<InboundService, 'checkRecipient' | 'deliverInbound'>;
  reports: Pick<ReportIntake, 'checkAddress' | 'receive'> | undefined;
  dmarc: Pick<DmarcReportIntake, 'checkAddress' | 'receive'> | undefined;
  logger: Logger;
  metrics: Pick<Metrics, 'smtpSession' | 'smtpReply' | 'ingestSeconds'>;
  /** Name in the greeting (the MX host). */
  hostname: string | undefined;
  maxBytes: number;
  maxHeaderBytes: number;
  lineTimeoutMs: number;
  dataTimeoutMs: number;
  maxClients: number;
  maxRecipients: number;
  maxPerClient: number;
  maxUnknown: number;
  maxUnknownPerClient: number;
  unknownWindowMs: number;
  /** `dmarc-reports@`. */
  ruaPrefix: string;
  /** Set by close(): new sessions, MAIL and RCPT get 421 while the messages in DATA finish. */
  draining: boolean;
  /** Messages between DATA and our reply to it: close() waits for these. */
  inData: number;
  /** Sockets by connection id. */
  sockets: Map<string, TrackedSocket>;
  /** Unknown mailboxes per client in the current window (insertion order: oldest window first). */
  unknownByClient: Map<string, { count: number; since: number }>;
  /** Open connections per client (clientKey). */
  perClient: Map<string, number>;
}

/** An error smtp-server sends as `<responseCode> <message>`. Messages carry their enhanced status code (RFC 3463). */
export function smtpError(responseCode: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode });
}

/** SMTP reply for each core error code: permanent for the caller's fault, 4xx (retry later) for ours. */
const SMTP_REPLIES: Record<ErrorCode, [number, string]> = {
  invalid_request: [501, '5.5.4'],
  unauthorized: [535, '5.7.8'],
  forbidden: [550, '5.7.1'],
  not_found: [550, '5.1.1'],
  conflict: [451, '4.3.0'],
  gone: [550, '5.1.1'],
  payload_too_large: [552, '5.3.4'],
  unprocessable: [554, '5.6.0'],
  rate_limited: [451, '4.7.1'],
  upstream_error: [451, '4.3.0'],
  unavailable: [451, '4.3.0'],
  timeout: [451, '4.4.2'],
  request_timeout: [451, '4.4.2'],
  internal: [451, '4.3.0'],
};

/** Maps any error of the store to an SMTP reply; unknown errors are temporary, so the sender retries. */
export function toSmtpError(error: unknown): Error & { responseCode: number } {
  if (error instanceof AppError) {
    // A stage's refusal names its own reply (552 5.3.4, 452 4.2.2, …).
    const own = (error.details as { smtp?: { code: number; enhanced: string } } | undefined)?.smtp;
    if (own) return smtpError(own.code, `${own.enhanced} ${error.message}`.replace(/[\r\n]+/g, ' ').slice(0, 400));
    const [code, enhanced] = SMTP_REPLIES[error.code];
    const message = code >= 500 ? error.message : 'Temporary failure storing the message, try again later';
    return smtpError(code, `${enhanced} ${message}`.replace(/[\r\n]+/g, ' ').slice(0, 400));
  }
  return smtpError(451, '4.3.0 Temporary failure storing the message, try again later');
}

/** Clients whose unknown mailboxes are remembered at once; beyond it the oldest are forgotten (bounded memory). */
const MAX_TRACKED_CLIENTS = 100_000;

/** Wraps an smtp-server callback so that its reply is counted (no error: 250). */
export const counted =
  <A extends unknown[]>(
    smtp: InboundSmtpState,
    stage: 'mail' | 'rcpt' | 'data',
    callback: (error?: (Error & { responseCode?: number }) | null, ...rest: A) => void,
  ) =>
  (error?: (Error & { responseCode?: number }) | null, ...rest: A) => {
    smtp.metrics.smtpReply(stage, error ? (error.responseCode ?? 451) : 250);
    callback(error, ...rest);
  };

export const shuttingDown = () => smtpError(421, '4.3.2 Service shutting down, try again later');

/** The client's count in its current window (a window that is over counts 0). */
export const unknownOfClient = (smtp: InboundSmtpState, client: string) => {
  const entry = smtp.unknownByClient.get(client);
  return entry && performance.now() - entry.since < smtp.unknownWindowMs ? entry.count : 0;
};

/** Counts one unknown mailbox for the client, opening a new window when its last one is over. */
export const countUnknown = (smtp: InboundSmtpState, client: string) => {
  const now = performance.now();
  const entry = smtp.unknownByClient.get(client);
  if (entry && now - entry.since < smtp.unknownWindowMs) return void entry.count++;
  smtp.unknownByClient.delete(client);
  smtp.unknownByClient.set(client, { count: 1, since: now });
  if (smtp.unknownByClient.size > MAX_TRACKED_CLIENTS)
    smtp.unknownByClient.delete(smtp.unknownByClient.keys().next().value!);
};
