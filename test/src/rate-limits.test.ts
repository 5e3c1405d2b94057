import { describe, expect, it } from 'vitest';
import { TokenBuckets } from '../../src/rate-limits.js';

describe('token buckets', () => {
  const clock = () => {
    let now = 0;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };

  it('allows a burst, refuses with the seconds until a token is back, and refills continuously up to the burst', () => {
    const time = clock();
    const buckets = new TokenBuckets(time.now);
    const budget = { perSecond: 2, burst: 4 };
    for (let index = 0; index < 4; index++) expect(buckets.take('a', budget)).toEqual({ allowed: true });
    expect(buckets.take('a', budget)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(buckets.take('b', budget)).toEqual({ allowed: true });
    time.advance(500);
    expect(buckets.take('a', budget)).toEqual({ allowed: true });
    expect(buckets.take('a', budget).allowed).toBe(false);
    time.advance(60_000);
    expect(buckets.peek('a', budget, 4)).toEqual({ allowed: true });
    expect(buckets.peek('a', budget, 5)).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it('rounds Retry-After up to whole seconds, at least 1', () => {
    const buckets = new TokenBuckets(clock().now);
    const slow = { perSecond: 20 / 60, burst: 20 };
    for (let index = 0; index < 20; index++) buckets.take('address', slow);
    expect(buckets.peek('address', slow)).toEqual({ allowed: false, retryAfterSeconds: 3 });
    expect(buckets.take('batch', { perSecond: 10, burst: 10 }, 11)).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it('peeks without taking, and a rate of 0 turns the limit off', () => {
    const buckets = new TokenBuckets(clock().now);
    for (let index = 0; index < 10; index++) expect(buckets.peek('a', { perSecond: 1, burst: 1 }).allowed).toBe(true);
    for (let index = 0; index < 1000; index++) expect(buckets.take('a', { perSecond: 0, burst: 0 }).allowed).toBe(true);
    expect(buckets.size).toBe(0);
  });

  it('forgets buckets that have filled up again', () => {
    const time = clock();
    const buckets = new TokenBuckets(time.now);
    for (let index = 0; index < 1000; index++) buckets.take(`key-${index}`, { perSecond: 10, burst: 10 });
    expect(buckets.size).toBe(1000);
    time.advance(11_000);
    buckets.take('fresh', { perSecond: 10, burst: 10 });
    expect(buckets.size).toBe(1);
  });
});
