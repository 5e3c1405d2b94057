/**
 * The dashboard's cookies and checks: the session cookie (HttpOnly, SameSite=Strict, Secure when the service is
 * reached over HTTPS), the sign-in form's own CSRF cookie, the one-line notice carried across a redirect, the headers
 * of every answer (a strict Content-Security-Policy) and the comparison of CSRF tokens.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { CookieOptions } from 'hono/utils/cookie';
import type { Config } from '../../src/index.js';

/** The session cookie: the session id, whose SHA-256 is the stored row's key. */
export const SESSION_COOKIE = 'agentpost_session';
/** The sign-in form's CSRF token (there is no session yet to derive it from): double-submitted. */
export const SIGN_IN_COOKIE = 'agentpost_sign_in';
/** The viewer's time zone, written by the dashboard's script (server/dashboard/assets.ts); not a secret. */
export const TIME_ZONE_COOKIE = 'agentpost_time_zone';
/** A one-line notice shown once by the next page (after a POST's redirect). */
const NOTICE_COOKIE = 'agentpost_notice';

/**
 * Scripts, styles and images only from the service itself (images also as data: URIs), no plugins, forms only to the
 * service, and never inside another site's frame.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The policy of a document answered for one of the dashboard's sandboxed frames (a message body): the document's own
 * `csp`, the sandbox again (so the document opened alone is sandboxed too), and framable only by the dashboard.
 */
export function framePolicy(csp: string): string {
  return `${csp}; sandbox; frame-ancestors 'self'`;
}

/** Headers of every dashboard answer but a frame's document ({@link framePolicy}). */
export function securityHeaders(c: Context): void {
  c.header('content-security-policy', CONTENT_SECURITY_POLICY);
  c.header('x-content-type-options', 'nosniff');
  c.header('x-frame-options', 'DENY');
  c.header('referrer-policy', 'same-origin');
}

/**
 * Whether the browser reached the service over HTTPS: the request itself, or a public URL configured as https (a
 * TLS proxy in front). No forwarding header is read: the service trusts none (server/middleware/rate-limit.ts).
 */
function overHttps(c: Context, config: Config): boolean {
  return c.req.url.startsWith('https:') || (config.publicUrlSet && config.publicUrl.startsWith('https:'));
}

function cookieOptions(c: Context, config: Config, base: string, maxAge?: number): CookieOptions {
  return {
    path: base,
    httpOnly: true,
    sameSite: 'Strict',
    secure: overHttps(c, config),
    ...(maxAge !== undefined ? { maxAge } : {}),
  };
}

/** Sets the session cookie, for as long as the session lasts. */
export function setSessionCookie(c: Context, config: Config, base: string, id: string, seconds: number): void {
  setCookie(c, SESSION_COOKIE, id, cookieOptions(c, config, base, seconds));
}

/** Removes the session cookie. */
export function clearSessionCookie(c: Context, config: Config, base: string): void {
  deleteCookie(c, SESSION_COOKIE, cookieOptions(c, config, base));
}

/** Sets the sign-in form's CSRF cookie (ten minutes to sign in). */
export function setSignInCookie(c: Context, config: Config, base: string, token: string): void {
  setCookie(c, SIGN_IN_COOKIE, token, cookieOptions(c, config, `${base}/sign-in`, 600));
}

/** Removes the sign-in form's CSRF cookie. */
export function clearSignInCookie(c: Context, config: Config, base: string): void {
  deleteCookie(c, SIGN_IN_COOKIE, cookieOptions(c, config, `${base}/sign-in`));
}

/** Keeps a notice for the next page (one minute). */
export function setNotice(c: Context, config: Config, base: string, notice: string): void {
  setCookie(c, NOTICE_COOKIE, encodeURIComponent(notice.slice(0, 300)), cookieOptions(c, config, base, 60));
}

/** Takes the notice kept for this page, if any (and removes it). */
export function takeNotice(c: Context, config: Config, base: string): string | undefined {
  const kept = getCookie(c, NOTICE_COOKIE);
  if (kept === undefined) return undefined;
  deleteCookie(c, NOTICE_COOKIE, cookieOptions(c, config, base));
  try {
    return decodeURIComponent(kept).slice(0, 300);
  } catch {
    return undefined;
  }
}

/** Compares a form's CSRF token with the expected one in constant time. */
export function sameToken(given: string | undefined, expected: string | undefined): boolean {
  if (!given || !expected) return false;
  const left = Buffer.from(given);
  const right = Buffer.from(expected);
  return left.length === right.length && timingSafeEqual(left, right);
}
