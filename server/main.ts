/**
 * @module server/main
 * The process: config → database → migrations → core → bootstrap ({@link createService}), then the HTTP and SMTP
 * listeners and the background workers, each only when `config.roles` names it ({@link Service.start}), and a
 * graceful {@link Service.close}: no new work, in-flight HTTP requests and SMTP transactions finish within
 * `AGENTPOST_SHUTDOWN_TIMEOUT`, then everything the process runs closes, and the database.
 * `startService` (both steps) is what the CLI and integration tests start; `createAgentpost` (server/embed.ts) wraps it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type RequestListener,
  type Server as HttpServer,
  type ServerOptions,
  type ServerOptions as HttpServerOptions,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createDb, migrate } from '../storage/index.js';
import type { Hono } from 'hono';
import { createDatabaseProbe } from '../storage/index.js';
import {
  checkSecretKey,
  createCore,
  createFailedAuthentications,
  createLogger,
  openSecretBox,
  sealStoredSecrets,
  startBackgroundWork,
  type SecretBox,
  type Role,
  startInboundSmtp,
  startSubmission,
  operations,
  runOperation,
  systemClock,
  systemDns,
  timeOrderedIds,
  type BackgroundWork,
  type Config,
  type Core,
  type CoreDeps,
  type Logger,
  type FailedAuthentications,
  type FollowUpSender,
  type InboundSmtpServer,
  type Submission,
} from '../src/index.js';
import { answerClientErrors, discardUnreadBodies } from './http-limits.js';
import { createApp } from './index.js';
import { createTrackingListener } from './routes/tracking.js';
import { dispatchUpgrade } from './routes/event-stream.js';
import type { Duplex } from 'node:stream';
import { createServiceMetrics, type ServiceMetrics } from './metrics.js';
import { createAiTextGenerator } from './ai-text-generator.js';
import type { AppEnv } from './types.js';

/** Builds the core's dependencies from the configuration; tests override any of them. */
export async function createDeps(config: Config, overrides: Partial<CoreDeps> = {}): Promise<CoreDeps> {
  const db = overrides.db ?? (await createDb({ url: config.databaseUrl, authToken: config.databaseAuthToken }));
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config.logLevel);
  let secrets: SecretBox;
  try {
    await migrate(db);
    // The key is checked before anything reads a secret: a wrong or missing key stops the start here, with a
    // message naming the setting, instead of failing every DKIM signature and webhook delivery later.
    if (overrides.secrets) {
      secrets = overrides.secrets;
      await checkSecretKey({ db, clock }, secrets, { kind: 'given' });
    } else {
      secrets = await openSecretBox({ db, config, logger, clock });
    }
    await sealStoredSecrets({ db, secrets, logger });
  } catch (error) {
    if (!overrides.db) await db.close();
    throw error;
  }
  return {
    db,
    config,
    clock,
    newId: timeOrderedIds(clock),
    randomBytes,
    logger,
    // Smart Compose's model, from AGENTPOST_AI_* (none: the endpoints answer 503).
    text: createAiTextGenerator(config.ai),
    ...overrides,
    // Every look-up of the service goes through this one resolver (AGENTPOST_DNS_SERVERS, AGENTPOST_DNS_TIMEOUT).
    dns: overrides.dns ?? systemDns({ servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs }),
    secrets,
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

/** A service built on its database but not yet listening ({@link createService}). */
export interface Service {
  core: Core;
  config: Config;
  /** The HTTP application (`app.fetch` serves a `Request`); it works before {@link Service.start} too. */
  app: Hono<AppEnv>;
  /** This instance's metrics registry (`GET /metrics`). */
  metrics: ServiceMetrics;
  /** The default application's API key, when this start generated it (printed once). */
  generatedKey: string | undefined;
  /** The default application's id. */
  applicationId: string;
  /** Listens (HTTP, SMTP) and starts the background workers, as far as `config.roles` names them. Once. */
  start(): Promise<Listening>;
  /** Graceful stop: see {@link RunningService.close}. Closes the database even when never started. */
  close(): Promise<void>;
}

/**
 * Where a started service listens. What a process runs is `config.roles` (`serve --roles`, `AGENTPOST_ROLES`): a
 * part it does not run is `undefined` here.
 */
export interface Listening {
  /** The roles this process runs. */
  roles: readonly Role[];
  /** Base URL of the HTTP server, e.g. `http://127.0.0.1:3000` (the `apiUri` of the nylas SDK); role `http`. */
  url: string | undefined;
  /** Port of the inbound SMTP listener (`AGENTPOST_SMTP_PORT`; the bound one when that is 0); role `smtp`. */
  smtpPort: number | undefined;
  /** Port of SMTP submission with STARTTLS (`AGENTPOST_SUBMISSION_PORT`, when set); role `smtp`. */
  submissionPort: number | undefined;
  /** Port of SMTP submission with implicit TLS (`AGENTPOST_SUBMISSION_TLS_PORT`, when set); role `smtp`. */
  submissionTlsPort: number | undefined;
  /** The outbox dispatcher and job worker of this process (`wake()` after moving a test clock); role `worker`. */
  background: BackgroundWork | undefined;
}

/** A running service. */
export interface RunningService extends Listening {
  core: Core;
  /** The default application's API key, when this start generated it (printed once). */
  generatedKey: string | undefined;
  /** This instance's metrics registry. */
  metrics: ServiceMetrics;
  /**
   * Graceful stop: new HTTP requests get 503 with `Connection: close`, new SMTP sessions and commands 421 (both
   * listeners stay open meanwhile, so no client is reset; they close at the end and refuse connections from then). Requests and SMTP transactions already under way
   * finish, for up to `AGENTPOST_SHUTDOWN_TIMEOUT`; what is left then is cut off. Then the workers stop (jobs in
   * progress finish) and the database closes.
   */
  close(): Promise<void>;
}

/** How long the 503 answers given during shutdown may take once the requests that were in flight are done. */
const LAST_ANSWERS_MS = 1_000;

/** The inbound SMTP listener of a service (role `smtp`). */
function listenSmtp(core: Core, metrics: ServiceMetrics): Promise<InboundSmtpServer> {
  const { config, logger } = core.deps;
  return startInboundSmtp({
    inbound: core.mail.inbound,
    reports: core.deliverability.reports,
    dmarc: core.deliverability.dmarcReports,
    logger,
    metrics,
    host: config.host,
    port: config.smtpPort,
    hostname: config.mxHost,
    maxClients: config.smtpMaxConnections,
    maxConnectionsPerClient: config.smtpMaxConnectionsPerClient,
    maxUnknownRecipients: config.smtpMaxUnknownRecipients,
    maxUnknownRecipientsPerClient: config.smtpMaxUnknownRecipientsPerClient,
    maxHeaderBytes: config.headerLimits.maxHeaderBytes,
    drainTimeoutMs: config.shutdownTimeoutMs,
  });
}

/** `send_message` through the operation runner: how the worker sends follow-ups, as any send goes. */
function sendThroughOperation(core: Core): FollowUpSender {
  const sendMessage = operations.find((operation) => operation.name === 'send_message')!;
  return (input, context) => runOperation(sendMessage, core, input, context);
}

/**
 * SMTP submission (src/submission; role `smtp`, the ports that are set): each message through `send_message`, as
 * over HTTP, with the face `smtp`.
 */
function listenSubmission(core: Core, failedAuthentications: FailedAuthentications): Promise<Submission> {
  const { config, db, clock, logger } = core.deps;
  const sendMessage = operations.find((operation) => operation.name === 'send_message')!;
  return startSubmission({
    port: config.submission.port,
    tlsPort: config.submission.tlsPort,
    certFile: config.submission.certFile,
    keyFile: config.submission.keyFile,
    dataDir: db.file ? dirname(db.file) : undefined,
    names: [...new Set([config.mxHost, 'localhost', '127.0.0.1', '::1', config.host])],
    now: clock.now(),
    random: core.deps.randomBytes,
    host: config.host,
    hostname: config.mxHost,
    failedAuthentications,
    logger,
    maxHeaderBytes: config.headerLimits.maxHeaderBytes,
    drainTimeoutMs: config.shutdownTimeoutMs,
    authenticateApiKey: (key) => core.accounts.applications.authenticateApiKey(key),
    grantAddress: async (principal, grantId) => (await core.accounts.grants.require(principal, grantId)).email,
    parse: (raw) => core.mail.inbound.parse(raw),
    answered: (principal, grantId, headerMessageId) =>
      core.mail.messages.idByHeaderMessageId(principal, grantId, headerMessageId),
    requestId: randomUUID,
    send: (input, context) => runOperation(sendMessage, core, input, context),
  });
}

/** Opens the database, migrates, builds the core and the HTTP app, and bootstraps the default application and domains. */
export async function createService(
  config: Config,
  overrides: Partial<CoreDeps> = {},
  options: StartOptions = {},
): Promise<Service> {
  const baseDeps = await createDeps(config, overrides);
  const metrics = createServiceMetrics(baseDeps.db, () => baseDeps.clock.now().getTime(), baseDeps.logger);
  const deps: CoreDeps = { ...baseDeps, metrics: overrides.metrics ?? metrics };
  const core = createCore(deps);
  let application: Awaited<ReturnType<Core['accounts']['applications']['ensureDefaultApplication']>>;
  try {
    application = await core.accounts.applications.ensureDefaultApplication();
    await core.accounts.domains.ensureVerified(application.application.id, config.domains);
    // The signing key is loaded before the first request: tracking URLs are then checked without waiting.
    await core.deliverability.signing.signer();
  } catch (error) {
    await deps.db.close();
    throw error;
  }
  let shuttingDown = false;
  // One failed-authentication budget per client address for the HTTP API, /mcp and SMTP submission together.
  const failedAuthentications = createFailedAuthentications(
    config.rateLimits.failedAuthPerMinute,
    options.rateLimitClock ?? (() => performance.now()),
  );
  const trackingListener = createTrackingListener({ core, metrics, shuttingDown: () => shuttingDown });
  let closeApp: () => Promise<void> = async () => undefined;
  const app = createApp({
    core,
    metrics,
    probe: createDatabaseProbe(deps.db),
    shuttingDown: () => shuttingDown,
    onClose: (close) => {
      closeApp = close;
    },
    failedAuthentications,
    ...(options.rateLimitClock ? { rateLimitClock: options.rateLimitClock } : {}),
  });
  let started:
    | Promise<{
        listening: Listening;
        server: ServerType | undefined;
        smtp: InboundSmtpServer | undefined;
        submission: Submission | undefined;
        inFlight: Set<ServerResponse>;
      }>
    | undefined;
  let closing: Promise<void> | undefined;
  const roles = new Set(config.roles);
  // A process without the background role never starts the loops `/readyz` waits for: it is ready without them.
  if (!roles.has('worker')) core.health.withoutBackgroundRole(config.roles);
  // Requests between arrival and the end of their response: shutdown waits for these.
  const inFlight = new Set<ServerResponse>();

  /** Starts the roles of `config.roles`; when one fails to start, those already started are stopped again. */
  async function listen() {
    let http: { server: ServerType; url: string } | undefined;
    let background: BackgroundWork | undefined;
    let smtp: InboundSmtpServer | undefined;
    let submission: Submission | undefined;
    // The roles that store mail (inbound SMTP; the workers' IMAP sync and local deliveries) start the mail writer
    // thread of an embedded database now, beside the listeners, not at the first message: under tsx it loads for a
    // second or more, which a first delivery or a connected account's first sync would otherwise wait out.
    const writerLoaded = roles.has('smtp') || roles.has('worker') ? core.mail.inbound.warm() : undefined;
    try {
      if (roles.has('http')) http = await listenHttp({ config, app, trackingListener, inFlight, logger: deps.logger });
      if (roles.has('worker')) background = startBackgroundWork(core, { send: sendThroughOperation(core) });
      if (roles.has('smtp')) smtp = await listenSmtp(core, metrics);
      if (roles.has('smtp')) submission = await listenSubmission(core, failedAuthentications);
      await writerLoaded;
    } catch (error) {
      await smtp?.close();
      await background?.stop();
      const server = http?.server;
      if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
      throw error;
    }
    deps.logger.info('roles started', { roles: config.roles.join(',') });
    return {
      listening: {
        roles: config.roles,
        url: http?.url,
        smtpPort: smtp?.port,
        submissionPort: submission?.port,
        submissionTlsPort: submission?.tlsPort,
        background,
      },
      server: http?.server,
      smtp,
      submission,
      inFlight,
    };
  }

  /** Drains the HTTP server: waits for the requests it had taken, answers late ones 503, then closes it. */
  async function drainHttp(server: ServerType, deadline: number): Promise<void> {
    const http = server as HttpServer;
    const accepted = [...inFlight];
    const unfinished = () => accepted.filter((response) => inFlight.has(response)).length;
    http.closeIdleConnections();
    while (unfinished() > 0 && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      // A connection whose request just finished is idle now: close it instead of waiting for its keep-alive.
      http.closeIdleConnections();
    }
    if (unfinished() > 0)
      deps.logger.warn('shutdown timeout: cutting off HTTP requests still in progress', {
        requests: unfinished(),
        timeout_ms: config.shutdownTimeoutMs,
      });
    // Now stop listening; the 503 answers still being written get a moment, then every connection closes.
    const httpClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    const lastAnswers = performance.now() + LAST_ANSWERS_MS;
    while (inFlight.size > 0 && performance.now() < lastAnswers)
      await new Promise((resolve) => setTimeout(resolve, 10));
    http.closeAllConnections();
    await httpClosed;
  }

  async function shutdown(): Promise<void> {
    shuttingDown = true;
    const running = started ? await started.catch(() => undefined) : undefined;
    if (running) {
      const { server, smtp, submission, listening } = running;
      const deadline = performance.now() + config.shutdownTimeoutMs;
      // Both faces drain at once, and both keep listening meanwhile, so that a new client gets a clear answer
      // (HTTP 503 with `Connection: close`, SMTP 421) rather than a connection reset: closing a listening socket
      // resets the connections the kernel accepted but Node had not yet taken. SMTP waits for messages in DATA.
      // Event streams never end on their own: they end now, so the drain waits only for requests that do.
      core.notifications.stream.close();
      await Promise.all([smtp?.close(), submission?.close(), server ? drainHttp(server, deadline) : undefined]);
      // MCP sessions still open (clients that never said DELETE) end with the HTTP face.
      await closeApp();
      // The IMAP sync stores through the inbound path: it stops (its IDLE connections closed) before that closes.
      await core.accounts.sync.stop();
      await core.mail.inbound.close();
      await core.calendar.parser.close();
      await listening.background?.stop();
    } else {
      await core.mail.inbound.close();
      await core.calendar.parser.close();
    }
    // The attachment text reader's threads (if a read started them) depend on nothing above.
    await core.mail.attachmentText.close();
    // Tracking hits answered but not yet written go in now.
    await core.deliverability.tracking.close();
    // Access-log rows of the last calls go in now.
    await core.accessLog.close();
    await core.sending.outbound.close();
    await deps.db.close();
  }

  return {
    core,
    config,
    app,
    metrics,
    generatedKey: application.generatedKey,
    applicationId: application.application.id,
    async start() {
      if (closing) throw new Error('The service is closed.');
      started ??= listen();
      return (await started).listening;
    },
    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}

/**
 * Listens for HTTP (`config.host`, `config.httpPort`): tracking URLs answered from Node's request event, everything
 * else through the app, WebSocket handshakes too; each request's response is kept in `inFlight` until it ends.
 */
async function listenHttp({
  config,
  app,
  trackingListener,
  inFlight,
  logger,
}: {
  config: Config;
  app: Hono<AppEnv>;
  trackingListener: (request: IncomingMessage, response: ServerResponse) => boolean;
  inFlight: Set<ServerResponse>;
  logger: Logger;
}): Promise<{ server: ServerType; url: string }> {
  const server: ServerType = await new Promise((resolve, reject) => {
    const listening = serve(
      {
        fetch: app.fetch,
        // Unread request bodies are read and dropped by discardUnreadBodies (server/http-limits.ts), bounded.
        autoCleanupIncoming: false,
        hostname: config.host,
        port: config.httpPort,
        serverOptions: httpServerOptions(config.http),
        // Tracking URLs are answered from Node's request event; everything else goes to Hono.
        createServer: ((serverOptions: HttpServerOptions, listener: RequestListener) =>
          createHttpServer(
            serverOptions,
            (request, response) => trackingListener(request, response) || listener(request, response),
          )) as typeof createHttpServer,
      },
      () => resolve(listening),
    );
    listening.once('error', (error: Error) => {
      reject(
        new Error(
          `Cannot listen on ${config.host}:${config.httpPort} (AGENTPOST_HOST, AGENTPOST_HTTP_PORT): ${error.message}`,
          { cause: error },
        ),
      );
    });
  });
  // Set on the server too: not every Node version reads them from the options.
  Object.assign(server, {
    headersTimeout: config.http.headersTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
  });
  answerClientErrors(server as HttpServer, { maxHeaderBytes: config.http.maxHeaderBytes, logger: logger });
  discardUnreadBodies(server as HttpServer, logger);
  // WebSocket handshakes (the event stream) go through the app with the socket at hand.
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) =>
    dispatchUpgrade(app.fetch, request, socket, head),
  );
  server.on('request', (_request, response: ServerResponse) => {
    inFlight.add(response);
    response.once('close', () => inFlight.delete(response));
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info('http listening', { url });
  return { server, url };
}

/** Starts the service: migrates, bootstraps the default application and domains, listens and starts the workers. */
export async function startService(
  config: Config,
  overrides: Partial<CoreDeps> = {},
  options: StartOptions = {},
): Promise<RunningService> {
  const service = await createService(config, overrides, options);
  let listening: Listening;
  try {
    listening = await service.start();
  } catch (error) {
    await service.close();
    throw error;
  }
  return {
    ...listening,
    core: service.core,
    generatedKey: service.generatedKey,
    metrics: service.metrics,
    close: () => service.close(),
  };
}

/** A running service with every role (the default): each part is there. */
export type FullService = RunningService & { url: string; smtpPort: number; background: BackgroundWork };

/** `service` as a {@link FullService}; throws, naming its roles, when it runs only some (`AGENTPOST_ROLES`). */
export function requireEveryRole(service: RunningService): FullService {
  const { url, smtpPort, background } = service;
  if (url === undefined || smtpPort === undefined || background === undefined)
    throw new Error(`This needs every role (http,smtp,worker); the service runs ${service.roles.join(',')}.`);
  return { ...service, url, smtpPort, background };
}
