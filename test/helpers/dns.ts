/** A DNS resolver the test controls: records are set per host name; anything else is ENOTFOUND. */
import type { DnsResolver } from '../../src/index.js';

export interface FakeDns extends DnsResolver {
  txt: Map<string, string[][]>;
  mx: Map<string, { exchange: string; priority: number }[]>;
}

export function fakeDns(): FakeDns {
  const txt = new Map<string, string[][]>();
  const mx = new Map<string, { exchange: string; priority: number }[]>();
  const missing = (host: string) => Object.assign(new Error(`queryTxt ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return {
    txt,
    mx,
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
  };
}
