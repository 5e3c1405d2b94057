import { afterEach, describe, expect, it } from 'vitest';
import { createTokenSigner } from '../../../src/index.js';
import { createSigningKeys } from '../../../src/deliverability/signing.js';
import { createTestCore } from '../../helpers/service.js';

describe('token signing', () => {
  const signer = createTokenSigner(Buffer.alloc(32, 7));

  it('verifies what it signed, for the same purpose only', () => {
    const token = signer.sign('open', 'msg_1');
    expect(signer.verify('open', token)).toBe('msg_1');
    expect(signer.verify('click', token)).toBeUndefined();
  });

  it('refuses altered, truncated, re-encoded and foreign tokens', () => {
    const token = signer.sign('open', 'msg_1');
    const [payload, mac] = token.split('.') as [string, string];
    const otherPayload = Buffer.from('msg_2').toString('base64url');
    expect(signer.verify('open', `${otherPayload}.${mac}`)).toBeUndefined();
    expect(signer.verify('open', token.slice(0, -2))).toBeUndefined();
    expect(signer.verify('open', `${payload}.`)).toBeUndefined();
    expect(signer.verify('open', `${payload}=.${mac}`)).toBeUndefined();
    expect(signer.verify('open', `${payload}.${mac}.x`)).toBeUndefined();
    expect(createTokenSigner(Buffer.alloc(32, 8)).verify('open', token)).toBeUndefined();
  });
});

describe('the installation key', () => {
  let close: (() => void) | undefined;
  afterEach(() => close?.());

  it('is made once and shared by every process on the database', async () => {
    const test = await createTestCore();
    close = test.close;
    const first = await test.core.deliverability.signing.signer();
    // Another process on the same database: its own loader, a different random source.
    let calls = 0;
    const other = createSigningKeys({ ...test.core.deps, randomBytes: (size) => (calls++, Buffer.alloc(size, 1)) });
    const second = await other.signer();
    expect(calls).toBe(1);
    expect(second.verify('open', first.sign('open', 'x'))).toBe('x');
    expect(test.core.deliverability.signing.loadedSigner()).toBe(first);
  });
});
