/**
 * @module ports/mail-transport
 * The SMTP client of outbound delivery, as the core sees it: one submission is one SMTP transaction to one host,
 * with replies reported per recipient. The real client is `createSmtpClient` (src/system/smtp-client.ts).
 */

/** Where to connect for one submission. */
export interface SmtpTarget {
  /** Host name or IP address to connect to. */
  host: string;
  port: number;
  /** Implicit TLS from the first byte (smtps, port 465); otherwise STARTTLS when offered. */
  secure: boolean;
  /** Name checked against the server's certificate (the MX host name when `host` is its address). */
  servername?: string | undefined;
  auth?: { user: string; pass: string } | undefined;
  /**
   * Verify the certificate. A relay is verified; MX delivery uses opportunistic TLS like every MTA (RFC 7435):
   * encrypt when offered, and do not refuse mail over a self-signed certificate.
   */
  verifyTls: boolean;
  /** Refuse to send without TLS (a relay given as smtp:// with `requireTLS`). */
  requireTls?: boolean | undefined;
}

/** One message to submit. */
export interface SmtpSubmission extends SmtpTarget {
  envelope: { from: string; to: string[] };
  raw: Buffer;
}

/** A recipient the server refused (reply to RCPT TO). */
export interface SmtpRejection {
  recipient: string;
  /** Reply code, e.g. 550 or 452. */
  code: number;
  response: string;
}

/** The outcome of a submission the server took (at least one recipient accepted and DATA answered 2xx). */
export interface SmtpResult {
  accepted: string[];
  rejected: SmtpRejection[];
  /** The final reply, e.g. `250 2.0.0 Ok: queued as …`. */
  response: string;
}

/**
 * A submission that did not go through. `code` is the SMTP reply that ended it (absent when no reply came:
 * connection refused, timeout, TLS failure); `rejected` lists per-recipient replies when RCPT TO was refused
 * for everyone.
 */
export class SmtpSendError extends Error {
  override readonly name = 'SmtpSendError';
  constructor(
    message: string,
    readonly code: number | undefined,
    readonly response: string,
    readonly stage: 'connect' | 'auth' | 'envelope' | 'data',
    readonly rejected: SmtpRejection[] = [],
  ) {
    super(message);
  }
}

/** Submits messages over SMTP. The core takes one (`createSmtpClient`, src/system/smtp-client.ts, by default); tests may wrap it. */
export interface SmtpClient {
  send(submission: SmtpSubmission): Promise<SmtpResult>;
  /** Closes pooled connections. */
  close(): Promise<void>;
}
