import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { canonicalJson as sdkCanonicalJson, ServiceAccountSigner } from 'nylas';
import { describe, expect, it } from 'vitest';
import {
  API_KEY_PREFIX,
  canonicalJson,
  hashApiKey,
  hashPassword,
  newApiKey,
  sameDigest,
  signingString,
  verifyPassword,
  verifySignature,
} from '../../src/applications/credentials.js';
import { AppError } from '../../src/errors.js';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../../src/json-depth.js';

describe('API keys', () => {
  it('are the prefix plus 43 base64url characters of 32 random bytes', () => {
    const key = newApiKey(Buffer.alloc(32, 0xff));
    expect(key).toBe(`${API_KEY_PREFIX}${'_'.repeat(42)}8`);
    expect(newApiKey(randomBytes(32))).toMatch(/^agp_[A-Za-z0-9_-]{43}$/);
  });

  it('hash to a stable SHA-256 hex digest that differs per key', () => {
    // Known vector: sha256("abc").
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = newApiKey(randomBytes(32));
    expect(hashApiKey(key)).toBe(hashApiKey(key));
    expect(hashApiKey(key)).not.toBe(hashApiKey(`${key}x`));
    expect(hashApiKey(key)).not.toContain(key.slice(API_KEY_PREFIX.length));
  });

  it('compare digests exactly, whatever their length', () => {
    const digest = hashApiKey('one');
    expect(sameDigest(digest, hashApiKey('one'))).toBe(true);
    expect(sameDigest(digest, hashApiKey('two'))).toBe(false);
    expect(sameDigest(digest, digest.slice(0, 32))).toBe(false);
    expect(sameDigest(digest, '')).toBe(false);
  });
});

describe('canonical JSON', () => {
  it('sorts keys at every depth, drops undefined members and adds no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' }, u: undefined })).toBe(
      '{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}',
    );
    expect(canonicalJson([undefined, 'é', '\u2028'])).toBe(JSON.stringify([null, 'é', '\u2028']));
  });

  it('is byte-for-byte the SDK canonicalJson for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(sdkCanonicalJson(value as Record<string, unknown>));
      }),
      { numRuns: 500 },
    );
  });

  it('is unchanged by a parse round trip (what the server re-canonicalises is what was signed)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = sdkCanonicalJson(value as Record<string, unknown>);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses nesting deeper than MAX_JSON_DEPTH with a 400, not a stack overflow', () => {
    const nested = (levels: number) => JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`) as unknown;
    expect(canonicalJson(nested(MAX_JSON_DEPTH))).toBe(
      `${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}`,
    );
    for (const levels of [MAX_JSON_DEPTH + 1, 100_000]) {
      const error = (() => {
        try {
          canonicalJson(nested(levels));
        } catch (thrown) {
          return thrown;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('invalid_request');
      expect((error as AppError).message).toContain(`more than ${MAX_JSON_DEPTH} levels`);
    }
  });
});

describe('JSON depth', () => {
  const arrays = (levels: number) => JSON.parse(`${'['.repeat(levels)}1${']'.repeat(levels)}`) as unknown;
  it.each([
    ['a scalar', 1, 0, false],
    ['two levels, limit 2', arrays(2), 2, false],
    ['three levels, limit 2', arrays(3), 2, true],
    ['an object in an array, limit 1', [{ a: 1 }], 1, true],
  ])('measures %s without recursion', (_name, value, limit, exceeds) => {
    expect(exceedsJsonDepth(value, limit)).toBe(exceeds);
  });

  it('walks a million levels without overflowing the stack', () => {
    const value = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`) as unknown;
    expect(exceedsJsonDepth(value)).toBe(true);
    expect(exceedsJsonDepth([[1, { a: [2] }], { b: { c: 'd' } }])).toBe(false);
  });
});

describe('service-account signatures', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const signer = new ServiceAccountSigner({ privateKeyPem, privateKeyId: 'kid_1' });

  it('signs the envelope the SDK signs (payload only for POST, PUT and PATCH)', () => {
    const body = '{"domain_address":"a.example.com","name":"A"}';
    expect(
      signingString({ method: 'POST', path: '/v3/admin/domains', nonce: 'n0nce123', timestamp: 1700000000, body }),
    ).toBe(
      canonicalJson({
        method: 'post',
        nonce: 'n0nce123',
        path: '/v3/admin/domains',
        payload: body,
        timestamp: 1700000000,
      }),
    );
    expect(
      signingString({ method: 'GET', path: '/v3/admin/domains', nonce: 'n0nce123', timestamp: 1700000000, body }),
    ).toBe('{"method":"get","nonce":"n0nce123","path":"/v3/admin/domains","timestamp":1700000000}');
  });

  it('accepts what the SDK signer produces and nothing altered', () => {
    const body = { name: 'Mail', domain_address: 'mail.example.com' };
    const { headers, serializedBody } = signer.buildHeaders({ method: 'POST', path: '/v3/admin/domains', body });
    const parts = {
      method: 'POST',
      path: '/v3/admin/domains',
      nonce: headers['X-Nylas-Nonce']!,
      timestamp: Number(headers['X-Nylas-Timestamp']),
      body: serializedBody,
    };
    expect(verifySignature(publicKeyPem, parts, headers['X-Nylas-Signature']!)).toBe(true);
    expect(
      verifySignature(publicKeyPem, { ...parts, path: '/v3/admin/domains/x' }, headers['X-Nylas-Signature']!),
    ).toBe(false);
    expect(verifySignature(publicKeyPem, { ...parts, method: 'PUT' }, headers['X-Nylas-Signature']!)).toBe(false);
    expect(
      verifySignature(publicKeyPem, { ...parts, timestamp: parts.timestamp + 1 }, headers['X-Nylas-Signature']!),
    ).toBe(false);
    expect(verifySignature(publicKeyPem, { ...parts, nonce: `${parts.nonce}x` }, headers['X-Nylas-Signature']!)).toBe(
      false,
    );
    expect(
      verifySignature(
        publicKeyPem,
        { ...parts, body: '{"domain_address":"evil.example.com","name":"Mail"}' },
        headers['X-Nylas-Signature']!,
      ),
    ).toBe(false);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    expect(verifySignature(other, parts, headers['X-Nylas-Signature']!)).toBe(false);
    expect(verifySignature(publicKeyPem, parts, 'not-base64!')).toBe(false);
    expect(verifySignature('not a key', parts, headers['X-Nylas-Signature']!)).toBe(false);
  });
});

describe('passwords', () => {
  it('hash with a salt and verify only the same password', async () => {
    const stored = await hashPassword('Correct-Horse-Battery-9', randomBytes(16));
    expect(stored).toMatch(/^scrypt\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(stored).not.toContain('Correct-Horse');
    expect(await verifyPassword('Correct-Horse-Battery-9', stored)).toBe(true);
    expect(await verifyPassword('correct-horse-battery-9', stored)).toBe(false);
  });

  it('give different hashes for different salts and reject malformed stored values', async () => {
    const first = await hashPassword('Same-Password-123456', Buffer.alloc(16, 1));
    const second = await hashPassword('Same-Password-123456', Buffer.alloc(16, 2));
    expect(first).not.toBe(second);
    expect(await verifyPassword('Same-Password-123456', 'bcrypt$abc$def')).toBe(false);
    expect(await verifyPassword('Same-Password-123456', 'scrypt$$')).toBe(false);
    expect(await verifyPassword('Same-Password-123456', '')).toBe(false);
  });
});
