/**
 * @module outbound/routing
 * Where each recipient of an outbound message goes. Recipients on this service go through the inbound path (local
 * delivery); an unknown mailbox on a domain of ours fails at once. All others go over SMTP to
 * `AGENTPOST_SMTP_RELAY` or directly to the domain's MX hosts (falling back to its address records, RFC 5321 5.1).
 * Direct delivery connects only to public addresses (the address policy of src/webhooks/address-policy.ts, lifted
 * by `AGENTPOST_ALLOW_PRIVATE_NETWORKS`), to the checked address itself: a recipient whose mail servers are all on
 * private, loopback or reserved addresses fails for good, and nothing is connected to.
 */
import type { CoreDeps, SmtpTarget } from '../ports/index.js';
import type { InboundService } from '../mail/index.js';
import { isIP } from 'node:net';
import { relayTarget } from '../system/smtp-client.js';
import { ALLOW_PRIVATE_HINT, nonPublicReason } from '../webhooks/index.js';
import type { RoutedRecipient, Router } from './contracts.js';

/** MX hosts tried per attempt, and addresses per host. */
const MAX_MX_HOSTS = 5;
const MAX_ADDRESSES_PER_HOST = 2;

/** A route that cannot be used now (`permanent`: never). */
export class RouteError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly code: number,
  ) {
    super(message);
  }
}

/** How long the relay's looked-up address is used before it is looked up again. */
const RELAY_ADDRESS_TTL_MS = 60_000;

/** The domain of an address, lower-cased. */
export function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

function dnsCode(error: unknown): string {
  return String((error as { code?: string } | undefined)?.code ?? '');
}

/** Creates the router: recipients to local or remote, and remote domains to the SMTP targets to try. */
export function createRouter(
  deps: Pick<CoreDeps, 'config' | 'dns' | 'logger'>,
  inbound: Pick<InboundService, 'checkRecipient'>,
): Router {
  const { config, dns, logger } = deps;

  /** Routes recipients (lower-cased, once each): a mailbox here is local, an unknown one on our domains fails at once. */
  async function route(emails: string[]): Promise<RoutedRecipient[]> {
    const out: RoutedRecipient[] = [];
    const seen = new Set<string>();
    for (const raw of emails) {
      const email = raw.trim().toLowerCase();
      if (seen.has(email)) continue;
      seen.add(email);
      const domain = domainOf(email);
      const check = await inbound.checkRecipient(email);
      if (check.ok) out.push({ email, domain, route: 'local' });
      else if (check.reason === 'unknown')
        out.push({ email, domain, route: 'local', failed: { code: 550, response: `5.1.1 ${check.message}` } });
      else out.push({ email, domain, route: 'remote' });
    }
    return out;
  }

  /** The relay's address, looked up through the service's resolver, kept for {@link RELAY_ADDRESS_TTL_MS}. */
  let relayAddress: { address: string; until: number } | undefined;

  /**
   * The relay of `AGENTPOST_SMTP_RELAY`. A host name is resolved here, through the service's resolver like every other
   * look-up (AGENTPOST_DNS_SERVERS), and the connection goes to its address with the name kept for TLS.
   */
  async function relay(): Promise<SmtpTarget> {
    const target = relayTarget(config.smtpRelay!);
    if (isIP(target.host) !== 0) return target;
    const now = performance.now();
    if (!relayAddress || relayAddress.until <= now) {
      let addresses: { address: string }[];
      try {
        addresses = await dns.lookup(target.host);
      } catch (error) {
        throw new RouteError(
          `4.4.3 DNS lookup of the relay ${target.host} failed (${dnsCode(error) || String(error)})`,
          false,
          0,
        );
      }
      if (addresses.length === 0)
        throw new RouteError(`4.4.3 DNS lookup of the relay ${target.host} found no address`, false, 0);
      relayAddress = { address: addresses[0]!.address, until: now + RELAY_ADDRESS_TTL_MS };
    }
    return { ...target, host: relayAddress.address, servername: target.host };
  }

  /** Where mail for `domain` goes: the relay, or the domain's MX hosts by preference (their addresses, resolved here). */
  async function targetsFor(domain: string): Promise<SmtpTarget[]> {
    if (config.smtpRelay) return [await relay()];
    let hosts: string[];
    try {
      const records = await dns.resolveMx(domain);
      if (records.some((record) => record.exchange === '' || record.exchange === '.')) {
        throw new RouteError(`5.1.10 ${domain} accepts no mail (null MX, RFC 7505)`, true, 556);
      }
      hosts = [...records]
        .sort((a, b) => a.priority - b.priority)
        .map((record) => record.exchange.replace(/\.$/, '').toLowerCase());
      if (hosts.length === 0) hosts = [domain];
    } catch (error) {
      if (error instanceof RouteError) throw error;
      const code = dnsCode(error);
      // No MX record: the domain itself is the mail host (implicit MX, RFC 5321 5.1).
      if (code === 'ENODATA' || code === 'ENOTFOUND') hosts = [domain];
      else throw new RouteError(`4.4.3 DNS lookup of the MX of ${domain} failed (${code || String(error)})`, false, 0);
    }
    const targets: SmtpTarget[] = [];
    let missing = 0;
    /** A look-up failed for a reason other than "no such name" (a retry may find an address). */
    let lookupTrouble = false;
    let lastError = '';
    /** Addresses the address policy refused (`host → address (why)`): never connected to. */
    const refused: string[] = [];
    for (const host of hosts.slice(0, MAX_MX_HOSTS)) {
      let addresses: { address: string }[];
      try {
        addresses = await dns.lookup(host);
      } catch (error) {
        const code = dnsCode(error);
        if (code === 'ENOTFOUND' || code === 'ENODATA') missing++;
        else lookupTrouble = true;
        lastError = `${host}: ${code || String(error)}`;
        continue;
      }
      // Only public addresses (SSRF): a domain's MX must not point the service at its own network. The
      // connection then goes to the checked address itself (`host`), never to the name, so nothing re-resolves.
      const allowed: string[] = [];
      for (const { address } of addresses) {
        const why = config.allowPrivateNetworks ? undefined : nonPublicReason(address);
        if (why === undefined) allowed.push(address);
        else refused.push(`${host} → ${address} (${why})`);
      }
      for (const address of allowed.slice(0, MAX_ADDRESSES_PER_HOST)) {
        targets.push({
          host: address,
          port: config.smtpDeliveryPort,
          secure: false,
          servername: host,
          verifyTls: false,
        });
      }
    }
    if (refused.length > 0)
      logger.warn('mx addresses refused by the address policy', { domain, refused: refused.slice(0, 10) });
    if (targets.length === 0) {
      if (refused.length > 0 && !lookupTrouble) {
        // Every mail server that exists is on a private, loopback or reserved address: no retry changes that.
        throw new RouteError(
          `5.4.4 the mail servers of ${domain} have only non-public addresses, and mail is delivered to public addresses only: ${refused.slice(0, 3).join('; ')} (${ALLOW_PRIVATE_HINT})`.slice(
            0,
            1000,
          ),
          true,
          550,
        );
      }
      if (missing === Math.min(hosts.length, MAX_MX_HOSTS) && hosts.length === 1 && hosts[0] === domain) {
        throw new RouteError(`5.1.2 ${domain} has no mail server (no MX and no address record)`, true, 550);
      }
      throw new RouteError(
        `4.4.4 no address for the mail servers of ${domain} (${lastError || refused.join('; ')})`.slice(0, 1000),
        false,
        0,
      );
    }
    return targets;
  }

  return { route, targetsFor };
}
