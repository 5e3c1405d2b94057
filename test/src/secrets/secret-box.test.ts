/**
 * The secret box (src/secrets/secret-box.ts): AES-256-GCM under a key derived from a secret of 32+ characters, key
 * ids for rotation, refusal of altered values and of values sealed under a key it does not hold.
 */
import { describe, expect, it } from 'vitest';
import { createSecretBox, deriveKey, openStored, SecretKeyError } from '../../../src/secrets/secret-box.js';

const KEY_A = 'a-first-secret-key-of-at-least-32-characters';
const KEY_B = 'a-second-secret-key-of-at-least-32-characters';

/** `value` with the character at `index` replaced by another of the base64url alphabet. */
function alter(value: string, index: number): string {
  const replacement = value[index] === 'A' ? 'B' : 'A';
  return value.slice(0, index) + replacement + value.slice(index + 1);
}

describe('the secret box', () => {
  it('seals to an ASCII string that names the key, different every time, and opens it again', () => {
    const box = createSecretBox(KEY_A);
    const secret = 'whsec_pässwörd ✓ -----BEGIN PRIVATE KEY-----';
    const sealed = box.seal(secret);
    expect(sealed).toMatch(new RegExp(`^agps1\\.${box.keyId}\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]+$`));
    expect(sealed).not.toContain('whsec');
    expect(box.seal(secret)).not.toBe(sealed);
    expect(box.open(sealed)).toBe(secret);
    expect(box.isSealed(sealed)).toBe(true);
    expect(box.isSealed(secret)).toBe(false);
    expect(box.isCurrent(sealed)).toBe(true);
    // Another box of the same secret (another process, a restart) opens it too.
    expect(createSecretBox(KEY_A).open(sealed)).toBe(secret);
    expect(box.open(box.seal(''))).toBe('');
  });

  it('derives one key id per secret', () => {
    expect(deriveKey(KEY_A).id).toBe(createSecretBox(KEY_A).keyId);
    expect(deriveKey(KEY_A).id).toMatch(/^[0-9a-f]{16}$/);
    expect(deriveKey(KEY_B).id).not.toBe(deriveKey(KEY_A).id);
  });

  it('refuses secrets shorter than 32 characters', () => {
    expect(() => createSecretBox('x'.repeat(31))).toThrow(SecretKeyError);
    expect(() => createSecretBox(KEY_A, ['short'])).toThrow(/at least 32 characters/);
    expect(() => createSecretBox('x'.repeat(32))).not.toThrow();
  });

  it('rotates: a box with a previous key opens what it sealed, seals with the current one, and tells them apart', () => {
    const old = createSecretBox(KEY_A);
    const sealedBefore = old.seal('the webhook secret');
    const rotated = createSecretBox(KEY_B, [KEY_A]);
    expect(rotated.keyId).toBe(deriveKey(KEY_B).id);
    expect(rotated.open(sealedBefore)).toBe('the webhook secret');
    expect(rotated.isCurrent(sealedBefore)).toBe(false);
    const sealedAfter = rotated.seal('the webhook secret');
    expect(rotated.isCurrent(sealedAfter)).toBe(true);
    // The old key cannot open what the new one sealed; the new key alone no longer opens the old value.
    expect(() => old.open(sealedAfter)).toThrow(SecretKeyError);
    expect(() => createSecretBox(KEY_B).open(sealedBefore)).toThrow(
      /sealed with key [0-9a-f]{16}, which this installation does not hold/,
    );
  });

  it('refuses altered values: ciphertext, IV, tag, key id, truncation', () => {
    const box = createSecretBox(KEY_A);
    const sealed = box.seal('a DKIM private key');
    const [prefix, id, iv, body] = sealed.split('.') as [string, string, string, string];
    const fresh = () => createSecretBox(KEY_A, [], { cacheEntries: 0 });
    expect(() => fresh().open(`${prefix}.${id}.${iv}.${alter(body, 3)}`)).toThrow(/altered/);
    expect(() => fresh().open(`${prefix}.${id}.${iv}.${alter(body, body.length - 5)}`)).toThrow(/altered/);
    expect(() => fresh().open(`${prefix}.${id}.${alter(iv, 2)}.${body}`)).toThrow(/altered/);
    expect(() => fresh().open(`${prefix}.${id}.${iv}.${body.slice(0, 10)}`)).toThrow(/truncated/);
    expect(() => fresh().open(`${prefix}.${id}.${iv}`)).toThrow(/not a sealed secret/);
    expect(() => fresh().open('whsec_clear')).toThrow(/not a sealed secret/);
    // Moved under the id of another key the box holds: the key id is authenticated, so it does not open.
    const two = createSecretBox(KEY_A, [KEY_B], { cacheEntries: 0 });
    expect(() => two.open(`${prefix}.${deriveKey(KEY_B).id}.${iv}.${body}`)).toThrow(/altered/);
    expect(two.open(sealed)).toBe('a DKIM private key');
  });

  it('keeps a bounded number of opened secrets, and opens evicted ones again', () => {
    const box = createSecretBox(KEY_A, [], { cacheEntries: 2 });
    const sealed = ['one', 'two', 'three'].map((secret) => box.seal(secret));
    expect(sealed.map((value) => box.open(value))).toEqual(['one', 'two', 'three']);
    expect(sealed.map((value) => box.open(value))).toEqual(['one', 'two', 'three']);
    // An altered value is never served from what was kept for the real one.
    expect(() => box.open(alter(sealed[2]!, sealed[2]!.length - 3))).toThrow(SecretKeyError);
  });

  it('openStored opens sealed values and passes clear ones (stored before secrets were sealed) through', () => {
    const box = createSecretBox(KEY_A);
    expect(openStored(box, box.seal('-----BEGIN PRIVATE KEY-----'))).toBe('-----BEGIN PRIVATE KEY-----');
    expect(openStored(box, 'whsec_clear')).toBe('whsec_clear');
  });
});
