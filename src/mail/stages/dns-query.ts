/**
 * @module mail/stages/dns-query
 * One `resolve(name, rrtype)` over the injected {@link DnsResolver}, the form mailauth and the DNSBL look-ups ask
 * for. A resolver without the generic `resolve` still answers TXT and MX, and A/AAAA through `lookup`.
 */
import type { DnsResolver } from '../../ports/index.js';

/** Answers one DNS question; rejects with a `node:dns` error code (`ENOTFOUND`/`ENODATA`: no record). */
export type DnsQuery = (name: string, rrtype: string) => Promise<unknown[]>;

/** The error `node:dns` gives for a question it cannot ask, so callers treat it as a temporary failure. */
function notImplemented(name: string, rrtype: string): Error {
  return Object.assign(new Error(`query${rrtype} ENOTIMP ${name}`), { code: 'ENOTIMP' });
}

/** The generic query of `dns`: its own `resolve` when it has one, else the specific methods. */
export function dnsQuery(dns: DnsResolver): DnsQuery {
  if (dns.resolve) return dns.resolve.bind(dns);
  return async (name, rrtype) => {
    switch (rrtype.toUpperCase()) {
      case 'TXT':
        return dns.resolveTxt(name);
      case 'MX':
        return dns.resolveMx(name);
      case 'A':
      case 'AAAA': {
        const family = rrtype.toUpperCase() === 'A' ? 4 : 6;
        const addresses = (await dns.lookup(name))
          .filter((entry) => entry.family === family)
          .map((entry) => entry.address);
        if (addresses.length === 0)
          throw Object.assign(new Error(`query${rrtype} ENODATA ${name}`), { code: 'ENODATA' });
        return addresses;
      }
      default:
        throw notImplemented(name, rrtype);
    }
  };
}

/** Error codes that mean "there is no such record": an answer, kept like one. Anything else is temporary. */
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA']);
/** Questions kept at most (the cache is emptied when full). */
const CACHE_ENTRIES = 10_000;

/**
 * A query that keeps answers, and "no such record", for `ttlMs` (an age: performance.now(), not the clock); a
 * temporary failure is never kept, so the next message asks again. Questions asked while the same one is under way
 * share its answer. `ttlMs` 0 returns `query` itself.
 */
export function cachedDnsQuery(query: DnsQuery, ttlMs: number): DnsQuery {
  if (ttlMs <= 0) return query;
  const kept = new Map<string, { at: number; answer: Promise<unknown[]> }>();
  return (name, rrtype) => {
    const key = `${rrtype.toUpperCase()} ${name.toLowerCase()}`;
    const now = performance.now();
    const entry = kept.get(key);
    if (entry && now - entry.at < ttlMs) return entry.answer;
    if (kept.size >= CACHE_ENTRIES) kept.clear();
    const answer = query(name, rrtype);
    kept.set(key, { at: now, answer });
    answer.catch((error: unknown) => {
      const code = (error as { code?: unknown } | undefined)?.code;
      if (!(typeof code === 'string' && NO_RECORD.has(code)) && kept.get(key)?.answer === answer) kept.delete(key);
    });
    return answer;
  };
}
