/**
 * @module ports/dns
 * The DNS resolver of the core (the real one: src/system/dns.ts).
 */

/**
 * Every DNS look-up the core makes (domain verification, MX delivery and the relay's address, the authentication and
 * DNSBL checks of received mail, webhook targets). `server/main.ts` builds it with `systemDns` (src/system/dns.ts) from
 * `AGENTPOST_DNS_SERVERS`; tests supply their own resolver.
 */
export interface DnsResolver {
  resolveTxt(hostname: string): Promise<string[][]>;
  resolveMx(hostname: string): Promise<{ exchange: string; priority: number }[]>;
  /**
   * The addresses a host name connects to, as the operating system resolves them (getaddrinfo: hosts file, then
   * DNS). Webhook delivery checks every one before connecting and then connects to the checked address only.
   */
  lookup(hostname: string): Promise<{ address: string; family: 4 | 6 }[]>;
  /**
   * Any record type, as `node:dns` `resolve(hostname, rrtype)` answers it (`A`/`AAAA`/`PTR`: strings, `TXT`: string
   * arrays, `MX`: exchange and priority). The mail authentication (SPF, DKIM, DMARC, ARC) and DNSBL look-ups use it;
   * absent, they fall back to the methods above (TXT, MX, and A/AAAA through `lookup`). Failures reject with the
   * `node:dns` codes (`ENOTFOUND`/`ENODATA`: no such record; anything else: a temporary error).
   */
  resolve?(hostname: string, rrtype: string): Promise<unknown[]>;
}
