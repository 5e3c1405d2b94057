/**
 * @module system/smtp-client
 * The SMTP client of outbound delivery (nodemailer only): one submission is one SMTP transaction (MAIL FROM,
 * RCPT TO per recipient, DATA with the raw message exactly as composed) to one host. Connections are pooled per
 * destination, so a busy queue does not pay a TCP and EHLO round per message. Replies are reported per recipient
 * with their codes; what a code means (retry or bounce) is decided by the caller.
 */
import nodemailer from 'nodemailer';
import DKIM from 'nodemailer/lib/dkim';
import type { Logger } from '../ports/logger.js';
import { SmtpSendError, type SmtpClient, type SmtpTarget } from '../ports/mail-transport.js';

/** Options of {@link createSmtpClient}. */
export interface SmtpClientOptions {
  /** Our name in EHLO (the MX host name). */
  heloName: string;
  logger: Logger;
  /** Connections kept per destination (default 3). */
  maxConnections?: number;
  /** Connect and greeting deadline, ms (default 30 s). */
  connectTimeoutMs?: number;
  /** Inactivity deadline of a session, ms (default 5 min; RFC 5321 4.5.3.2 allows 10 min for DATA). */
  socketTimeoutMs?: number;
}

interface NodemailerError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
  rejectedErrors?: (Error & { recipient?: string; responseCode?: number; response?: string })[];
}

/** `smtp://user:pass@host:port` → a target (credentials URL-decoded). */
export function relayTarget(url: string): SmtpTarget {
  const parsed = new URL(url);
  const secure = parsed.protocol === 'smtps:';
  const user = decodeURIComponent(parsed.username);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: parsed.port ? Number(parsed.port) : secure ? 465 : 587,
    secure,
    verifyTls: parsed.searchParams.get('tls') !== 'insecure',
    requireTls: parsed.searchParams.get('requireTLS') === 'true',
    ...(user ? { auth: { user, pass: decodeURIComponent(parsed.password) } } : {}),
  };
}

/** Signs a composed message with the domain's DKIM key (relaxed/relaxed, rsa-sha256). */
export async function dkimSign(
  raw: Buffer,
  key: { domainName: string; keySelector: string; privateKey: string },
): Promise<Buffer> {
  const stream = new DKIM(key).sign(raw);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

function describe(error: NodemailerError): SmtpSendError {
  const response = (error.response ?? error.message ?? String(error)).slice(0, 1000);
  const rejected = (error.rejectedErrors ?? []).map((rejection) => ({
    recipient: String(rejection.recipient ?? ''),
    code: rejection.responseCode ?? 0,
    response: String(rejection.response ?? rejection.message).slice(0, 1000),
  }));
  const stage =
    error.code === 'EAUTH'
      ? 'auth'
      : error.command === 'DATA' || error.code === 'EMESSAGE'
        ? 'data'
        : error.code === 'EENVELOPE'
          ? 'envelope'
          : 'connect';
  return new SmtpSendError(error.message, error.responseCode, response, stage, rejected);
}

/** The nodemailer-backed client: a pool of connections per destination (host, port, TLS, credentials). */
export function createSmtpClient(options: SmtpClientOptions): SmtpClient {
  type Pool = ReturnType<typeof nodemailer.createTransport>;
  const pools = new Map<string, Pool>();

  function poolFor(target: SmtpTarget): Pool {
    const key = JSON.stringify([
      target.host,
      target.port,
      target.secure,
      target.servername ?? '',
      target.auth?.user ?? '',
      target.auth?.pass ?? '',
      target.verifyTls,
      target.requireTls ?? false,
    ]);
    let pool = pools.get(key);
    if (!pool) {
      pool = nodemailer.createTransport({
        pool: true,
        host: target.host,
        port: target.port,
        secure: target.secure,
        name: options.heloName,
        ...(target.auth ? { auth: target.auth } : {}),
        requireTLS: target.requireTls ?? false,
        tls: { rejectUnauthorized: target.verifyTls, ...(target.servername ? { servername: target.servername } : {}) },
        maxConnections: options.maxConnections ?? 3,
        maxMessages: 100,
        connectionTimeout: options.connectTimeoutMs ?? 30_000,
        greetingTimeout: options.connectTimeoutMs ?? 30_000,
        socketTimeout: options.socketTimeoutMs ?? 5 * 60_000,
        disableFileAccess: true,
        disableUrlAccess: true,
        logger: false,
      });
      // An idle pooled connection that the server drops is not an error of any message.
      pool.on('error', (error: Error) =>
        options.logger.debug('smtp pool error', { host: target.host, port: target.port, error: error.message }),
      );
      pools.set(key, pool);
    }
    return pool;
  }

  return {
    async send(submission) {
      const pool = poolFor(submission);
      let sent: { accepted?: unknown[]; rejectedErrors?: NodemailerError[]; response?: string };
      try {
        // The raw message goes out byte for byte; nodemailer adds nothing to it.
        sent = (await pool.sendMail({ envelope: submission.envelope, raw: submission.raw })) as typeof sent;
      } catch (error) {
        throw describe(error as NodemailerError);
      }
      return {
        accepted: (sent.accepted ?? []).map(String),
        rejected: (sent.rejectedErrors ?? []).map((rejection) => ({
          recipient: String((rejection as { recipient?: string }).recipient ?? ''),
          code: rejection.responseCode ?? 0,
          response: String(rejection.response ?? rejection.message).slice(0, 1000),
        })),
        response: String(sent.response ?? ''),
      };
    },
    async close() {
      for (const pool of pools.values()) pool.close();
      pools.clear();
    },
  };
}
