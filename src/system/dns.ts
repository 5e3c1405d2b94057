/**
 * @module system/dns
 * The real DNS resolver: `node:dns`, to the configured servers or the system's.
 */
import { lookup as dnsLookup, Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { DnsResolver } from '../ports/dns.js';

/** Options of {@link systemDns}. */
export interface SystemDnsOptions {
  /**
   * Resolvers to ask (`AGENTPOST_DNS_SERVERS`, in `setServers` form: `127.0.0.1:5353`, `[::1]:53`). Given, every
   * look-up goes to them, host addresses too (`lookup` asks them for A and AAAA instead of calling getaddrinfo, so
   * neither `/etc/hosts` nor `/etc/resolv.conf` is read; `localhost` names are loopback, RFC 6761). Empty: the system's.
   */
  servers?: readonly string[] | undefined;
  /** How long one query waits before it is tried again (twice in all), in ms; default c-ares' own (5 s, 4 tries). */
  timeoutMs?: number | undefined;
}

/** A `node:dns`-style error (`code` is one of its codes: `ENOTFOUND`, `ENODATA`, `ESERVFAIL`, `ETIMEOUT`, …). */
function dnsError(code: string, syscall: string, hostname: string): Error & { code: string } {
  return Object.assign(new Error(`${syscall} ${code} ${hostname}`), { code, syscall, hostname });
}

/**
 * The real resolver: DNS queries through `node:dns` (to `servers` when given, see {@link SystemDnsOptions}), `lookup`
 * through getaddrinfo unless servers are given.
 */
export function systemDns(options: SystemDnsOptions = {}): DnsResolver {
  const servers = options.servers ?? [];
  const resolver =
    options.timeoutMs !== undefined ? new Resolver({ timeout: options.timeoutMs, tries: 2 }) : new Resolver();
  if (servers.length > 0) resolver.setServers([...servers]);
  const systemLookup = async (hostname: string) =>
    (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
      address,
      family: family === 6 ? (6 as const) : (4 as const),
    }));
  /** A and AAAA from the configured resolvers; one kind missing is fine, both missing is ENOTFOUND. */
  const resolverLookup = async (hostname: string): Promise<{ address: string; family: 4 | 6 }[]> => {
    const literal = isIP(hostname);
    if (literal !== 0) return [{ address: hostname, family: literal === 6 ? 6 : 4 }];
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost'))
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
    const found = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    if (found.length > 0) return found;
    // Both failed: a temporary error (SERVFAIL, timeout) wins over "no such record", so callers retry instead of giving up.
    const codes = [v4, v6].map((outcome) =>
      outcome.status === 'rejected' ? String((outcome.reason as { code?: string })?.code ?? '') : 'ENODATA',
    );
    const trouble = codes.find((code) => code !== 'ENODATA' && code !== 'ENOTFOUND');
    throw dnsError(trouble ?? (codes.includes('ENOTFOUND') ? 'ENOTFOUND' : 'ENODATA'), 'queryA', hostname);
  };
  return {
    resolveTxt: (hostname) => resolver.resolveTxt(hostname),
    resolveMx: (hostname) => resolver.resolveMx(hostname),
    resolve: (hostname, rrtype) => resolver.resolve(hostname, rrtype) as Promise<unknown[]>,
    lookup: servers.length > 0 ? resolverLookup : systemLookup,
  };
}
