/**
 * @module server
 * `createApp({ core })` builds the Hono app: `/v3` (Nylas-compatible, built from the operations registry),
 * `/mcp`, and the operations endpoints `/livez` (alias `/healthz`), `/readyz` and `/metrics`, behind the path
 * limits, authentication and rate limits. Every request is logged once (the access log, at `info`) and timed for
 * `/metrics`. It never listens; `server/main.ts` does.
 */
import { randomUUID } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { matchedRoutes } from 'hono/route';
import { bodyLimit } from 'hono/body-limit';
import { getPath } from 'hono/utils/url';
import { beginReadScope, createDatabaseProbe, type DatabaseProbe } from '../storage/index.js';
import { AppError, operations, type AnyOperation, type Core, type FailedAuthentications } from '../src/index.js';
import { bindOperation, carriesRequestId } from './bind-operation.js';
import { createReadTurns } from './read-turns.js';
import { buildOpenApiDocument } from './openapi.js';
import { mountAttachmentUpload } from './routes/attachment-uploads.js';
import { mountConnect } from './routes/connect.js';
import { mountAttachmentDownload } from './routes/attachments.js';
import { mountCalendarIcs } from './routes/calendar-ics.js';
import { mountMcp } from './routes/mcp.js';
import { createTrackingApp, isTrackingUrl } from './routes/tracking.js';
import { mountApprovalReview } from './routes/approval-review.js';
import { mountEventStream } from './routes/event-stream.js';
import { mountDashboard } from './dashboard/index.js';
import { authenticate } from './middleware/auth.js';
import { createRateLimiter, rateLimitV3 } from './middleware/rate-limit.js';
import { pathLimits } from './http-limits.js';
import { errorResponse } from './middleware/error-handler.js';
import { bearerMatches, type ServiceMetrics } from './metrics.js';
import type { AppEnv } from './types.js';

/** JSON requests are limited to 3 MB, as in Nylas v3 (larger sends use multipart). */
const MAX_JSON_BODY_BYTES = 3 * 1024 * 1024;
/** Multipart requests (sends and drafts with large attachments) are limited to 40 MB, the size of a message. */
const MAX_MULTIPART_BODY_BYTES = 40 * 1024 * 1024;

/** Options of {@link createApp}. */
export interface CreateAppOptions {
  core: Core;
  /** Monotonic milliseconds for the rate limits (default `performance.now`); tests pass a clock they move. */
  rateLimitClock?: () => number;
  /** The service's metrics: requests are timed into it, and `/metrics` shows it (with `AGENTPOST_METRICS_TOKEN`). */
  metrics?: ServiceMetrics;
  /** The database check of `/readyz` (default: a probe of `core.deps.db`). */
  probe?: DatabaseProbe;
  /** True once shutdown began: `/readyz` answers 503, and so does every new request (with `Connection: close`). */
  shuttingDown?: () => boolean;
  /** Given what closes the app's own resources (open MCP sessions), for the caller's shutdown. */
  onClose?: (close: () => Promise<void>) => void;
  /** The failed-authentication budget shared with the process's SMTP submission listener (default: the app's own). */
  failedAuthentications?: FailedAuthentications;
}

/** The route pattern a request matched, for logs and metrics (`/v3/grants/:grant_id/messages`); `unmatched` for 404s. */
function routeOf(c: Context<AppEnv, string>): string {
  const own = c.get('route');
  if (own !== undefined) return own;
  const routes = matchedRoutes(c);
  const last = routes[routes.length - 1]?.path;
  return last && !last.endsWith('*') ? last : 'unmatched';
}

/**
 * The path the router sees: a `/v3` path with one trailing slash is the same route without it (`POST /v3/webhooks/`,
 * the specification's own spelling, creates a webhook), once here for every `/v3` route rather than per route. Other
 * paths (`/livez`, `/metrics`, `/mcp`, the tracking routes, which have their own app) keep their exact spelling.
 */
function routePath(request: Request): string {
  const path = getPath(request);
  return path.length > 4 && path.startsWith('/v3/') && path.endsWith('/') && !path.endsWith('//')
    ? path.slice(0, -1)
    : path;
}

/** Builds the HTTP application. */
export function createApp({
  core,
  rateLimitClock = () => performance.now(),
  metrics,
  probe,
  shuttingDown = () => false,
  onClose,
  failedAuthentications,
}: CreateAppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>({ getPath: routePath });
  const limiter = createRateLimiter(core.deps.config.rateLimits, rateLimitClock, failedAuthentications);
  const { logger, config } = core.deps;
  const databaseProbe = probe ?? createDatabaseProbe(core.deps.db);

  app.use('*', async (c: Context<AppEnv, string>, next) => {
    const started = performance.now();
    // Reads kept while the database is unchanged ask whether it changed once per request, after it arrived.
    beginReadScope();
    const requestId = randomUUID();
    c.set('requestId', requestId);
    c.set('core', core);
    c.set('logger', logger);
    c.header('x-request-id', requestId);
    // Shutting down: no new work. The client is told so (and to reconnect elsewhere) rather than cut off.
    if (shuttingDown() && !/^\/(livez|healthz)$/.test(c.req.path)) {
      c.header('connection', 'close');
      if (c.req.path === '/readyz') return c.json({ status: 'shutting down' }, 503);
      throw new AppError('unavailable', 'The service is shutting down; retry in a moment.');
    }
    await next();
    // Responses built from the context carry it already; others (errors, hand-made Responses) get it here. Calling
    // c.header on a finished response rebuilds it as a streamed Response (a copy of the whole body): only when needed.
    if (!carriesRequestId(c.res) && c.res.headers.get('x-request-id') !== requestId)
      c.header('x-request-id', requestId);
    const route = routeOf(c);
    const ms = performance.now() - started;
    metrics?.httpRequest(c.req.method, route, c.res.status, ms / 1000);
    // The access log: one line per request at `info` (AGENTPOST_LOG_LEVEL=warn turns it off).
    logger.info('request', {
      method: c.req.method,
      route,
      status: c.res.status,
      ms: Math.round(ms * 10) / 10,
      request_id: requestId,
      application: c.get('principal')?.applicationId ?? null,
    });
  });
  app.use('*', pathLimits());
  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) =>
    errorResponse(c, new AppError('not_found', `No route ${c.req.method} ${new URL(c.req.url).pathname}.`)),
  );

  // Liveness: the process answers. `threads`: worker threads that stopped on their own (and were replaced) since
  // start (src/health.ts). `/healthz` is its earlier name.
  const live = (c: Context<AppEnv>) => c.json({ status: 'ok', threads: core.health.threads() });
  app.get('/livez', live);
  app.get('/healthz', live);
  // Readiness: the database answers and carries every migration, and the background loops report in time.
  app.get('/readyz', async (c) => {
    const readiness = await core.health.readiness(databaseProbe);
    // Threads that stopped on their own were replaced (they do not make the service unready), but are reported here too.
    return c.json(
      { status: readiness.ready ? 'ready' : 'not ready', checks: readiness.checks, threads: core.health.threads() },
      readiness.ready ? 200 : 503,
    );
  });
  app.get('/metrics', async (c) => {
    if (!metrics || !config.metricsToken)
      throw new AppError(
        'not_found',
        'Metrics are off: set AGENTPOST_METRICS_TOKEN and scrape /metrics with Authorization: Bearer <token>.',
      );
    if (!bearerMatches(c.req.header('authorization'), config.metricsToken))
      throw new AppError(
        'unauthorized',
        'Unauthorized: /metrics needs Authorization: Bearer <AGENTPOST_METRICS_TOKEN>.',
      );
    const { contentType, body } = await metrics.scrape();
    return c.body(body, 200, { 'content-type': contentType });
  });
  const openApi = buildOpenApiDocument(operations, { version: '0.1.0' });
  app.get('/v3/openapi.json', (c) => c.json(openApi));
  onClose?.(mountMcp(app, core, limiter));
  mountAttachmentUpload(app);
  // The reviewers' confirmation page of held sends: the signed link is the authority (docs/oversight.md).
  mountApprovalReview(app);
  mountConnect(app, limiter);
  // The dashboard (docs/dashboard.md): sign-in with a key, pages read through the operations as that key.
  mountDashboard(app, { core, limiter });

  const v3 = new Hono<AppEnv>();
  const jsonLimit = bodyLimit({
    maxSize: MAX_JSON_BODY_BYTES,
    onError: () => {
      throw new AppError(
        'payload_too_large',
        `The request body is larger than the ${MAX_JSON_BODY_BYTES / 1024 / 1024} MB limit for JSON requests; send large attachments as multipart/form-data (up to 40 MB).`,
      );
    },
  });
  const multipartLimit = bodyLimit({
    maxSize: MAX_MULTIPART_BODY_BYTES,
    onError: () => {
      throw new AppError(
        'payload_too_large',
        `The request body is larger than the ${MAX_MULTIPART_BODY_BYTES / 1024 / 1024} MB limit for multipart requests (a message may be at most 40 MB).`,
      );
    },
  });
  v3.use('*', (c: Context<AppEnv, string>, next) => {
    // A GET or HEAD request has no body to limit (bodyLimit would build a whole fetch Request to find that out).
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    return /^multipart\/form-data\b/i.test(c.req.header('content-type') ?? '')
      ? multipartLimit(c, next)
      : jsonLimit(c, next);
  });
  v3.use('*', authenticate(core, limiter));
  v3.use('*', rateLimitV3(limiter));
  // Hono tries routes in registration order: bind static segments before parameters so that, e.g.,
  // /webhooks/ip-addresses is not swallowed by /webhooks/:webhook_id whatever the registry's order.
  const readTurns = createReadTurns(undefined, () => core.mail.inbound.flowing());
  for (const operation of [...operations].sort(bySpecificity)) bindOperation(v3, operation, operations, readTurns);
  mountAttachmentDownload(v3);
  mountCalendarIcs(v3);
  mountEventStream(v3, core.deps.config.eventStream.heartbeatSeconds);
  app.route('/v3', v3);

  // Open and click tracking (no authentication: mail readers load these) is an app of its own, handed its paths
  // before the router and middleware above: the hot path of a campaign (server/routes/tracking.ts).
  const tracking = createTrackingApp({ core, metrics, shuttingDown });
  const api = app.fetch;
  app.fetch = (request, env, executionContext) =>
    isTrackingUrl(request.url) ? tracking.fetch(request, env, executionContext) : api(request, env, executionContext);
  return app;
}

/**
 * Orders routes so that, at the first segment where two paths differ, a static segment comes before a `:param`
 * (a total order: segments compare as text, with every parameter after every static segment).
 */
function bySpecificity(a: AnyOperation, b: AnyOperation): number {
  const key = (operation: AnyOperation) =>
    (operation.http?.path ?? '').split('/').map((segment) => (segment.startsWith(':') ? '\uffff' : segment));
  const left = key(a);
  const right = key(b);
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    if (left[index] !== right[index]) return left[index]! < right[index]! ? -1 : 1;
  }
  return left.length - right.length;
}
