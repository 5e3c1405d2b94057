/**
 * @module submission
 * The front door of src/submission/: SMTP submission for Agent Accounts. Mail clients send as a grant with an app
 * password (an API key scoped to that one grant, with `mail.send`), over STARTTLS or implicit TLS; each message goes
 * through `send_message`, the outbound path of every face ({@link startSubmission}).
 */
import type { Logger } from '../ports/index.js';
import type { FailedAuthentications } from '../rate-limits.js';
import { createSubmissionService, type SubmissionDeps } from './submission-service.js';
import { startSubmissionSmtp, type SubmissionSmtpServer } from './submission-smtp.js';
import { openTlsSource, type TlsSourceOptions } from './tls-source.js';

export {
  isLoopback,
  startSubmissionSmtp,
  type SubmissionSmtpOptions,
  type SubmissionSmtpServer,
} from './submission-smtp.js';
export {
  createSubmissionService,
  type SubmissionDeps,
  type SubmissionIdentity,
  type SubmissionService,
} from './submission-service.js';
export { declaresHtml, sendInputOf, unwrapText } from './submission-message.js';
export { openTlsSource, SELF_SIGNED_FILES, type TlsSource, type TlsSourceOptions } from './tls-source.js';
export { selfSignedCertificate, type CertificatePair } from './self-signed.js';

/** Options of {@link startSubmission}. */
export interface SubmissionOptions extends SubmissionDeps, Omit<TlsSourceOptions, 'logger'> {
  /** The STARTTLS port (`AGENTPOST_SUBMISSION_PORT`); undefined: off. */
  port: number | undefined;
  /** The implicit TLS port (`AGENTPOST_SUBMISSION_TLS_PORT`); undefined: off. */
  tlsPort: number | undefined;
  host: string;
  hostname: string | undefined;
  failedAuthentications: FailedAuthentications;
  logger: Logger;
  maxHeaderBytes: number;
  drainTimeoutMs: number;
}

/** The running submission listeners (a port is undefined when its setting is unset). */
export interface Submission {
  port: number | undefined;
  tlsPort: number | undefined;
  close(): Promise<void>;
}

/** Starts the submission listeners that are configured; none when neither port is set (no certificate is made then). */
export async function startSubmission(options: SubmissionOptions): Promise<Submission> {
  if (options.port === undefined && options.tlsPort === undefined)
    return { port: undefined, tlsPort: undefined, close: async () => undefined };
  const tls = openTlsSource(options);
  const service = createSubmissionService(options);
  const common = {
    service,
    tls,
    failedAuthentications: options.failedAuthentications,
    logger: options.logger,
    host: options.host,
    hostname: options.hostname,
    maxHeaderBytes: options.maxHeaderBytes,
    drainTimeoutMs: options.drainTimeoutMs,
  };
  const listeners: SubmissionSmtpServer[] = [];
  try {
    const starttls =
      options.port === undefined
        ? undefined
        : await startSubmissionSmtp({ ...common, port: options.port, implicitTls: false });
    if (starttls) listeners.push(starttls);
    const implicit =
      options.tlsPort === undefined
        ? undefined
        : await startSubmissionSmtp({ ...common, port: options.tlsPort, implicitTls: true });
    if (implicit) listeners.push(implicit);
    return {
      port: starttls?.port,
      tlsPort: implicit?.port,
      close: async () => void (await Promise.all(listeners.map((listener) => listener.close()))),
    };
  } catch (error) {
    await Promise.all(listeners.map((listener) => listener.close()));
    throw error;
  }
}
