/**
 * @module mail/inbound-smtp
 * The inbound SMTP listener (smtp-server only). It accepts RCPT TO for hosted mailboxes, for the VERP return paths
 * this service issued (their reports go to the report intake, src/deliverability/reports.ts) and for the DMARC `rua`
 * address of every registered domain (`dmarc-reports@<domain>`, src/domains/dmarc-reports.ts), and never relays. It
 * runs the `smtp_rcpt` stage there (the recipient's rules and early limits: 550 5.7.1, 552 5.3.4, 452 4.2.2; 451 4.3.0
 * when they cannot be evaluated), passes the client's address and HELO on for the authentication stage,
 * advertises and enforces SIZE, streams DATA with a byte cap, hands the message to
 * `InboundService.deliverInbound`, and answers 250 only after that committed; a failure to store answers 4xx
 * so the sender retries. Hostile clients cost bounded memory and time: oversize data is counted, not kept;
 * a command line (or a DATA phase) that trickles in is cut off; socket errors never reach the process.
 * Connections are capped in all and per client (an IPv4 address, or the /64 of an IPv6 one), and a session
 * that tries more than a few unknown mailboxes is ended, and a client that tries too many in an hour is refused
 * in every session, so nobody can list which mailboxes exist.
 *
 * smtp-server waits 100 ms before every greeting ("early talker" detection; no option turns it off), which
 * caps one-message-per-connection senders at about 10 messages a second per connection. The listener starts
 * connections itself without that pause: the greeting goes out as soon as the socket is accepted, so there is
 * no window in which a client could talk early.
 *
 * The listener is plain functions over a small state made here: connections (./inbound-smtp-connect.ts), RCPT TO
 * (./inbound-smtp-rcpt.ts), DATA (./inbound-smtp-data.ts) and what they share (./inbound-smtp-state.ts).
 */
import { SMTPServer } from 'smtp-server';
import { noMetrics } from '../system/metrics.js';
import { listenSmtp } from '../system/smtp-listen.js';
import type { Logger, Metrics } from '../ports/index.js';
import type { ReportIntake } from '../deliverability/index.js';
import { type DmarcReportIntake, DMARC_RUA_LOCAL_PART } from '../domains/index.js';
import { DEFAULT_HEADER_LIMITS } from './header-section.js';
import { MAX_MESSAGE_BYTES, type InboundService } from './inbound.js';
import { acceptConnections, type ServerInternals } from './inbound-smtp-connect.js';
import { receiveData } from './inbound-smtp-data.js';
import { admitRecipient } from './inbound-smtp-rcpt.js';
import { counted, shuttingDown, type InboundSmtpState } from './inbound-smtp-state.js';

export { clientKey } from './inbound-smtp-connect.js';
export { toSmtpError } from './inbound-smtp-state.js';

/** Options of {@link startInboundSmtp}. */
export interface InboundSmtpOptions {
  inbound: Pick<InboundService, 'checkRecipient' | 'deliverInbound'>;
  /**
   * The report intake (src/deliverability/reports.ts): RCPT TO a VERP return path (`bounce+<token>@<hosted domain>`)
   * is accepted when its token verifies (else 550 5.1.1), and at DATA the report is recorded, durably, before the
   * 250. Without it, return paths are ordinary (unknown) addresses.
   */
  reports?: Pick<ReportIntake, 'checkAddress' | 'receive'> | undefined;
  /**
   * The DMARC report intake (src/domains/dmarc-reports.ts): RCPT TO `dmarc-reports@<registered domain>` is accepted
   * for it (before any mailbox of that name), and at DATA the aggregate report is read and stored, durably, before the
   * 250. Without it, that address is an ordinary one.
   */
  dmarc?: Pick<DmarcReportIntake, 'checkAddress' | 'receive'> | undefined;
  logger: Logger;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Name in the greeting and EHLO reply (the MX host). */
  hostname?: string;
  /** SIZE limit in bytes (default 40 MB). */
  maxMessageBytes?: number;
  /**
   * Largest header section taken, in bytes (`AGENTPOST_MAX_HEADER_BYTES`; Postfix's 102,400 by default): a larger one is
   * refused `552 5.3.4` before anything reads it, whoever the recipients are (mailboxes, return paths of reports, the
   * DMARC address).
   */
  maxHeaderBytes?: number;
  /** An idle connection is closed after this long (default 60 s). */
  idleTimeoutMs?: number;
  /** A command line still incomplete after this long closes the connection (default 60 s): slow-drip clients. */
  lineTimeoutMs?: number;
  /** DATA still unfinished after this long closes the connection (default 10 min, RFC 5321 4.5.3.2.6). */
  dataTimeoutMs?: number;
  /** Concurrent connections (default 10,000); more are answered 421. */
  maxClients?: number;
  /** Concurrent connections from one client, an IPv4 address or an IPv6 /64 (default 20); more are answered 421. */
  maxConnectionsPerClient?: number;
  /**
   * Unknown mailboxes (550 5.1.1) one session may try (default 3); every RCPT TO after that is answered 421 and the
   * connection closes. Relay refusals (5.7.1) do not count: they tell nothing about which mailboxes exist.
   */
  maxUnknownRecipients?: number;
  /**
   * Unknown mailboxes one client (see {@link clientKey}) may try in an hour, over all its sessions (default 30):
   * reconnecting does not reset it. Past it, every RCPT TO from the client gets 421 until the hour is over.
   */
  maxUnknownRecipientsPerClient?: number;
  /** The window of {@link maxUnknownRecipientsPerClient} (default one hour). */
  unknownRecipientsWindowMs?: number;
  /** RCPT TO per message (default 100, RFC 5321 4.5.3.1.8). */
  maxRecipients?: number;
  /** How long `close()` lets messages already in DATA finish (default 30 s); meanwhile new sessions and commands get 421. */
  drainTimeoutMs?: number;
  /** Counts sessions, replies by stage and code, and ingest time (default: none). */
  metrics?: Pick<Metrics, 'smtpSession' | 'smtpReply' | 'ingestSeconds'>;
}

/** A running listener. */
export interface InboundSmtpServer {
  /** The port it listens on (useful with port 0). */
  port: number;
  /** Open client connections. */
  connectionCount(): number;
  close(): Promise<void>;
}

/** Starts the listener. */
export async function startInboundSmtp(options: InboundSmtpOptions): Promise<InboundSmtpServer> {
  const maxClients = options.maxClients ?? 10_000;
  const smtp: InboundSmtpState = {
    inbound: options.inbound,
    reports: options.reports,
    dmarc: options.dmarc,
    logger: options.logger,
    metrics: options.metrics ?? noMetrics,
    hostname: options.hostname,
    maxBytes: options.maxMessageBytes ?? MAX_MESSAGE_BYTES,
    maxHeaderBytes: options.maxHeaderBytes ?? DEFAULT_HEADER_LIMITS.maxHeaderBytes,
    lineTimeoutMs: options.lineTimeoutMs ?? 60_000,
    dataTimeoutMs: options.dataTimeoutMs ?? 10 * 60_000,
    maxClients,
    maxRecipients: options.maxRecipients ?? 100,
    maxPerClient: options.maxConnectionsPerClient ?? 20,
    maxUnknown: options.maxUnknownRecipients ?? 3,
    maxUnknownPerClient: options.maxUnknownRecipientsPerClient ?? 30,
    unknownWindowMs: options.unknownRecipientsWindowMs ?? 60 * 60_000,
    ruaPrefix: `${DMARC_RUA_LOCAL_PART}@`,
    draining: false,
    inData: 0,
    sockets: new Map(),
    unknownByClient: new Map(),
    perClient: new Map(),
  };
  const { logger, sockets, lineTimeoutMs } = smtp;

  const server = new SMTPServer({
    name: options.hostname,
    banner: 'Agentpost',
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: smtp.maxBytes,
    socketTimeout: options.idleTimeoutMs ?? 60_000,
    closeTimeout: 1_000,
    maxClients,

    onMailFrom(_address, session, reply) {
      // A new transaction: the return paths accepted in the last one are no longer its recipients.
      sockets.get(session.id)?.returnPaths.clear();
      sockets.get(session.id)?.ruaAddresses.clear();
      counted(smtp, 'mail', reply)(smtp.draining ? shuttingDown() : undefined);
    },

    onRcptTo: (address, session, reply) => admitRecipient(smtp, address, session, reply),

    onData: (stream, session, reply) => receiveData(smtp, stream, session, reply),
  });

  // smtp-server emits client and socket errors here; without a listener one reset kills the process.
  server.on('error', (error: Error & { code?: string }) => {
    logger.debug('smtp connection error', { code: error.code, error: error.message });
  });
  const internals = server as unknown as ServerInternals;
  acceptConnections(smtp, server, internals);

  // One sweep for every connection: a line that has been arriving for longer than the limit ends the session.
  const sweep = setInterval(
    () => {
      const now = performance.now();
      for (const { socket, partialSince } of sockets.values()) {
        if (partialSince !== undefined && now - partialSince > lineTimeoutMs) socket.destroy();
      }
    },
    Math.max(100, Math.min(5_000, lineTimeoutMs / 4)),
  );
  sweep.unref();

  const port = await listenSmtp(server, options.port, options.host);
  logger.info('smtp listening', { host: options.host, port });

  return {
    port,
    connectionCount: () => internals.connections.size,
    async close() {
      // Graceful: refuse new work with 421 (senders retry later), let the messages in DATA finish and be answered.
      smtp.draining = true;
      const deadline = performance.now() + (options.drainTimeoutMs ?? 30_000);
      while (smtp.inData > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      clearInterval(sweep);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const { socket } of sockets.values()) socket.destroy();
      sockets.clear();
    },
  };
}
