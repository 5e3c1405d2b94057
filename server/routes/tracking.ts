/**
 * The tracking URLs, outside `/v3` and without authentication (mail readers load them):
 * - `GET|HEAD /t/o/{token}`: the 1×1 transparent GIF of a tracked message with opens on.
 * - `GET|HEAD /t/l/{token}`: a 302 to the URL recorded at send time for that link, never to anything the request
 *   carries (the query string is ignored).
 * A token that is forged, altered, truncated or of the other kind, or whose message is unknown (or its grant
 * deleted), is a 404 in the Nylas error shape. The work is `core.deliverability.tracking`; hits are recorded after the answer.
 *
 * They are the hot path of a mail campaign, so they are an app of their own that `createApp` hands these paths to
 * before the API's router and middleware ({@link createTrackingApp}, {@link isTrackingUrl}): each route is the only
 * handler of its request (Hono then calls it directly, and answers at once when the token and the message are at
 * hand), there is no access-log line (every hit is an `engagement_events` row already) and a request id is made only
 * for an error answer. Requests are still timed into `/metrics`, and refused with 503 once shutdown began.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import { AppError, CLICK_PATH, OPEN_PATH, type Core, type HitSource } from '../../src/index.js';
import type { ServiceMetrics } from '../metrics.js';
import { errorResponse } from '../middleware/error-handler.js';
import type { AppEnv } from '../types.js';

/** A 1×1 transparent GIF (43 bytes). */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** The GIF as a latin1 string: Node then sends it in the same write as the headers (a Buffer goes in a second chunk). */
const PIXEL_GIF_LATIN1 = PIXEL_GIF.toString('latin1');

/** Nothing on the way may keep an answer: each load is a hit. */
const NO_STORE = 'no-store, no-cache, must-revalidate, max-age=0';

const PIXEL_HEADERS = {
  'content-type': 'image/gif',
  'content-length': String(PIXEL_GIF.length),
  'cache-control': NO_STORE,
} as const;

/** The client of a request, as the hit records it (the socket's address: proxies in front are not trusted here). */
function sourceOf(c: Context<AppEnv>): HitSource {
  let ip: string | undefined;
  try {
    ip = getConnInfo(c).remote.address;
  } catch {
    // No Node socket (app.request in tests).
  }
  return { ip, userAgent: c.req.header('user-agent'), head: c.req.method === 'HEAD' };
}

/** A Location header value: the URL as recorded when it is plain ASCII, else its normalised (percent-encoded) form. */
export function locationOf(url: string): string {
  return /^[\x21-\x7e]+$/.test(url) ? url : new URL(url).href;
}

/** What the tracking routes use. */
export interface TrackingRouteOptions {
  core: Core;
  metrics?: ServiceMetrics | undefined;
  /** True once shutdown began: new requests get 503 with `Connection: close`. */
  shuttingDown: () => boolean;
}

/** Whether a request URL (absolute, as Hono's Request has it) is for the tracking app. */
export function isTrackingUrl(url: string): boolean {
  const path = url.indexOf('/', url.indexOf('//') + 2);
  return path >= 0 && (url.startsWith(OPEN_PATH, path) || url.startsWith(CLICK_PATH, path));
}

/** The tracking app: the pixel and the redirect (GET routes answer HEAD too), errors in the Nylas shape. */
export function createTrackingApp({ core, metrics, shuttingDown }: TrackingRouteOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { deps } = core;
  const { tracking } = core.deliverability;
  /** Times the answer into /metrics. */
  const timed = (c: Context<AppEnv>, route: string, status: number, started: number) =>
    metrics?.httpRequest(c.req.method, route, status, (performance.now() - started) / 1000);
  /** Gives an error answer (through onError below) a request id of its own. */
  const identify = (c: Context<AppEnv>) => {
    const requestId = randomUUID();
    c.set('requestId', requestId);
    c.set('logger', deps.logger);
    c.header('x-request-id', requestId);
  };
  /** Throws the error the route answers with, timed. */
  const refuse = (c: Context<AppEnv>, route: string, started: number, error: AppError): never => {
    identify(c);
    if (error.code === 'unavailable') c.header('connection', 'close');
    timed(c, route, error.code === 'unavailable' ? 503 : 404, started);
    throw error;
  };
  const closing = () => new AppError('unavailable', 'The service is shutting down; retry in a moment.');
  const unknown = () => new AppError('not_found', 'There is no such tracking URL.');
  const openRoute = `${OPEN_PATH}:token`;
  const clickRoute = `${CLICK_PATH}:token`;

  const pixel = (c: Context<AppEnv>, found: boolean, started: number): Response => {
    if (!found) return refuse(c, openRoute, started, unknown());
    timed(c, openRoute, 200, started);
    return c.body(new Uint8Array(PIXEL_GIF), 200, PIXEL_HEADERS);
  };
  const redirect = (c: Context<AppEnv>, url: string | undefined, started: number): Response => {
    if (url === undefined) return refuse(c, clickRoute, started, unknown());
    timed(c, clickRoute, 302, started);
    return c.body(null, 302, { location: locationOf(url), 'cache-control': NO_STORE });
  };
  // Not async: when the key and the message are at hand the answer is made at once, without a promise.
  app.get(openRoute, (c): Response | Promise<Response> => {
    const started = performance.now();
    if (shuttingDown()) return refuse(c, openRoute, started, closing());
    const found = tracking.open(c.req.param('token'), sourceOf(c));
    return found instanceof Promise ? found.then((value) => pixel(c, value, started)) : pixel(c, found, started);
  });
  app.get(clickRoute, (c): Response | Promise<Response> => {
    const started = performance.now();
    if (shuttingDown()) return refuse(c, clickRoute, started, closing());
    const target = tracking.click(c.req.param('token'), sourceOf(c));
    return target instanceof Promise
      ? target.then((value) => redirect(c, value, started))
      : redirect(c, target, started);
  });
  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) => {
    identify(c);
    return errorResponse(c, new AppError('not_found', 'There is no such tracking URL.'));
  });
  return app;
}

/**
 * The tracking URLs answered straight from Node's `request` event, before the request becomes a fetch `Request`
 * for Hono: for a campaign's hot path that conversion, the router and a response written in two chunks were most of
 * the cost (issue 18's benchmark). The same service calls, the same answers and the same `/metrics` timing as
 * {@link createTrackingApp}, which still serves anything this declines (returns false): other methods and paths,
 * and requests once shutdown began. Errors are the Nylas 404 shape.
 */
export function createTrackingListener({
  core,
  metrics,
  shuttingDown,
}: TrackingRouteOptions): (request: IncomingMessage, response: ServerResponse) => boolean {
  const { tracking } = core.deliverability;
  const openRoute = `${OPEN_PATH}:token`;
  const clickRoute = `${CLICK_PATH}:token`;
  const notFound = (response: ServerResponse, method: string, route: string, started: number) => {
    const requestId = randomUUID();
    const body = JSON.stringify({
      request_id: requestId,
      error: { type: 'not_found_error', message: 'There is no such tracking URL.' },
    });
    metrics?.httpRequest(method, route, 404, (performance.now() - started) / 1000);
    response.writeHead(404, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'x-request-id': requestId,
    });
    response.end(body);
  };
  const pixel = (response: ServerResponse, method: string, found: boolean, started: number) => {
    if (!found) return notFound(response, method, openRoute, started);
    metrics?.httpRequest(method, openRoute, 200, (performance.now() - started) / 1000);
    response.writeHead(200, PIXEL_HEADERS);
    response.end(PIXEL_GIF_LATIN1, 'latin1');
  };
  const redirect = (response: ServerResponse, method: string, url: string | undefined, started: number) => {
    if (url === undefined) return notFound(response, method, clickRoute, started);
    metrics?.httpRequest(method, clickRoute, 302, (performance.now() - started) / 1000);
    response.writeHead(302, { location: locationOf(url), 'cache-control': NO_STORE, 'content-length': '0' });
    response.end();
  };
  const failed = (response: ServerResponse, error: unknown) => {
    core.deps.logger.error('tracking request failed', {
      error: error instanceof Error ? error.message : String(error),
    });
    if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({ request_id: randomUUID(), error: { type: 'unexpected_error', message: 'Internal error.' } }),
    );
  };
  return (request, response) => {
    const method = request.method;
    const url = request.url;
    if ((method !== 'GET' && method !== 'HEAD') || url === undefined || shuttingDown()) return false;
    const open = url.startsWith(OPEN_PATH);
    if (!open && !url.startsWith(CLICK_PATH)) return false;
    const started = performance.now();
    const end = url.indexOf('?');
    const token = url.slice((open ? OPEN_PATH : CLICK_PATH).length, end < 0 ? undefined : end);
    // One plain path segment, as Hono's `:token` matches (tokens are base64url and a dot); anything else goes there.
    if (token === '' || token.includes('/') || token.includes('%')) return false;
    const userAgent = request.headers['user-agent'];
    const source: HitSource = { ip: request.socket.remoteAddress, userAgent, head: method === 'HEAD' };
    if (open) {
      const found = tracking.open(token, source);
      if (found instanceof Promise)
        found.then(
          (value) => pixel(response, method, value, started),
          (error: unknown) => failed(response, error),
        );
      else pixel(response, method, found, started);
    } else {
      const target = tracking.click(token, source);
      if (target instanceof Promise)
        target.then(
          (value) => redirect(response, method, value, started),
          (error: unknown) => failed(response, error),
        );
      else redirect(response, method, target, started);
    }
    return true;
  };
}
