/**
 * @module server/main
 * The process: config → database → migrations → core → bootstrap → HTTP listener (SMTP and workers join
 * as their issues land). `startService` is also what integration tests start, on port 0.
 */
import { randomBytes } from 'node:crypto';
import type { Server as HttpServer, ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createDb, migrate } from '../storage/index.js';
import { createCore, createLogger, startBackgroundWork, startInboundSmtp, systemClock, systemDns, timeOrderedIds, type BackgroundWork, type Config, type Core, type CoreDeps } from '../src/index.js';
import { answerClientErrors } from './http-limits.js';
import { createApp } from './index.js';

/** A running service. */
export interface RunningService {
  core: Core;
  /** Base URL of the HTTP server, e.g. `http://127.0.0.1:3000` (the `apiUri` of the nylas SDK). */
  url: string;
  /** The default application's API key, when this start generated it (printed once). */
  generatedKey: string | undefined;
  /** The outbox dispatcher and job worker of this process (`wake()` after moving a test clock). */
  background: BackgroundWork;
  /** Port of the inbound SMTP listener (`AGENTPOST_SMTP_PORT`; the bound one when that is 0). */
  smtpPort: number;
  close(): Promise<void>;
}

/** Builds the core's dependencies from the configuration; tests override any of them. */
export async function createDeps(config: Config, overrides: Partial<CoreDeps> = {}): Promise<CoreDeps> {
  const db = overrides.db ?? (await createDb({ url: config.databaseUrl, authToken: config.databaseAuthToken }));
  await migrate(db);
  return {
    db,
    config,
    clock: overrides.clock ?? systemClock,
    newId: timeOrderedIds(overrides.clock ?? systemClock),
    randomBytes,
    dns: systemDns(),
    logger: createLogger(config.logLevel),
    ...overrides,
  };
}

/** Options of {@link startService} beyond the core's dependencies. */
export interface StartOptions {
  /** Monotonic milliseconds for the rate limits (default `performance.now`); tests pass a clock they move. */
  rateLimitClock?: () => number;
}

/**
 * Node's http.Server options from the configuration. The header limit is Node's default, set explicitly (the request
 * line counts toward it); the deadlines cut slow clients off, checked every second at most (Node's default
 * `connectionsCheckingInterval` of 30 s would let a slow client stay half a minute past its deadline).
 */
export function httpServerOptions(http: Config['http']): ServerOptions {
  return {
    maxHeaderSize: http.maxHeaderBytes,
    headersTimeout: http.headersTimeoutMs,
    requestTimeout: http.requestTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(100, Math.floor(http.headersTimeoutMs / 2))),
  };
}

/** Starts the service: migrates, bootstraps the default application and domains, and listens. */
export async function startService(config: Config, overrides: Partial<CoreDeps> = {}, options: StartOptions = {}): Promise<RunningService> {
  const deps = await createDeps(config, overrides);
  const core = createCore(deps);
  const { application, generatedKey } = await core.applications.ensureDefaultApplication();
  await core.domains.ensureVerified(application.id, config.domains);

  const app = createApp({ core, ...(options.rateLimitClock ? { rateLimitClock: options.rateLimitClock } : {}) });
  const server: ServerType = await new Promise((resolve, reject) => {
    const listening = serve({ fetch: app.fetch, hostname: config.host, port: config.httpPort, serverOptions: httpServerOptions(config.http) }, () => resolve(listening));
    listening.once('error', (error) => {
      void deps.db.close();
      reject(new Error(`Cannot listen on ${config.host}:${config.httpPort} (AGENTPOST_HOST, AGENTPOST_HTTP_PORT): ${error.message}`, { cause: error }));
    });
  });
  // Set on the server too: not every Node version reads them from the options.
  Object.assign(server, { headersTimeout: config.http.headersTimeoutMs, requestTimeout: config.http.requestTimeoutMs, keepAliveTimeout: config.http.keepAliveTimeoutMs });
  answerClientErrors(server as HttpServer, { maxHeaderBytes: config.http.maxHeaderBytes, logger: deps.logger });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  deps.logger.info('http listening', { url });
  const background = startBackgroundWork(core);
  const smtp = await startInboundSmtp({
    inbound: core.inbound,
    logger: deps.logger,
    host: config.host,
    port: config.smtpPort,
    hostname: config.mxHost,
    maxClients: config.smtpMaxConnections,
    maxConnectionsPerClient: config.smtpMaxConnectionsPerClient,
    maxUnknownRecipients: config.smtpMaxUnknownRecipients,
    maxUnknownRecipientsPerClient: config.smtpMaxUnknownRecipientsPerClient,
  });

  return {
    core,
    url,
    generatedKey,
    background,
    smtpPort: smtp.port,
    async close() {
      await smtp.close();
      await core.inbound.close();
      await core.calendarParser.close();
      await background.stop();
      await core.outbound.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await deps.db.close();
    },
  };
}
