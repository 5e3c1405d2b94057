/**
 * The tracking URLs, outside `/v3` and without authentication (mail readers load them):
 * - `GET|HEAD /t/o/{token}`: the 1×1 transparent GIF of a tracked message with opens on.
 * - `GET|HEAD /t/l/{token}`: a 302 to the URL recorded at send time for that link, never to anything the request
 *   carries (the query string is ignored).
 * A token that is forged, altered, truncated or of the other kind, or whose message is unknown (or its grant
 * deleted), is a 404 in the Nylas error shape. The work is `core.tracking`; hits are recorded after the answer.
 *
 * They are the hot path of a mail campaign, so they are an app of their own that `createApp` hands these paths to
 * before the API's router and middleware ({@link createTrackingApp}, {@link isTrackingUrl}): each route is the only
 * handler of its request (Hono then calls it directly, and answers at once when the token and the message are at
 * hand), there is no access-log line (every hit is an `engagement_events` row already) and a request id is made only
 * for an error answer. Requests are still timed into `/metrics`, and refused with 503 once shutdown began.
 */
import { randomUUID } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import { AppError, CLICK_PATH, OPEN_PATH, type Core, type HitSource } from '../../src/index.js';
import type { ServiceMetrics } from '../metrics.js';
import { errorResponse } from '../middleware/error-handler.js';
import type { AppEnv } from '../types.js';

/** A 1×1 transparent GIF (43 bytes). */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** Nothing on the way may keep an answer: each load is a hit. */
const NO_STORE = 'no-store, no-cache, must-revalidate, max-age=0';

const PIXEL_HEADERS = { 'content-type': 'image/gif', 'content-length': String(PIXEL_GIF.length), 'cache-control': NO_STORE } as const;

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
  const { tracking, deps } = core;
  /** Times the answer into /metrics. */
  const timed = (c: Context<AppEnv>, route: string, status: number, started: number) => metrics?.httpRequest(c.req.method, route, status, (performance.now() - started) / 1000);
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
    return target instanceof Promise ? target.then((value) => redirect(c, value, started)) : redirect(c, target, started);
  });
  app.onError((error, c) => errorResponse(c, error));
  app.notFound((c) => {
    identify(c);
    return errorResponse(c, new AppError('not_found', 'There is no such tracking URL.'));
  });
  return app;
}
