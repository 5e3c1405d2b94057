/** A DNS resolver the test controls: records are set per host name; anything else is ENOTFOUND. */
import type { DnsResolver } from '../../src/index.js';

export interface FakeDns extends DnsResolver {
  txt: Map<string, string[][]>;
  mx: Map<string, { exchange: string; priority: number }[]>;
  /** Addresses `lookup` returns per host name (IPv4 or IPv6 literals). */
  hosts: Map<string, string[]>;
}

export function fakeDns(): FakeDns {
  const txt = new Map<string, string[][]>();
  const mx = new Map<string, { exchange: string; priority: number }[]>();
  const hosts = new Map<string, string[]>();
  const missing = (host: string) => Object.assign(new Error(`queryTxt ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return {
    txt,
    mx,
    hosts,
    async resolveTxt(host) {
      const records = txt.get(host.toLowerCase());
      if (!records) throw missing(host);
      return records;
    },
    async resolveMx(host) {
      const records = mx.get(host.toLowerCase());
      if (!records) throw missing(host);
      return records;
    },
    async lookup(host) {
      const addresses = hosts.get(host.toLowerCase());
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }));
    },
  };
}
