import { describe, expect, it } from 'vitest';
import { AppError, isPublicAddress } from '../../../src/index.js';
import { checkWebhookTarget } from '../../../src/webhooks/address-policy.js';
import { fakeDns } from '../../helpers/dns.js';

describe('isPublicAddress', () => {
  it.each([
    ['127.0.0.1', false],
    ['127.255.0.9', false],
    ['10.0.0.1', false],
    ['172.16.5.4', false],
    ['172.31.255.255', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['192.0.2.10', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fe80::1%eth0', false],
    ['fd00::1', false],
    ['fc12:3456::1', false],
    ['ff02::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:169.254.169.254', false],
    ['64:ff9b::10.0.0.1', false],
    ['2001:db8::1', false],
    ['not an address', false],
    ['8.8.8.8', true],
    ['172.32.0.1', true],
    ['93.184.216.34', true],
    ['2606:4700:4700::1111', true],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::808:808', true],
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
    expect(await refusal('https://169.254.169.254/latest/meta-data')).toContain('169.254.169.254 is a private');
    expect(await refusal('https://10.0.0.1/')).toContain('10.0.0.1');
    expect(await refusal('https://[::1]:8443/')).toContain('::1');
    expect(await refusal('https://rebind.example.com/hook')).toContain('rebind.example.com resolves to 127.0.0.1');
    // One private answer among public ones is enough to refuse.
    expect(await refusal('https://mixed.example.com/')).toContain('10.1.2.3');
    expect(await refusal('https://unknown.example.com/')).toContain('could not be resolved');
    expect(await refusal('ftp://example.com/')).toContain('not supported');
    expect(await refusal('not a url')).toContain('not a valid URL');
    expect(await refusal('https://user:pass@public.example.com/')).toContain('user name or password');
    expect(await refusal('https://rebind.example.com/')).toContain('AGENTPOST_ALLOW_PRIVATE_WEBHOOKS=true');
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
