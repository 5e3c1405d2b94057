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
 */
import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { noMetrics } from '../system/metrics.js';
import type { Logger, Metrics } from '../ports/index.js';
import { AppError, type ErrorCode } from '../errors.js';
import { addressBytes } from '../webhooks/index.js';
import type { ReportIntake } from '../deliverability/index.js';
import { type DmarcReportIntake, DMARC_RUA_LOCAL_PART } from '../domains/index.js';
import { DEFAULT_HEADER_LIMITS, headerSectionTooLarge } from './header-section.js';
import { MAX_MESSAGE_BYTES, type InboundService } from './inbound.js';

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

/** An error smtp-server sends as `<responseCode> <message>`. Messages carry their enhanced status code (RFC 3463). */
function smtpError(responseCode: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode });
}

/** SMTP reply for each core error code: permanent for the caller's fault, 4xx (retry later) for ours. */
const SMTP_REPLIES: Record<ErrorCode, [number, string]> = {
  invalid_request: [501, '5.5.4'],
  unauthorized: [535, '5.7.8'],
  forbidden: [550, '5.7.1'],
  not_found: [550, '5.1.1'],
  conflict: [451, '4.3.0'],
  payload_too_large: [552, '5.3.4'],
  rate_limited: [451, '4.7.1'],
  upstream_error: [451, '4.3.0'],
  unavailable: [451, '4.3.0'],
  timeout: [451, '4.4.2'],
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

/**
 * The client a connection counts against: its IPv4 address (also when it arrives IPv4-mapped on a dual-stack
 * socket), or the /64 of its IPv6 address, since one IPv6 host commonly holds a whole /64.
 */
export function clientKey(remoteAddress: string | undefined): string {
  const bytes = addressBytes(remoteAddress ?? '');
  if (!bytes) return remoteAddress ?? 'unknown';
  const mapped =
    bytes.length === 16 && bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (bytes.length === 4 || mapped) return bytes.slice(-4).join('.');
  const groups = [0, 2, 4, 6].map((index) => ((bytes[index]! << 8) | bytes[index + 1]!).toString(16));
  return `${groups.join(':')}::/64`;
}

/** The private parts of smtp-server 3.21 the listener drives (pinned in package.json). */
interface ConnectionInternals {
  id: string;
  _setListeners(callback: () => void): void;
  connectionReady(): void;
  send(code: number, message: string): void;
  on(event: string, listener: (...args: unknown[]) => void): void;
  init(): void;
}
interface ServerInternals {
  connections: Set<unknown>;
  connect(socket: Socket, socketOptions?: unknown): void;
  _onClientConnect(data: unknown): void;
}

/** Starts the listener. */
export async function startInboundSmtp(options: InboundSmtpOptions): Promise<InboundSmtpServer> {
  const maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  const maxHeaderBytes = options.maxHeaderBytes ?? DEFAULT_HEADER_LIMITS.maxHeaderBytes;
  const lineTimeoutMs = options.lineTimeoutMs ?? 60_000;
  const dataTimeoutMs = options.dataTimeoutMs ?? 10 * 60_000;
  const maxClients = options.maxClients ?? 10_000;
  const maxRecipients = options.maxRecipients ?? 100;
  const maxPerClient = options.maxConnectionsPerClient ?? 20;
  const maxUnknown = options.maxUnknownRecipients ?? 3;
  const maxUnknownPerClient = options.maxUnknownRecipientsPerClient ?? 30;
  const unknownWindowMs = options.unknownRecipientsWindowMs ?? 60 * 60_000;
  const { inbound, logger, reports, dmarc } = options;
  const ruaPrefix = `${DMARC_RUA_LOCAL_PART}@`;
  const metrics = options.metrics ?? noMetrics;
  /** Wraps an smtp-server callback so that its reply is counted (no error: 250). */
  const counted =
    <A extends unknown[]>(
      stage: 'mail' | 'rcpt' | 'data',
      callback: (error?: (Error & { responseCode?: number }) | null, ...rest: A) => void,
    ) =>
    (error?: (Error & { responseCode?: number }) | null, ...rest: A) => {
      metrics.smtpReply(stage, error ? (error.responseCode ?? 451) : 250);
      callback(error, ...rest);
    };
  /** Set by close(): new sessions, MAIL and RCPT get 421 while the messages in DATA finish. */
  let draining = false;
  /** Messages between DATA and our reply to it: close() waits for these. */
  let inData = 0;
  const shuttingDown = () => smtpError(421, '4.3.2 Service shutting down, try again later');
  /**
   * Sockets by connection id, with the time their current partial line began (undefined: at a line end), the
   * client they count against and the unknown mailboxes the session tried.
   */
  const sockets = new Map<
    string,
    {
      socket: Socket;
      partialSince: number | undefined;
      client: string;
      unknownRecipients: number;
      returnPaths: Set<string>;
      ruaAddresses: Set<string>;
    }
  >();
  /** Unknown mailboxes per client in the current window (insertion order: oldest window first). */
  const unknownByClient = new Map<string, { count: number; since: number }>();
  /** The client's count in its current window (a window that is over counts 0). */
  const unknownOfClient = (client: string) => {
    const entry = unknownByClient.get(client);
    return entry && performance.now() - entry.since < unknownWindowMs ? entry.count : 0;
  };
  /** Counts one unknown mailbox for the client, opening a new window when its last one is over. */
  const countUnknown = (client: string) => {
    const now = performance.now();
    const entry = unknownByClient.get(client);
    if (entry && now - entry.since < unknownWindowMs) return void entry.count++;
    unknownByClient.delete(client);
    unknownByClient.set(client, { count: 1, since: now });
    if (unknownByClient.size > MAX_TRACKED_CLIENTS) unknownByClient.delete(unknownByClient.keys().next().value!);
  };
  /** Open connections per client ({@link clientKey}). */
  const perClient = new Map<string, number>();

  const server = new SMTPServer({
    name: options.hostname,
    banner: 'Agentpost',
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: maxBytes,
    socketTimeout: options.idleTimeoutMs ?? 60_000,
    closeTimeout: 1_000,
    maxClients,

    onMailFrom(_address, session, reply) {
      // A new transaction: the return paths accepted in the last one are no longer its recipients.
      sockets.get(session.id)?.returnPaths.clear();
      sockets.get(session.id)?.ruaAddresses.clear();
      counted('mail', reply)(draining ? shuttingDown() : undefined);
    },

    onRcptTo(address, session, reply) {
      const callback = counted('rcpt', reply);
      if (draining) return callback(shuttingDown());
      const entry = sockets.get(session.id);
      // Past the limit every recipient is refused unchecked, known or not: answering a known one 250 would
      // still tell which mailboxes exist. 421 closes the session; a real sender retries the rest later.
      if (entry && entry.unknownRecipients >= maxUnknown) {
        return callback(
          smtpError(
            421,
            `4.7.0 Too many unknown recipients in this session (at most ${maxUnknown}), closing the connection`,
          ),
        );
      }
      if (entry && unknownOfClient(entry.client) >= maxUnknownPerClient) {
        return callback(
          smtpError(
            421,
            `4.7.0 Too many unknown recipients from your address (at most ${maxUnknownPerClient} in ${Math.round(unknownWindowMs / 60_000)} minutes), try again later`,
          ),
        );
      }
      if (session.envelope.rcptTo.length >= maxRecipients) {
        return callback(smtpError(452, `4.5.3 Too many recipients: at most ${maxRecipients} per message`));
      }
      // The envelope lets the recipient's rules and limits decide at RCPT TO (the smtp_rcpt stage).
      const sizeArgument =
        session.envelope.mailFrom && session.envelope.mailFrom.args
          ? (session.envelope.mailFrom.args as Record<string, string>).SIZE
          : undefined;
      const size = sizeArgument !== undefined && /^\d+$/.test(sizeArgument) ? Number(sizeArgument) : undefined;
      const countUnknownOnce = () => {
        if (!entry) return;
        entry.unknownRecipients++;
        countUnknown(entry.client);
      };
      const mailboxCheck = () =>
        inbound
          .checkRecipient(address.address, {
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            size,
          })
          .then(
            (check) => {
              if (check.ok) return callback();
              if (check.reason === 'policy')
                return callback(smtpError(check.refusal.code, `${check.refusal.enhanced} ${check.refusal.message}`));
              if (check.reason === 'unknown') countUnknownOnce();
              callback(smtpError(550, check.reason === 'relay' ? `5.7.1 ${check.message}` : `5.1.1 ${check.message}`));
            },
            (error: unknown) => {
              logger.error('smtp recipient check failed', { error: String(error) });
              callback(smtpError(451, '4.3.0 Temporary failure checking the recipient, try again later'));
            },
          );
      // `dmarc-reports@<registered domain>` is the DMARC intake's; any other domain goes to the mailbox check (relay refusal).
      if (dmarc && address.address.toLowerCase().startsWith(ruaPrefix)) {
        return void dmarc.checkAddress(address.address).then(
          (check) => {
            if (check.kind === 'none') return void mailboxCheck();
            entry?.ruaAddresses.add(address.address.toLowerCase());
            callback();
          },
          (error: unknown) => {
            logger.error('smtp dmarc address check failed', { error: String(error) });
            callback(smtpError(451, '4.3.0 Temporary failure checking the recipient, try again later'));
          },
        );
      }
      // Only `bounce+…` addresses can be return paths: everything else goes straight to the mailbox check.
      if (!reports || !/^bounce\+/i.test(address.address)) return void mailboxCheck();
      reports.checkAddress(address.address).then(
        (path) => {
          if (path.kind === 'none') return void mailboxCheck();
          if (path.kind === 'accept') {
            entry?.returnPaths.add(address.address.toLowerCase());
            return callback();
          }
          // A forged or altered token counts as an unknown mailbox: guessing tokens ends the session like guessing names.
          if (path.reason === 'unknown') countUnknownOnce();
          callback(smtpError(550, path.reason === 'relay' ? `5.7.1 ${path.message}` : `5.1.1 ${path.message}`));
        },
        (error: unknown) => {
          logger.error('smtp return path check failed', { error: String(error) });
          callback(smtpError(451, '4.3.0 Temporary failure checking the recipient, try again later'));
        },
      );
    },

    onData(stream: SMTPServerDataStream, session: SMTPServerSession, reply) {
      inData++;
      let replied = false;
      let ended: number | undefined;
      const callback: typeof reply = (error, ...rest) => {
        if (!replied) inData--;
        replied = true;
        metrics.smtpReply('data', error ? ((error as Error & { responseCode?: number }).responseCode ?? 451) : 250);
        if (ended !== undefined) metrics.ingestSeconds((performance.now() - ended) / 1000);
        reply(error, ...rest);
      };
      // A reset during DATA: no reply will be sent, the message is not ours to finish.
      stream.once('error', () => {
        if (!replied) inData--;
        replied = true;
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let oversize = false;
      const entry = sockets.get(session.id);
      const deadline = setTimeout(() => entry?.socket.destroy(), dataTimeoutMs);
      deadline.unref();
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (oversize) return;
        if (size > maxBytes) {
          // Count the rest, keep none of it: memory stays bounded whatever the client sends.
          oversize = true;
          chunks.length = 0;
          return;
        }
        chunks.push(chunk);
      });
      // A reset during DATA destroys the stream with an error; the message is simply not taken.
      stream.on('error', () => {
        clearTimeout(deadline);
        chunks.length = 0;
      });
      stream.on('end', () => {
        ended = performance.now();
        clearTimeout(deadline);
        if (oversize || stream.sizeExceeded) {
          return callback(smtpError(552, `5.3.4 Message too big: the limit is ${maxBytes} bytes`));
        }
        const raw = Buffer.concat(chunks, size);
        chunks.length = 0;
        if (headerSectionTooLarge(raw, maxHeaderBytes)) {
          return callback(smtpError(552, `5.3.4 Message header too large: the limit is ${maxHeaderBytes} bytes`));
        }
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const recipients = session.envelope.rcptTo.map((recipient) => recipient.address);
        const accepted = entry?.returnPaths ?? new Set<string>();
        const ruaAccepted = entry?.ruaAddresses ?? new Set<string>();
        const toReturnPaths = recipients.filter((recipient) => accepted.has(recipient.toLowerCase()));
        const toRua = recipients.filter((recipient) => ruaAccepted.has(recipient.toLowerCase()));
        const toMailboxes = recipients.filter(
          (recipient) => !accepted.has(recipient.toLowerCase()) && !ruaAccepted.has(recipient.toLowerCase()),
        );
        // Reports first (a repeat of the same bytes records nothing twice), then the mailboxes; 250 only when both
        // are stored, so a failure of either answers 4xx and the sender retries the whole message.
        const deliver = async (): Promise<string> => {
          const notes: string[] = [];
          if (toReturnPaths.length > 0 && reports) {
            const outcome = await reports.receive({ raw, rcptTo: toReturnPaths });
            notes.push(
              outcome.recorded.length > 0 ? `report recorded as ${outcome.recorded.join(',')}` : 'report accepted',
            );
          }
          if (toRua.length > 0 && dmarc) {
            const outcome = await dmarc.receive({ raw, rcptTo: toRua });
            notes.push(
              outcome.recorded.length > 0
                ? `DMARC report stored as ${outcome.recorded.join(',')}`
                : `DMARC report ignored (${(outcome.ignored[0] ?? 'nothing to store').replace(/[\r\n]+/g, ' ').slice(0, 200)})`,
            );
          }
          if (toMailboxes.length > 0) {
            const result = await inbound.deliverInbound({
              rawMime: raw,
              envelope: { mailFrom, rcptTo: toMailboxes },
              client: { address: session.remoteAddress, helo: session.hostNameAppearsAs ?? '' },
              recipientsAdmitted: true,
            });
            if (result.deliveries.length > 0)
              notes.push(`stored as ${result.deliveries.map((delivery) => delivery.messageId).join(',')}`);
          }
          return notes.length > 0 ? `2.0.0 Ok: ${notes.join('; ')}` : '2.0.0 Ok';
        };
        deliver().then(
          (text) => callback(null, text),
          (error: unknown) => {
            if (!(error instanceof AppError) || error.code === 'internal')
              logger.error('smtp delivery failed', {
                error: error instanceof Error ? (error.stack ?? error.message) : String(error),
              });
            callback(toSmtpError(error));
          },
        );
      });
    },
  });

  // smtp-server emits client and socket errors here; without a listener one reset kills the process.
  server.on('error', (error: Error & { code?: string }) => {
    logger.debug('smtp connection error', { code: error.code, error: error.message });
  });

  const internals = server as unknown as ServerInternals;
  internals.connect = (socket: Socket, socketOptions?: unknown) => {
    const connection = new SMTPConnection(server, socket, socketOptions as never) as unknown as ConnectionInternals;
    internals.connections.add(connection);
    connection.on('error', (error) => server.emit('error', error));
    connection.on('connect', (data) => internals._onClientConnect(data));
    const client = clientKey(socket.remoteAddress);
    const tracked = {
      socket,
      partialSince: undefined as number | undefined,
      client,
      unknownRecipients: 0,
      returnPaths: new Set<string>(),
      ruaAddresses: new Set<string>(),
    };
    sockets.set(connection.id, tracked);
    const fromClient = (perClient.get(client) ?? 0) + 1;
    perClient.set(client, fromClient);
    socket.once('close', () => {
      sockets.delete(connection.id);
      const left = (perClient.get(client) ?? 1) - 1;
      if (left > 0) perClient.set(client, left);
      else perClient.delete(client);
    });
    socket.on('data', (chunk: Buffer) => {
      const newline = chunk.lastIndexOf(10);
      if (newline === chunk.length - 1) tracked.partialSince = undefined;
      else if (newline >= 0 || tracked.partialSince === undefined) tracked.partialSince = performance.now();
    });
    if (typeof connection._setListeners !== 'function' || typeof connection.connectionReady !== 'function') {
      connection.init();
      return;
    }
    metrics.smtpSession();
    connection._setListeners(() => {
      const refuse = (message: string) => {
        metrics.smtpReply('greeting', 421);
        connection.send(421, `${options.hostname ?? 'Agentpost'} ${message}`);
      };
      if (draining) return refuse('Service shutting down, try again later');
      if (internals.connections.size > maxClients) return refuse('Too many connected clients, try again in a moment');
      if (fromClient > maxPerClient)
        return refuse(`Too many connections from your address (at most ${maxPerClient}), try again later`);
      metrics.smtpReply('greeting', 220);
      connection.connectionReady();
    });
  };

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

  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  logger.info('smtp listening', { host: options.host, port });

  return {
    port,
    connectionCount: () => internals.connections.size,
    async close() {
      // Graceful: refuse new work with 421 (senders retry later), let the messages in DATA finish and be answered.
      draining = true;
      const deadline = performance.now() + (options.drainTimeoutMs ?? 30_000);
      while (inData > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      clearInterval(sweep);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const { socket } of sockets.values()) socket.destroy();
      sockets.clear();
    },
  };
}
