/**
 * @module ports/inbound-stages
 * The seams between the inbound pipeline (src/mail/stages/inbound-pipeline.ts) and the stages that need the network
 * or a filter: authentication (SPF, DKIM, DMARC, ARC through mailauth and the injected resolver) and spam (header
 * anomalies, DNSBL look-ups, rspamd). Each is a function the core is given (`CoreDeps.inboundStages`), so tests and
 * deployments choose the parts.
 */
import type { StoredMessageVerdict, StoredSpamDetection } from '../../storage/index.js';

/** The SMTP client that handed a message over; absent for mail delivered locally by this service. */
export interface SmtpClientInfo {
  /** The client's IP address. */
  address: string;
  /** The HELO/EHLO name it gave. */
  helo: string;
}

/** A received message as the network stages see it. */
export interface StageMail {
  raw: Buffer;
  /** MAIL FROM (empty for bounces). */
  mailFrom: string;
  client: SmtpClientInfo | undefined;
  /** RCPT TO addresses of the transaction (rspamd scores mail against them); optional, absent counts as none. */
  recipients?: string[] | undefined;
}

/** The authentication verdict kept on the message. */
export type AuthenticationVerdict = NonNullable<StoredMessageVerdict['authentication']> & {
  /** The `Authentication-Results` header field (name and value, no line ending), prepended to the stored message. */
  header: string;
};

/** Checks SPF, DKIM, DMARC and ARC of a message. Rejects only when the check could not complete (→ 451 4.3.0). */
export type Authenticator = (mail: StageMail) => Promise<AuthenticationVerdict>;

/** The spam verdict kept on the message. */
export type SpamVerdict = NonNullable<StoredMessageVerdict['spam']>;

/**
 * Scores a message as a policy's `spam_detection` asks (header anomalies, DNSBL, rspamd when configured).
 * Rejects only when the check could not complete (→ 451 4.3.0).
 */
export type SpamChecker = (
  mail: StageMail & { authentication: AuthenticationVerdict | undefined },
  settings: StoredSpamDetection,
) => Promise<SpamVerdict>;

/** The stages given from outside; absent ones are skipped. */
export interface InboundStages {
  authenticator?: Authenticator | undefined;
  spamChecker?: SpamChecker | undefined;
}
