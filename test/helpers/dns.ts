/** A DNS resolver the test controls: records are set per host name; anything else is ENOTFOUND. */
import type { DnsResolver } from '../../src/index.js';

export interface FakeDns extends DnsResolver {
  txt: Map<string, string[][]>;
  mx: Map<string, { exchange: string; priority: number }[]>;
  /** Addresses `lookup` returns per host name (IPv4 or IPv6 literals); `resolve(name, 'A' | 'AAAA')` answers them too. */
  hosts: Map<string, string[]>;
  /** Other record types `resolve` answers, keyed `TYPE name` (`PTR 7.113.0.203.in-addr.arpa`). */
  records: Map<string, unknown[]>;
  /** Names whose every query fails with SERVFAIL (a temporary error), to test what a DNS outage does. */
  failing: Set<string>;
  resolve(hostname: string, rrtype: string): Promise<unknown[]>;
}

export function fakeDns(): FakeDns {
  const txt = new Map<string, string[][]>();
  const mx = new Map<string, { exchange: string; priority: number }[]>();
  const hosts = new Map<string, string[]>();
  const records = new Map<string, unknown[]>();
  const failing = new Set<string>();
  const missing = (host: string, query = 'queryTxt') =>
    Object.assign(new Error(`${query} ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  const check = (host: string, query: string) => {
    if (failing.has(host.toLowerCase()))
      throw Object.assign(new Error(`${query} ESERVFAIL ${host}`), { code: 'ESERVFAIL' });
  };
  const resolveTxt = async (host: string) => {
    check(host, 'queryTxt');
    const found = txt.get(host.toLowerCase());
    if (!found) throw missing(host);
    return found;
  };
  const resolveMx = async (host: string) => {
    check(host, 'queryMx');
    const found = mx.get(host.toLowerCase());
    if (!found) throw missing(host, 'queryMx');
    return found;
  };
  return {
    txt,
    mx,
    hosts,
    records,
    failing,
    resolveTxt,
    resolveMx,
    async lookup(host) {
      const addresses = hosts.get(host.toLowerCase());
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
    },
    async resolve(host, rrtype) {
      const type = rrtype.toUpperCase();
      if (type === 'TXT') return resolveTxt(host);
      if (type === 'MX') return resolveMx(host);
      check(host, `query${type}`);
      if (type === 'A' || type === 'AAAA') {
        const addresses = (hosts.get(host.toLowerCase()) ?? []).filter(
          (address) => address.includes(':') === (type === 'AAAA'),
        );
        if (addresses.length === 0) throw missing(host, `query${type}`);
        return addresses;
      }
      const found = records.get(`${type} ${host.toLowerCase()}`);
      if (!found) throw missing(host, `query${type}`);
      return found;
    },
  };
}
