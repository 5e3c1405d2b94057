/**
 * @module submission/submission-smtp
 * The SMTP submission listener (smtp-server), one per port: STARTTLS (usually 587) or implicit TLS (usually 465).
 * Mail clients authenticate with `AUTH PLAIN` or `AUTH LOGIN` and an app password (./submission-service.ts), never
 * before TLS except from loopback (538 5.7.11); a failed attempt counts against the client's failed-authentication
 * budget, shared with the HTTP API, and a spent budget answers 454 4.7.0 before the password is looked at. MAIL FROM
 * and the From header must be the grant's address (550 5.7.1). DATA is read with the size and header limits of
 * mail in, and 250 is answered only once the outbound path accepted the message; its refusals keep their SMTP
 * replies (a rule: 550 5.7.1, too large: 552 5.3.4, the daily quota: 451 4.7.1), and a failure of ours is a 4xx,
 * so the client retries.
 */
import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { ZodError } from 'zod';
import type { Logger } from '../ports/index.js';
import {
  DEFAULT_HEADER_LIMITS,
  headerSectionTooLarge,
  MAX_MESSAGE_BYTES,
  smtpError,
  toSmtpError,
} from '../mail/index.js';
import type { FailedAuthentications } from '../rate-limits.js';
import { MAX_RECIPIENTS } from '../schemas/send.js';
import type { SubmissionIdentity, SubmissionService } from './submission-service.js';
import type { TlsSource } from './tls-source.js';
import { listenSmtp } from '../system/smtp-listen.js';

/** Options of {@link startSubmissionSmtp}. */
export interface SubmissionSmtpOptions {
  service: SubmissionService;
  tls: TlsSource;
  /** The process's failed-authentication budget (shared with the HTTP API). */
  failedAuthentications: FailedAuthentications;
  logger: Logger;
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Implicit TLS (the TLS handshake first, as on 465); false: STARTTLS (587). */
  implicitTls: boolean;
  /** Name in the greeting and EHLO reply. */
  hostname?: string | undefined;
  /** SIZE limit in bytes (default: the 40 MB of a message). */
  maxMessageBytes?: number;
  /** Largest header section taken, in bytes (`AGENTPOST_MAX_HEADER_BYTES`). */
  maxHeaderBytes?: number;
  /** An idle connection is closed after this long (default 5 min, RFC 5321 4.5.3.2.7). */
  idleTimeoutMs?: number;
  /** Concurrent connections (default 1,000); more are answered 421. */
  maxClients?: number;
  /** How long `close()` lets messages already in DATA finish (default 30 s). */
  drainTimeoutMs?: number;
}

/** A running listener. */
export interface SubmissionSmtpServer {
  port: number;
  close(): Promise<void>;
}

/** Whether a client address is this machine (AUTH without TLS is allowed from there only). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.replace(/^::ffff:/i, '');
  return v4.startsWith('127.') || address === '::1';
}

/** The SMTP reply of an error of the submission or of the send: its own, a zod refusal as 554 5.6.0, else a 4xx. */
function replyOf(error: unknown): Error & { responseCode: number } {
  if (error instanceof ZodError) {
    const issue = error.issues[0];
    const where = issue?.path.join('.') || 'message';
    return smtpError(554, `5.6.0 The message cannot be sent: ${where} ${issue?.message ?? 'is invalid'}`.slice(0, 400));
  }
  return toSmtpError(error);
}

/** The authenticated identity of a session (set by AUTH; smtp-server refuses MAIL before it). */
const identityOf = (session: SMTPServerSession) => session.user as unknown as SubmissionIdentity;

/** Starts one submission listener. */
export async function startSubmissionSmtp(options: SubmissionSmtpOptions): Promise<SubmissionSmtpServer> {
  const { service, tls, failedAuthentications: failed, logger } = options;
  const maxBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  const maxHeaderBytes = options.maxHeaderBytes ?? DEFAULT_HEADER_LIMITS.maxHeaderBytes;
  let draining = false;
  let inData = 0;
  let tlsVersion = tls.refresh();
  const shuttingDown = () => smtpError(421, '4.3.2 Service shutting down, try again later');

  const server = new SMTPServer({
    ...tls.current(),
    secure: options.implicitTls,
    name: options.hostname,
    banner: 'Agentpost submission',
    logger: false,
    disableReverseLookup: true,
    authMethods: ['PLAIN', 'LOGIN'],
    // Checked in onAuth, where the client's address is known: loopback may authenticate without TLS.
    allowInsecureAuth: true,
    disabledCommands: options.implicitTls ? ['STARTTLS'] : [],
    size: maxBytes,
    socketTimeout: options.idleTimeoutMs ?? 5 * 60_000,
    closeTimeout: 1_000,
    maxClients: options.maxClients ?? 1_000,

    onAuth(auth, session, callback) {
      const address = session.remoteAddress;
      if (!session.secure && !isLoopback(address))
        return callback(
          smtpError(538, '5.7.11 Encryption required: issue STARTTLS first (or use the implicit TLS port)'),
        );
      const budget = failed.check(address);
      if (!budget.allowed)
        return callback(
          smtpError(
            454,
            `4.7.0 Too many failed authentications from your address (more than ${failed.perMinute} a minute); try again in ${budget.retryAfterSeconds} s`,
          ),
        );
      service.authenticate(auth.username ?? '', auth.password ?? '').then(
        (identity) => callback(null, { user: identity as never }),
        (error: unknown) => {
          const refusal = replyOf(error);
          if (refusal.responseCode === 535) failed.failed(address);
          else logger.warn('submission authentication failed', { error: (error as Error).message });
          callback(refusal);
        },
      );
    },

    onMailFrom(address, session, callback) {
      if (draining) return callback(shuttingDown());
      try {
        service.checkMailFrom(identityOf(session), address.address);
        callback();
      } catch (error) {
        callback(replyOf(error));
      }
    },

    onRcptTo(_address, session, callback) {
      if (draining) return callback(shuttingDown());
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS)
        return callback(smtpError(452, `4.5.3 Too many recipients: at most ${MAX_RECIPIENTS} per message`));
      callback();
    },

    onData(stream, session, callback) {
      inData++;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = (error: Error | null, message?: string) => {
        inData--;
        callback(error, message);
      };
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // Past the limit the rest is counted, not kept: memory stays bounded whatever the client sends.
        if (size <= maxBytes) chunks.push(chunk);
        else chunks.length = 0;
      });
      stream.once('error', () => {
        chunks.length = 0;
        inData--;
      });
      stream.once('end', () => {
        if (size > maxBytes || stream.sizeExceeded)
          return done(smtpError(552, `5.3.4 Message too big: the limit is ${maxBytes} bytes`));
        const raw = Buffer.concat(chunks, size);
        chunks.length = 0;
        if (headerSectionTooLarge(raw, maxHeaderBytes))
          return done(smtpError(552, `5.3.4 Message header too large: the limit is ${maxHeaderBytes} bytes`));
        const envelope = {
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          recipients: session.envelope.rcptTo.map((recipient) => recipient.address),
        };
        service.submit(identityOf(session), envelope, raw, { address: session.remoteAddress }).then(
          ({ messageId }) => done(null, `2.0.0 Ok: sent as ${messageId}`),
          (error: unknown) => {
            const reply = replyOf(error);
            if (reply.responseCode < 500) logger.warn('submission send failed', { error: (error as Error).message });
            done(reply);
          },
        );
      });
    },
  });

  // smtp-server emits client and socket errors here; without a listener one reset kills the process.
  server.on('error', (error: Error & { code?: string }) => {
    logger.debug('submission connection error', { code: error.code, error: error.message });
  });
  // A renewed certificate is taken by the next connection, before its TLS handshake (implicit TLS) or STARTTLS.
  server.server.prependListener('connection', (_socket: Socket) => {
    const version = tls.refresh();
    if (version === tlsVersion) return;
    tlsVersion = version;
    server.updateSecureContext(tls.current());
  });

  const port = await listenSmtp(server, options.port, options.host);
  logger.info('smtp submission listening', {
    host: options.host,
    port,
    tls: options.implicitTls ? 'implicit' : 'starttls',
    certificate: tls.kind,
  });

  return {
    port,
    async close() {
      // Graceful: new commands get 421, messages in DATA finish and are answered.
      draining = true;
      const deadline = performance.now() + (options.drainTimeoutMs ?? 30_000);
      while (inData > 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
