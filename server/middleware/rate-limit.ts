/**
 * Rate limits of `/v3` and `/mcp`, after Nylas v3's published ones: 50 requests a second per application on
 * application-level routes, 200 a second per grant on grant routes, 10 multipart sends a second per grant, and (ours)
 * 20 failed authentications a minute per client address, after which that address gets 429 before its key is even
 * checked. Token buckets in memory, per process; every refusal is a 429 with `Retry-After` (seconds).
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import {
  addressKey,
  AppError,
  createFailedAuthentications,
  TokenBuckets,
  type Config,
  type FailedAuthentications,
  type RateBudget,
  type RateLimitDetails,
} from '../../src/index.js';
import type { AppEnv } from '../types.js';

/** What a request is counted against: its grant (as named in the request), or else its application. */
export interface RateTarget {
  grant?: string | undefined;
  /** A multipart send: counted against the grant's multipart-send budget. */
  multipartSend?: boolean;
  /** Tokens the request costs (a JSON-RPC batch costs one per message). */
  cost?: number;
}

/** The rate limiter of one app: its buckets and the checks middleware calls. */
export interface RateLimiter {
  /** Throws 429 when the client address has used up its failed authentications. */
  checkAddress(c: Context<AppEnv>): void;
  /** Counts a failed authentication against the client address. */
  failedAuthentication(c: Context<AppEnv>): void;
  /** Counts an authenticated request against its grant or application; throws 429 when over budget. */
  take(c: Context<AppEnv>, target: RateTarget): void;
}

export { addressKey };

/**
 * Creates the limiter. `now` is a monotonic time in milliseconds (tests pass their own). `failedAuth`: the
 * failed-authentication budget shared with the process's other faces (SMTP submission); by default one of its own.
 */
export function createRateLimiter(
  limits: Config['rateLimits'],
  now: () => number,
  failedAuth: FailedAuthentications = createFailedAuthentications(limits.failedAuthPerMinute, now),
): RateLimiter {
  const perSecond = (rate: number): RateBudget => ({ perSecond: rate, burst: rate });
  const budgets = {
    application: perSecond(limits.applicationPerSecond),
    grant: perSecond(limits.grantPerSecond),
    multipartSend: perSecond(limits.multipartSendPerSecond),
  };
  // One set of buckets per kind, so a flood of keys of one kind (addresses) cannot evict the buckets of another.
  const buckets = {
    application: new TokenBuckets(now),
    grant: new TokenBuckets(now),
    multipartSend: new TokenBuckets(now),
  };

  const refuse = (retryAfterSeconds: number, what: string) =>
    new AppError(
      'rate_limited',
      `Too many requests, please try again shortly: ${what}. Retry after ${retryAfterSeconds} s.`,
      { retryAfterSeconds } satisfies RateLimitDetails,
    );

  return {
    checkAddress(c) {
      const decision = failedAuth.check(remoteAddress(c));
      if (!decision.allowed)
        throw refuse(
          decision.retryAfterSeconds,
          `this address failed authentication more than ${failedAuth.perMinute} times a minute`,
        );
    },
    failedAuthentication(c) {
      failedAuth.failed(remoteAddress(c));
    },
    take(c, target) {
      const applicationId = c.get('principal').applicationId;
      const cost = target.cost ?? 1;
      if (target.grant !== undefined) {
        // A grant named by id and by address counts twice; telling them apart would cost a look-up per request.
        const key = `${applicationId}\n${target.grant.toLowerCase()}`;
        const [kind, rate, what] = target.multipartSend
          ? (['multipartSend', limits.multipartSendPerSecond, 'multipart sends'] as const)
          : (['grant', limits.grantPerSecond, 'requests'] as const);
        const decision = buckets[kind].take(key, budgets[kind], cost);
        if (!decision.allowed) throw refuse(decision.retryAfterSeconds, `a grant may make ${rate} ${what} a second`);
        return;
      }
      const decision = buckets.application.take(applicationId, budgets.application, cost);
      if (!decision.allowed)
        throw refuse(
          decision.retryAfterSeconds,
          `an application may make ${limits.applicationPerSecond} requests a second to application-level routes`,
        );
    },
  };
}

/** The peer of the TCP connection (a proxy in front counts as one client); undefined without a Node socket. */
function remoteAddress(c: Context<AppEnv>): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    // No Node socket (app.request in tests).
    return undefined;
  }
}

/** The grant a `/v3` path acts on: `/v3/grants/{grant}/<resource>…` (the grant routes themselves are application-level). */
export function grantOfPath(path: string): string | undefined {
  const segments = path.split('/');
  // ['', 'v3', 'grants', grant, resource, …]
  if (segments[1] !== 'v3' || segments[2] !== 'grants' || !segments[3] || !segments[4]) return undefined;
  try {
    return decodeURIComponent(segments[3]);
  } catch {
    return segments[3];
  }
}

/** Counts each authenticated `/v3` request against its grant or application. */
export function rateLimitV3(limiter: RateLimiter): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const grant = grantOfPath(c.req.path);
    const multipartSend =
      grant !== undefined &&
      c.req.method === 'POST' &&
      /\/messages\/send$/.test(c.req.path) &&
      /^multipart\/form-data\b/i.test(c.req.header('content-type') ?? '');
    limiter.take(c, { grant, multipartSend });
    await next();
  };
}

/**
 * The peer of the request's TCP connection as the access log records it (IPv4-mapped IPv6 as IPv4); undefined
 * without a Node socket. No forwarding header is read: none is trusted.
 */
export function peerAddress(c: Context<AppEnv>): string | undefined {
  const address = remoteAddress(c);
  return address ? (/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address) : undefined;
}
