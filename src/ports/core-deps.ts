/**
 * @module ports/core-deps
 * What the core needs from the outside world, injected so tests control time, ids and I/O: the database, the parsed
 * configuration and the ports of this folder.
 */
import type { Database } from '../../storage/index.js';
import type { Config } from '../config.js';
import type { Clock, IdGenerator, RandomBytes } from './clock.js';
import type { DnsResolver } from './dns.js';
import type { HttpRequester } from './http.js';
import type { InboundStages } from './inbound-stages.js';
import type { Logger } from './logger.js';
import type { SmtpClient } from './mail-transport.js';
import type { Metrics } from './metrics.js';
import type { Notifier } from './notifier.js';
import type { SecretBox } from './secret-box.js';
import type { TextGenerator } from './text-generator.js';

/** Everything `createCore` takes. */
export interface CoreDeps {
  db: Database;
  config: Config;
  clock: Clock;
  newId: IdGenerator;
  randomBytes: RandomBytes;
  dns: DnsResolver;
  logger: Logger;
  /** Operational emails (webhook failure alerts). Default: `loggingNotifier` (src/system/notifier.ts). */
  notifier?: Notifier | undefined;
  /** Outbound HTTP to webhook endpoints. Default: `nodeHttpRequester` (src/system/http-requester.ts). */
  http?: HttpRequester | undefined;
  /** SMTP client of outbound delivery (relay or MX). Default: a pooled nodemailer client (src/system/smtp-client.ts). */
  smtp?: SmtpClient | undefined;
  /** Monitoring counters (`GET /metrics`). Default: `noMetrics` (src/system/metrics.ts). */
  metrics?: Metrics | undefined;
  /** The model of Smart Compose (server/ai-text-generator.ts builds it from `AGENTPOST_AI_*`). Default: none (503). */
  text?: TextGenerator | undefined;
  /** The authentication and spam stages of inbound mail (./inbound-stages.ts). Default: none (skipped). */
  inboundStages?: InboundStages | undefined;
  /**
   * Seals secrets at rest (src/secrets/secret-box.ts): connected accounts' passwords, DKIM private keys, webhook
   * secrets, the tracking signing key. `server/main.ts` opens it with `openSecretBox` (src/secrets/key-source.ts:
   * `AGENTPOST_SECRET_KEY`, else the key file, checked against the database); embedders do the same, tests may
   * pass `createSecretBox(<32+ characters>)`.
   */
  secrets: SecretBox;
}
