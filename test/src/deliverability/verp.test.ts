/** VERP return paths: made per recipient, read back case-insensitively, refused when altered. */
import { describe, expect, it } from 'vitest';
import { createTokenSigner } from '../../../src/index.js';
import { base32, readReturnPath, recipientOrdinals, returnPathFor } from '../../../src/deliverability/verp.js';

describe('VERP return paths', () => {
  const signer = createTokenSigner(Buffer.alloc(32, 3));
  const id = '01jd8m0x2q7k3v9r5t4w6y8z1a';

  it('names the message and the recipient, survives case-folding, and fits a local part', () => {
    const address = returnPathFor(signer, { outboundId: id, ordinal: 37, domain: 'Agents.Example.COM' })!;
    expect(address).toMatch(/^bounce\+[0-9a-z_-]+@agents\.example\.com$/);
    expect(address.slice(0, address.indexOf('@')).length).toBeLessThanOrEqual(64);
    expect(readReturnPath(signer, address)).toEqual({
      kind: 'valid',
      outboundId: id,
      ordinal: 37,
      domain: 'agents.example.com',
    });
    expect(readReturnPath(signer, address.toUpperCase())).toEqual({
      kind: 'valid',
      outboundId: id,
      ordinal: 37,
      domain: 'agents.example.com',
    });
  });

  it('refuses altered ids, ordinals and macs, another key, and padded ordinals', () => {
    const address = returnPathFor(signer, { outboundId: id, ordinal: 1, domain: 'example.com' })!;
    const [local, domain] = address.split('@') as [string, string];
    const [, token] = local.split('+') as [string, string];
    const [outboundId, ordinal, mac] = token.split('-') as [string, string, string];
    const flip = (text: string) => (text.endsWith('a') ? `${text.slice(0, -1)}b` : `${text.slice(0, -1)}a`);
    for (const forged of [
      `bounce+${flip(outboundId)}-${ordinal}-${mac}@${domain}`,
      `bounce+${outboundId}-2-${mac}@${domain}`,
      `bounce+${outboundId}-0${ordinal}-${mac}@${domain}`,
      `bounce+${outboundId}-${ordinal}-${flip(mac)}@${domain}`,
      `bounce+${outboundId}-${ordinal}-${mac.slice(1)}@${domain}`,
      `bounce+garbage@${domain}`,
      `bounce+@${domain}`,
    ]) {
      expect(readReturnPath(signer, forged), forged).toEqual({ kind: 'forged', domain });
    }
    expect(readReturnPath(createTokenSigner(Buffer.alloc(32, 4)), address).kind).toBe('forged');
    expect(readReturnPath(signer, 'agent@example.com')).toEqual({ kind: 'none' });
    expect(readReturnPath(signer, 'bounce@example.com')).toEqual({ kind: 'none' });
  });

  it('gives no return path for ids that cannot stand in a local part', () => {
    expect(returnPathFor(signer, { outboundId: 'Has-Dash', ordinal: 0, domain: 'example.com' })).toBeUndefined();
    expect(returnPathFor(signer, { outboundId: 'x'.repeat(60), ordinal: 0, domain: 'example.com' })).toBeUndefined();
  });

  it('ordinals are positions in code-unit order of the lower-cased addresses', () => {
    expect([...recipientOrdinals(['b@x.com', 'A@x.com', 'c@x.com', 'a@x.com'])]).toEqual([
      ['a@x.com', 0],
      ['b@x.com', 1],
      ['c@x.com', 2],
    ]);
  });

  it('base32 is RFC 4648, lower-cased, unpadded', () => {
    expect(base32(Buffer.from('foobar'))).toBe('mzxw6ytboi');
    expect(base32(Buffer.from('f'))).toBe('my');
  });
});
