/**
 * @module webhooks/address-policy
 * Which addresses the service may connect to on a user's behalf (SSRF protection): webhook endpoints and the
 * mail servers of direct MX delivery. Only public internet addresses are allowed; every block of the IANA
 * IPv4 and IPv6 special-purpose address registries is refused (private, loopback, link-local with the cloud
 * metadata service, carrier NAT, documentation, benchmarking, AS112, protocol assignments, multicast,
 * reserved), and so is all IPv6 space outside global unicast (2000::/3). Addresses that carry an IPv4 address
 * a host may route to (IPv4-mapped `::ffff:a.b.c.d`, well-known NAT64 `64:ff9b::a.b.c.d`) are judged by that
 * IPv4 address, in every textual form (`::ffff:7f00:1`, `0:0:0:0:0:ffff:7f00:1`, upper case, zone ids).
 *
 * `AGENTPOST_ALLOW_PRIVATE_NETWORKS=true` (alias `AGENTPOST_ALLOW_PRIVATE_WEBHOOKS`) lifts the policy for
 * tests and private networks (webhooks may then also use `http`). The check runs on the resolved addresses,
 * and the connection then goes to the checked address only, so a name that re-resolves to an internal address
 * between check and connect (DNS rebinding) gets nowhere.
 */
import { isIP } from 'node:net';
import type { DnsResolver } from '../ports/index.js';
import { AppError } from '../errors.js';

/** A block of addresses that is not a destination: network, prefix length, and what it is (shown in refusals). */
type SpecialBlock = readonly [network: string, prefix: number, why: string];

/**
 * The IANA IPv4 Special-Purpose Address Registry, every entry, plus multicast (its own registry). Some of these
 * are "globally reachable" in the registry (AS112, AMT, the PCP and TURN anycast addresses in 192.0.0.0/24), but
 * none is a webhook endpoint or a mail server, so all are refused. More specific blocks come first, so a refusal
 * names the narrowest.
 */
const SPECIAL_IPV4: readonly SpecialBlock[] = [
  ['0.0.0.0', 8, '"this network", RFC 791'],
  ['10.0.0.0', 8, 'private network, RFC 1918'],
  ['100.64.0.0', 10, 'carrier-grade NAT shared space, RFC 6598'],
  ['127.0.0.0', 8, 'loopback, RFC 1122'],
  ['169.254.0.0', 16, 'link-local, cloud metadata services, RFC 3927'],
  ['172.16.0.0', 12, 'private network, RFC 1918'],
  ['192.0.0.0', 24, 'IETF protocol assignments (DS-Lite, PCP and TURN anycast, NAT64 discovery), RFC 6890'],
  ['192.0.2.0', 24, 'documentation TEST-NET-1, RFC 5737'],
  ['192.31.196.0', 24, 'AS112 DNS sink, RFC 7535'],
  ['192.52.193.0', 24, 'AMT relay anycast, RFC 7450'],
  ['192.88.99.0', 24, 'deprecated 6to4 relay anycast, RFC 7526'],
  ['192.168.0.0', 16, 'private network, RFC 1918'],
  ['192.175.48.0', 24, 'AS112 direct delegation DNS sink, RFC 7534'],
  ['198.18.0.0', 15, 'benchmarking, RFC 2544'],
  ['198.51.100.0', 24, 'documentation TEST-NET-2, RFC 5737'],
  ['203.0.113.0', 24, 'documentation TEST-NET-3, RFC 5737'],
  ['224.0.0.0', 4, 'multicast, RFC 5771'],
  ['255.255.255.255', 32, 'limited broadcast, RFC 919'],
  ['240.0.0.0', 4, 'reserved, RFC 1112'],
];

/**
 * The IANA IPv6 Special-Purpose Address Registry, every entry but the two judged by their IPv4 address
 * (IPv4-mapped ::ffff:0:0/96 and well-known NAT64 64:ff9b::/96, see {@link embeddedIpv4}), plus the other
 * non-unicast blocks of the IPv6 address space. Anything outside 2000::/3 that is not listed is refused too
 * (unallocated); the entries outside it are here to name them in refusals.
 */
const SPECIAL_IPV6: readonly SpecialBlock[] = [
  ['::', 128, 'unspecified address, RFC 4291'],
  ['::1', 128, 'loopback, RFC 4291'],
  // Deprecated (RFC 4291 2.5.5.1); a stack may still route ::a.b.c.d to the IPv4 address.
  ['::', 96, 'IPv4-compatible address (deprecated), RFC 4291'],
  // SIIT's ::ffff:0:a.b.c.d (RFC 2765): not routed on the internet.
  ['::ffff:0:0:0', 96, 'IPv4-translated address, RFC 2765'],
  // Local-use NAT64 prefix: whatever it translates to is inside the operator's network.
  ['64:ff9b:1::', 48, 'local-use NAT64 translation, RFC 8215'],
  ['100::', 64, 'discard-only, RFC 6666'],
  ['100:0:0:1::', 64, 'dummy prefix, RFC 9780'],
  // Teredo and 6to4 embed an arbitrary IPv4 address and reach it through relays.
  ['2001::', 32, 'Teredo tunnelling, RFC 4380'],
  ['2001:2::', 48, 'benchmarking, RFC 5180'],
  ['2001:3::', 32, 'AMT, RFC 7450'],
  ['2001:4:112::', 48, 'AS112 DNS sink, RFC 7535'],
  ['2001:10::', 28, 'ORCHID (deprecated), RFC 4843'],
  ['2001:20::', 28, 'ORCHIDv2, RFC 7343'],
  ['2001:30::', 28, 'drone remote ID, RFC 9374'],
  ['2001::', 23, 'IETF protocol assignments (PCP, TURN and DNS-SD anycast among them), RFC 2928'],
  ['2001:db8::', 32, 'documentation, RFC 3849'],
  ['2002::', 16, '6to4, RFC 3056'],
  ['2620:4f:8000::', 48, 'AS112 direct delegation DNS sink, RFC 7534'],
  ['3fff::', 20, 'documentation, RFC 9637'],
  ['5f00::', 16, 'SRv6 SIDs, RFC 9602'],
  ['fc00::', 7, 'unique local, RFC 4193'],
  ['fe80::', 10, 'link-local, RFC 4291'],
  ['fec0::', 10, 'site-local (deprecated), RFC 3879'],
  ['ff00::', 8, 'multicast, RFC 4291'],
];

/** The four bytes of a dotted-quad IPv4 address (decimal, no leading zeros, as `net.isIP` accepts), or undefined. */
function ipv4Bytes(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^(0|[1-9]\d{0,2})$/.test(part))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : undefined;
}

/**
 * The sixteen bytes of an IPv6 address in any textual form: `::` anywhere once, upper or lower case, a trailing
 * dotted quad (`::ffff:127.0.0.1`), a zone id (`fe80::1%eth0`). Undefined when it is not one.
 */
function ipv6Bytes(text: string): number[] | undefined {
  let rest = text.toLowerCase();
  const lastColon = rest.lastIndexOf(':');
  if (lastColon < 0) return undefined;
  if (rest.includes('.', lastColon)) {
    const quad = ipv4Bytes(rest.slice(lastColon + 1));
    if (!quad) return undefined;
    rest = `${rest.slice(0, lastColon + 1)}${((quad[0]! << 8) | quad[1]!).toString(16)}:${((quad[2]! << 8) | quad[3]!).toString(16)}`;
  }
  const halves = rest.split('::');
  if (halves.length > 2) return undefined;
  const split = (half: string) => (half === '' ? [] : half.split(':'));
  const head = split(halves[0]!);
  const tail = halves.length === 2 ? split(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...Array<string>(missing).fill('0'), ...tail];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
  return groups.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

/** An IP literal as bytes (4 or 16), brackets and zone id removed; undefined for anything else. */
export function addressBytes(address: string): number[] | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  const text = bare.includes(':') ? bare.replace(/%.*$/, '') : bare;
  const version = isIP(text);
  if (version === 4) return ipv4Bytes(text);
  if (version === 6) return ipv6Bytes(text);
  return undefined;
}

/** A list of blocks with the networks already parsed. */
function parseBlocks(blocks: readonly SpecialBlock[]) {
  return blocks.map(([network, prefix, why]) => {
    const bytes = addressBytes(network);
    if (!bytes) throw new Error(`bad network in the address policy: ${network}`);
    return { bytes, prefix, why: `${network}/${prefix} ${why}` };
  });
}
const IPV4_BLOCKS = parseBlocks(SPECIAL_IPV4);
const IPV6_BLOCKS = parseBlocks(SPECIAL_IPV6);

/** Whether the first `prefix` bits of `bytes` equal those of `network`. */
function inPrefix(bytes: number[], network: number[], prefix: number): boolean {
  for (let bit = 0; bit < prefix; bit += 8) {
    const width = Math.min(8, prefix - bit);
    const mask = (0xff << (8 - width)) & 0xff;
    if (((bytes[bit / 8]! ^ network[bit / 8]!) & mask) !== 0) return false;
  }
  return true;
}

/**
 * The IPv4 address an IPv6 address stands for, when a host would route to it: IPv4-mapped
 * (`::ffff:a.b.c.d`, RFC 4291) and well-known NAT64 (`64:ff9b::a.b.c.d`, RFC 6052), whose translator reaches
 * that IPv4 address.
 */
function embeddedIpv4(bytes: number[]): number[] | undefined {
  const zero = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  const mapped = zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff;
  const nat64 = bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12);
  return mapped || nat64 ? bytes.slice(12) : undefined;
}

/**
 * Why `address` (an IP literal) is not a public internet address, e.g. `127.0.0.0/8 loopback, RFC 1122`, or
 * undefined when it is public. Anything that is not an IP literal is refused.
 */
export function nonPublicReason(address: string): string | undefined {
  const bytes = addressBytes(address);
  if (!bytes) return 'not an IP address';
  if (bytes.length === 4) return IPV4_BLOCKS.find((block) => inPrefix(bytes, block.bytes, block.prefix))?.why;
  const inner = embeddedIpv4(bytes);
  if (inner) {
    const why = IPV4_BLOCKS.find((block) => inPrefix(inner, block.bytes, block.prefix))?.why;
    return why === undefined ? undefined : `carries ${inner.join('.')}: ${why}`;
  }
  const special = IPV6_BLOCKS.find((block) => inPrefix(bytes, block.bytes, block.prefix));
  if (special) return special.why;
  // Global unicast is 2000::/3; the rest of the space is unallocated or reserved by IANA.
  return (bytes[0]! & 0xe0) === 0x20 ? undefined : 'outside global unicast 2000::/3, RFC 4291';
}

/** True when `address` (an IP literal) is on the public internet; false for private, loopback, link-local etc. */
export function isPublicAddress(address: string): boolean {
  return nonPublicReason(address) === undefined;
}

/** A URL that passed the policy, with the address to connect to. */
export interface CheckedTarget {
  url: URL;
  address: { address: string; family: 4 | 6 };
}

/** Options of {@link checkWebhookTarget}. */
export interface TargetPolicy {
  dns: DnsResolver;
  /** `AGENTPOST_ALLOW_PRIVATE_NETWORKS`: accept `http` and non-public addresses. */
  allowPrivate: boolean;
  /** Field named in error messages. */
  field?: string;
}

/** How an operator lifts the policy, quoted in every refusal. */
export const ALLOW_PRIVATE_HINT =
  'set AGENTPOST_ALLOW_PRIVATE_NETWORKS=true on the service to allow it (tests and private networks only)';

/**
 * Parses and checks a webhook URL and resolves its host. Throws an `invalid_request` AppError naming the field
 * and saying what to change when the URL may not be called.
 */
export async function checkWebhookTarget(
  raw: string,
  { dns, allowPrivate, field = 'webhook_url' }: TargetPolicy,
): Promise<CheckedTarget> {
  const refuse = (message: string) => new AppError('invalid_request', `${field}: ${message}`, { field });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not a valid URL; send an absolute https:// URL such as https://example.com/webhooks.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw refuse(`the scheme ${url.protocol} is not supported; use https://.`);
  if (url.protocol === 'http:' && !allowPrivate)
    throw refuse(`webhooks are delivered over https only; use an https:// URL (or ${ALLOW_PRIVATE_HINT}).`);
  if (url.username !== '' || url.password !== '')
    throw refuse(
      'must not contain a user name or password; authenticate deliveries with the webhook signature instead.',
    );

  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: { address: string; family: 4 | 6 }[];
  const literal = isIP(hostname);
  if (literal !== 0) {
    addresses = [{ address: hostname, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await dns.lookup(hostname);
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'lookup failed';
      throw refuse(`the host ${hostname} could not be resolved (${code}); check the URL.`);
    }
    if (addresses.length === 0) throw refuse(`the host ${hostname} has no address; check the URL.`);
  }
  if (!allowPrivate) {
    for (const entry of addresses) {
      const why = nonPublicReason(entry.address);
      if (why === undefined) continue;
      const via = literal === 0 ? `${hostname} resolves to ${entry.address}, which` : `${entry.address}`;
      throw refuse(
        `${via} is a private, loopback, link-local or reserved address (${why}); webhooks are delivered to public addresses only (${ALLOW_PRIVATE_HINT}).`,
      );
    }
  }
  return { url, address: addresses[0]! };
}
