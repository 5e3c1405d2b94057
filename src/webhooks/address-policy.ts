/**
 * @module webhooks/address-policy
 * Which endpoints the service may call (SSRF protection). A webhook URL must be `https` and every address its
 * host resolves to must be public, unless the operator sets `AGENTPOST_ALLOW_PRIVATE_WEBHOOKS=true` (then
 * `http` and private, loopback and link-local addresses are accepted too). The check runs on the resolved
 * addresses, and the request then connects to the checked address only, so a name that re-resolves to an
 * internal address between check and connect (DNS rebinding) gets nowhere.
 */
import { BlockList, isIP } from 'node:net';
import type { DnsResolver } from '../deps.js';
import { AppError } from '../errors.js';

/**
 * Ranges that are not the public internet (IANA special-purpose registries): "this network", private, carrier
 * NAT, loopback, link-local (169.254/16 holds cloud metadata services), protocol assignments, documentation,
 * benchmarking, multicast, reserved and broadcast.
 */
const NON_PUBLIC_IPV4: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/**
 * IPv6 ranges that are not public: unspecified, loopback, IPv4-compatible, discard, Teredo and other protocol
 * assignments, documentation, 6to4 (embeds arbitrary IPv4), unique-local, link-local, site-local, multicast.
 * IPv4-mapped and NAT64 addresses are judged by the IPv4 address they carry.
 */
const NON_PUBLIC_IPV6: [string, number][] = [
  ['::', 96],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

const nonPublic = new BlockList();
for (const [network, prefix] of NON_PUBLIC_IPV4) nonPublic.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of NON_PUBLIC_IPV6) nonPublic.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (with `::` expanded and a trailing dotted quad converted). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.split('%')[0] ?? '';
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const bytes = quad[1]!.split('.').map(Number);
    text = `${text.slice(0, quad.index)}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right].map((group) => parseInt(group, 16));
  return groups.length === 8 && groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : undefined;
}

/** The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address. */
function embeddedIpv4(groups: number[]): string | undefined {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((group) => group === 0);
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6);
  if (!mapped && !nat64) return undefined;
  const high = groups[6]!;
  const low = groups[7]!;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** True when `address` (an IP literal) is on the public internet; false for private, loopback, link-local etc. */
export function isPublicAddress(address: string): boolean {
  const version = isIP(address.split('%')[0] ?? '');
  if (version === 4) return !nonPublic.check(address, 'ipv4');
  if (version !== 6) return false;
  const groups = ipv6Groups(address);
  if (!groups) return false;
  const inner = embeddedIpv4(groups);
  if (inner !== undefined) return isPublicAddress(inner);
  return !nonPublic.check(address.split('%')[0]!, 'ipv6');
}

/** A URL that passed the policy, with the address to connect to. */
export interface CheckedTarget {
  url: URL;
  address: { address: string; family: 4 | 6 };
}

/** Options of {@link checkWebhookTarget}. */
export interface TargetPolicy {
  dns: DnsResolver;
  /** `AGENTPOST_ALLOW_PRIVATE_WEBHOOKS`: accept `http` and non-public addresses. */
  allowPrivate: boolean;
  /** Field named in error messages. */
  field?: string;
}

const ALLOW_HINT = 'set AGENTPOST_ALLOW_PRIVATE_WEBHOOKS=true on the service to allow it (development only)';

/**
 * Parses and checks a webhook URL and resolves its host. Throws an `invalid_request` AppError naming the field
 * and saying what to change when the URL may not be called.
 */
export async function checkWebhookTarget(raw: string, { dns, allowPrivate, field = 'webhook_url' }: TargetPolicy): Promise<CheckedTarget> {
  const refuse = (message: string) => new AppError('invalid_request', `${field}: ${message}`, { field });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not a valid URL; send an absolute https:// URL such as https://example.com/webhooks.');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse(`the scheme ${url.protocol} is not supported; use https://.`);
  if (url.protocol === 'http:' && !allowPrivate) throw refuse(`webhooks are delivered over https only; use an https:// URL (or ${ALLOW_HINT}).`);
  if (url.username !== '' || url.password !== '') throw refuse('must not contain a user name or password; authenticate deliveries with the webhook signature instead.');

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
    const blocked = addresses.find((entry) => !isPublicAddress(entry.address));
    if (blocked) {
      const via = literal === 0 ? `${hostname} resolves to ${blocked.address}, which` : `${blocked.address}`;
      throw refuse(`${via} is a private, loopback, link-local or reserved address; webhooks are delivered to public addresses only (${ALLOW_HINT}).`);
    }
  }
  return { url, address: addresses[0]! };
}
