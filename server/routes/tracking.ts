/**
 * The tracking URLs, outside `/v3` and without authentication (mail readers load them):
 * - `GET|HEAD /t/o/{token}`: the 1×1 transparent GIF of a tracked message with opens on.
 * - `GET|HEAD /t/l/{token}`: a 302 to the URL recorded at send time for that link, never to anything the request
 *   carries (the query string is ignored).
 * A token that is forged, altered, truncated or of the other kind, or whose message is unknown (or its grant
 * deleted), is a 404 in the Nylas error shape. The work is `core.tracking`; hits are recorded after the answer.
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, Hono } from 'hono';
import { AppError, CLICK_PATH, OPEN_PATH, type HitSource } from '../../src/index.js';
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

const notFound = () => new AppError('not_found', 'There is no such tracking URL.');

/** Mounts the tracking routes on the root app (GET routes answer HEAD too). */
export function mountTracking(app: Hono<AppEnv>): void {
  app.get(`${OPEN_PATH}:token`, async (c) => {
    const found = c.get('core').tracking.open(c.req.param('token'), sourceOf(c));
    if (!(found instanceof Promise ? await found : found)) throw notFound();
    return c.body(new Uint8Array(PIXEL_GIF), 200, PIXEL_HEADERS);
  });
  app.get(`${CLICK_PATH}:token`, async (c) => {
    const target = c.get('core').tracking.click(c.req.param('token'), sourceOf(c));
    const url = target instanceof Promise ? await target : target;
    if (url === undefined) throw notFound();
    return c.body(null, 302, { location: locationOf(url), 'cache-control': NO_STORE });
  });
}
