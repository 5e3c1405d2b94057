import { describe, expect, it } from 'vitest';
import { AppError, isPublicAddress, nonPublicReason } from '../../../src/index.js';
import { checkWebhookTarget } from '../../../src/webhooks/address-policy.js';
import { fakeDns } from '../../helpers/dns.js';

/**
 * Every block of the IANA special-purpose registries: an address inside (with the block the refusal names) and,
 * where the space around is public, its public neighbours on both sides.
 */
const SPECIAL_PURPOSE: [address: string, reason: string | null][] = [
  // IPv4
  ['0.0.0.0', '0.0.0.0/8 "this network"'],
  ['0.255.255.255', '0.0.0.0/8'],
  ['1.0.0.1', null],
  ['9.255.255.255', null],
  ['10.0.0.1', '10.0.0.0/8 private'],
  ['10.255.255.255', '10.0.0.0/8'],
  ['11.0.0.0', null],
  ['100.63.255.255', null],
  ['100.64.0.1', '100.64.0.0/10 carrier-grade NAT'],
  ['100.127.255.255', '100.64.0.0/10'],
  ['100.128.0.0', null],
  ['126.255.255.255', null],
  ['127.0.0.1', '127.0.0.0/8 loopback'],
  ['127.255.0.9', '127.0.0.0/8'],
  ['128.0.0.0', null],
  ['169.253.255.255', null],
  ['169.254.169.254', '169.254.0.0/16 link-local, cloud metadata'],
  ['169.255.0.0', null],
  ['172.15.255.255', null],
  ['172.16.5.4', '172.16.0.0/12 private'],
  ['172.31.255.255', '172.16.0.0/12'],
  ['172.32.0.1', null],
  ['191.255.255.255', null],
  ['192.0.0.0', '192.0.0.0/24 IETF protocol assignments'],
  ['192.0.0.9', '192.0.0.0/24'],
  ['192.0.0.170', '192.0.0.0/24'],
  ['192.0.0.255', '192.0.0.0/24'],
  ['192.0.1.0', null],
  ['192.0.2.10', '192.0.2.0/24 documentation'],
  ['192.0.3.0', null],
  ['192.31.195.255', null],
  ['192.31.196.1', '192.31.196.0/24 AS112'],
  ['192.31.197.0', null],
  ['192.52.192.255', null],
  ['192.52.193.1', '192.52.193.0/24 AMT'],
  ['192.52.194.0', null],
  ['192.88.98.255', null],
  ['192.88.99.1', '192.88.99.0/24 deprecated 6to4'],
  ['192.88.100.0', null],
  ['192.167.255.255', null],
  ['192.168.1.1', '192.168.0.0/16 private'],
  ['192.169.0.0', null],
  ['192.175.47.255', null],
  ['192.175.48.1', '192.175.48.0/24 AS112'],
  ['192.175.49.0', null],
  ['198.17.255.255', null],
  ['198.18.0.0', '198.18.0.0/15 benchmarking'],
  ['198.19.255.255', '198.18.0.0/15'],
  ['198.20.0.0', null],
  ['198.51.99.255', null],
  ['198.51.100.1', '198.51.100.0/24 documentation'],
  ['198.51.101.0', null],
  ['203.0.112.255', null],
  ['203.0.113.1', '203.0.113.0/24 documentation'],
  ['203.0.114.0', null],
  ['223.255.255.255', null],
  ['224.0.0.1', '224.0.0.0/4 multicast'],
  ['239.255.255.255', '224.0.0.0/4'],
  ['240.0.0.1', '240.0.0.0/4 reserved'],
  ['255.255.255.254', '240.0.0.0/4'],
  ['255.255.255.255', '255.255.255.255/32 limited broadcast'],
  ['8.8.8.8', null],
  ['93.184.216.34', null],
  // IPv6
  ['::', '::/128 unspecified'],
  ['::1', '::1/128 loopback'],
  ['::2', '::/96 IPv4-compatible'],
  ['::8.8.8.8', '::/96 IPv4-compatible'],
  ['::127.0.0.1', '::/96 IPv4-compatible'],
  ['::1:0:0', 'outside global unicast'],
  ['::ffff:0:8.8.8.8', '::ffff:0:0:0/96 IPv4-translated'],
  ['::ffff:0:808:808', '::ffff:0:0:0/96'],
  ['64:ff9b:1::808:808', '64:ff9b:1::/48 local-use NAT64'],
  ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:1::/48'],
  ['64:ff9b:0:0:1::808:808', 'outside global unicast'],
  ['100::1', '100::/64 discard-only'],
  ['100:0:0:1::1', '100:0:0:1::/64 dummy prefix'],
  ['2001::1', '2001::/32 Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/32 Teredo'],
  ['2001:1::1', '2001::/23 IETF protocol assignments'],
  ['2001:1::2', '2001::/23'],
  ['2001:2::1', '2001:2::/48 benchmarking'],
  ['2001:3::1', '2001:3::/32 AMT'],
  ['2001:4:112::1', '2001:4:112::/48 AS112'],
  ['2001:10::1', '2001:10::/28 ORCHID'],
  ['2001:1f:ffff::1', '2001:10::/28'],
  ['2001:20::1', '2001:20::/28 ORCHIDv2'],
  ['2001:2f:ffff::1', '2001:20::/28 ORCHIDv2'],
  ['2001:30::1', '2001:30::/28 drone remote ID'],
  ['2001:1ff:ffff::1', '2001::/23'],
  ['2001:200::1', null],
  ['2001:4860:4860::8888', null],
  ['2001:db7:ffff::1', null],
  ['2001:db8::1', '2001:db8::/32 documentation'],
  ['2001:db9::1', null],
  ['2002::1', '2002::/16 6to4'],
  ['2002:7f00:1::1', '2002::/16'],
  ['2003::1', null],
  ['2620:4f:7fff:ffff::1', null],
  ['2620:4f:8000::1', '2620:4f:8000::/48 AS112'],
  ['2620:4f:8001::1', null],
  ['3ffe:ffff::1', null],
  ['3fff::1', '3fff::/20 documentation'],
  ['3fff:fff:ffff::1', '3fff::/20'],
  ['3fff:1000::1', null],
  ['5f00::1', '5f00::/16 SRv6'],
  ['fc00::1', 'fc00::/7 unique local'],
  ['fd12:3456::1', 'fc00::/7'],
  ['fe80::1', 'fe80::/10 link-local'],
  ['fec0::1', 'fec0::/10 site-local'],
  ['ff02::1', 'ff00::/8 multicast'],
  ['1fff:ffff::1', 'outside global unicast'],
  ['2000::1', null],
  ['3fff:ffff::1', null],
  ['4000::1', 'outside global unicast'],
  ['2606:4700:4700::1111', null],
];

describe('nonPublicReason: every special-purpose block and its public neighbours', () => {
  it.each(SPECIAL_PURPOSE)('%s → %s', (address, reason) => {
    if (reason === null) {
      expect(nonPublicReason(address)).toBeUndefined();
      expect(isPublicAddress(address)).toBe(true);
    } else {
      expect(nonPublicReason(address)).toContain(reason);
      expect(isPublicAddress(address)).toBe(false);
    }
  });
});

describe('isPublicAddress: textual forms', () => {
  it.each([
    // IPv4-mapped: judged by the IPv4 address, however it is written.
    ['::ffff:127.0.0.1', false],
    ['::FFFF:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::FFFF:7F00:1', false],
    ['0:0:0:0:0:ffff:7f00:1', false],
    ['0000:0000:0000:0000:0000:FFFF:7F00:0001', false],
    ['0:0:0:0:0:ffff:127.0.0.1', false],
    ['[::ffff:7f00:1]', false],
    ['::ffff:169.254.169.254', false],
    ['::ffff:a9fe:a9fe', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:0.0.0.0', false],
    ['::ffff:8.8.8.8', true],
    ['::ffff:808:808', true],
    ['0:0:0:0:0:FFFF:0808:0808', true],
    // Well-known NAT64: judged by the IPv4 address it translates to.
    ['64:ff9b::10.0.0.1', false],
    ['64:ff9b::7f00:1', false],
    ['64:FF9B::127.0.0.1', false],
    ['64:ff9b::a9fe:a9fe', false],
    ['64:ff9b::8.8.8.8', true],
    ['64:ff9b::808:808', true],
    ['64:FF9B:0:0:0:0:808:808', true],
    // Zone ids, brackets and case.
    ['fe80::1%eth0', false],
    ['fe80::1%25eth0', false],
    ['FE80::1', false],
    ['[::1]', false],
    ['::1%lo', false],
    ['FD00::1', false],
    ['2606:4700:4700::1111%eth0', true],
    ['2606:4700:4700:0:0:0:0:1111', true],
    ['[2606:4700:4700::1111]', true],
    // Not IP literals (or malformed): never public.
    ['', false],
    ['not an address', false],
    ['localhost', false],
    ['example.com', false],
    ['1.2.3', false],
    ['0127.0.0.1', false],
    ['0x7f.0.0.1', false],
    ['256.1.1.1', false],
    ['1::2::3', false],
    ['12345::1', false],
    ['::ffff:1.2.3.256', false],
    ['1:2:3:4:5:6:7:8:9', false],
    ['8.8.8.8%eth0', false],
  ])('%s → public %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('checkWebhookTarget', () => {
  const dns = fakeDns();
  dns.hosts.set('rebind.example.com', ['127.0.0.1']);
  dns.hosts.set('mixed.example.com', ['93.184.216.34', '10.1.2.3']);
  dns.hosts.set('public.example.com', ['93.184.216.34']);

  const refusal = async (url: string, allowPrivate = false) => {
    const error = await checkWebhookTarget(url, { dns, allowPrivate }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('invalid_request');
    return (error as AppError).message;
  };

  it('refuses http, private literals and names resolving to private addresses unless allowed', async () => {
    expect(await refusal('http://169.254.169.254/')).toContain('https only');
    expect(await refusal('https://169.254.169.254/latest/meta-data')).toContain(
      '169.254.169.254 is a private, loopback, link-local or reserved address (169.254.0.0/16 link-local',
    );
    expect(await refusal('https://10.0.0.1/')).toContain('10.0.0.1');
    expect(await refusal('https://[::1]:8443/')).toContain('::1');
    expect(await refusal('https://rebind.example.com/hook')).toContain('rebind.example.com resolves to 127.0.0.1');
    // One private answer among public ones is enough to refuse.
    expect(await refusal('https://mixed.example.com/')).toContain('10.1.2.3');
    expect(await refusal('https://unknown.example.com/')).toContain('could not be resolved');
    expect(await refusal('ftp://example.com/')).toContain('not supported');
    expect(await refusal('not a url')).toContain('not a valid URL');
    expect(await refusal('https://user:pass@public.example.com/')).toContain('user name or password');
    expect(await refusal('https://rebind.example.com/')).toContain('AGENTPOST_ALLOW_PRIVATE_NETWORKS=true');
  });

  it('accepts public targets and pins the checked address; private ones only with the allow setting', async () => {
    const target = await checkWebhookTarget('https://public.example.com/hook?x=1', { dns, allowPrivate: false });
    expect(target.address).toEqual({ address: '93.184.216.34', family: 4 });
    expect(target.url.href).toBe('https://public.example.com/hook?x=1');
    const local = await checkWebhookTarget('http://rebind.example.com:8080/', { dns, allowPrivate: true });
    expect(local.address.address).toBe('127.0.0.1');
    const literal = await checkWebhookTarget('http://[::1]:8080/', { dns, allowPrivate: true });
    expect(literal.address).toEqual({ address: '::1', family: 6 });
  });
});
