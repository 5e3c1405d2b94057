/**
 * @module rate-limits
 * In-memory token buckets, one per key (an application, a grant, a client address). Each process keeps its own:
 * the limits are per process. Time comes from the caller (a monotonic millisecond source), so tests control it.
 */

import { isIP } from 'node:net';

/** A budget: up to `burst` requests at once, refilled at `perSecond`. A `perSecond` of 0 turns it off. */
export interface RateBudget {
  perSecond: number;
  burst: number;
}

/** The answer of {@link TokenBuckets.take}: allowed, or refused with the seconds until a token is back. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  /** The monotonic time `tokens` was counted at. */
  at: number;
  /** Seconds for this bucket to fill up again: then it is the same as no bucket, and is dropped. */
  fullAfter: number;
}

/**
 * Buckets kept at most. Keys come from requests (grant ids, addresses), so the map is bounded: full buckets are
 * swept out, and past this size the oldest go first (a forgotten bucket only forgives its key early).
 */
const MAX_BUCKETS = 100_000;
/** How often full buckets are swept out, in milliseconds. */
const SWEEP_EVERY_MS = 10_000;

/** Token buckets keyed by string; `now()` is a monotonic time in milliseconds. */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep: number;

  constructor(private readonly now: () => number) {
    this.lastSweep = now();
  }

  /** Whether `key` has `cost` tokens, without taking them (a key never seen has a full bucket). */
  peek(key: string, budget: RateBudget, cost = 1): RateDecision {
    if (budget.perSecond <= 0) return { allowed: true };
    const bucket = this.buckets.get(key);
    return this.decide(bucket ? this.refill(bucket, budget, this.now()) : budget.burst, budget, cost);
  }

  /** Takes `cost` tokens for `key` if it has them. */
  take(key: string, budget: RateBudget, cost = 1): RateDecision {
    if (budget.perSecond <= 0) return { allowed: true };
    const now = this.now();
    this.sweep(now);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: budget.burst, at: now, fullAfter: budget.burst / budget.perSecond };
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
      this.buckets.set(key, bucket);
    }
    const tokens = this.refill(bucket, budget, now);
    const decision = this.decide(tokens, budget, cost);
    if (decision.allowed) {
      bucket.tokens = tokens - cost;
      bucket.at = now;
    }
    return decision;
  }

  /** The number of buckets held (for tests of the sweep). */
  get size(): number {
    return this.buckets.size;
  }

  private decide(tokens: number, budget: RateBudget, cost: number): RateDecision {
    // Whole seconds, at least 1, as Retry-After takes them.
    return tokens >= cost
      ? { allowed: true }
      : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((cost - tokens) / budget.perSecond)) };
  }

  private refill(bucket: Bucket, budget: RateBudget, now: number): number {
    return Math.min(budget.burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * budget.perSecond);
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    for (const [key, bucket] of this.buckets) {
      if ((now - bucket.at) / 1000 >= bucket.fullAfter) this.buckets.delete(key);
    }
  }
}

/** The key of a client address: IPv4 as it is (also when IPv4-mapped), IPv6 by its /64 (the block one host is given). */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIP(address) !== 6) return address;
  return `${expandIpv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, `::` expanded. */
function expandIpv6(address: string): string[] {
  const [head = '', tail] = address.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array.from({ length: missing }, () => '0'), ...right];
}

/**
 * The failed-authentication budget of client addresses, one for every face of a process (HTTP, `/mcp`, SMTP
 * submission): a client that fails too often on one is refused on all of them until its budget refills.
 */
export interface FailedAuthentications {
  /** Failed attempts a minute an address may make (0: no limit). */
  readonly perMinute: number;
  /** Whether the address may try now (its budget is not spent), without counting anything. */
  check(address: string | undefined): RateDecision;
  /** Counts one failed attempt against the address. */
  failed(address: string | undefined): void;
}

/** The budget of {@link FailedAuthentications}; `now` is a monotonic time in milliseconds. */
export function createFailedAuthentications(perMinute: number, now: () => number): FailedAuthentications {
  const budget: RateBudget = { perSecond: perMinute / 60, burst: perMinute };
  const buckets = new TokenBuckets(now);
  // No address (a request without a socket, in tests): one shared key.
  const keyOf = (address: string | undefined) => (address ? addressKey(address) : 'unknown');
  return {
    perMinute,
    check: (address) => buckets.peek(keyOf(address), budget),
    failed: (address) => void buckets.take(keyOf(address), budget),
  };
}
