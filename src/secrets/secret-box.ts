/**
 * @module secrets/secret-box
 * Secrets at rest (IMAP and SMTP passwords, DKIM private keys, webhook signing secrets): sealed with AES-256-GCM
 * under a key derived from the installation's secret (`AGENTPOST_SECRET_KEY`, or the key file made on a fresh
 * installation), and opened again only where they are used.
 *
 * A sealed value is one ASCII string, `agps1.<key id>.<iv>.<ciphertext and tag>` (base64url parts): the key id (the
 * first 8 bytes of SHA-256 over the derived key, hex) says which key sealed it, so after a rotation the previous
 * keys still open what they sealed while everything new is sealed with the current one. A value that was altered,
 * or sealed under a key this box does not hold, does not open: {@link SecretKeyError}.
 *
 * Opening is cheap to repeat: a box keeps the secrets it opened, keyed by their sealed form (a sealed value has a
 * random IV, so it names one secret only), for the paths that open one on every use (webhook signing, DKIM).
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { SecretBox } from '../ports/secret-box.js';

/** Prefix of a sealed value (format version 1). */
export const SEALED_PREFIX = 'agps1.';

/** Opened secrets a box keeps by default (the oldest opened is dropped first). */
export const DEFAULT_OPENED_CACHE_ENTRIES = 1024;

/** Fewest characters of the secret a key is derived from. */
export const MIN_SECRET_LENGTH = 32;

/** A sealed value that this box cannot open: sealed under another key, or altered. */
export class SecretKeyError extends Error {
  override readonly name = 'SecretKeyError';
}

interface Key {
  id: string;
  key: Buffer;
}

/** The AES-256 key derived from a secret (HKDF-SHA256), and its id. */
export function deriveKey(secret: string): Key {
  if (secret.length < MIN_SECRET_LENGTH)
    throw new SecretKeyError(`the secret key must be at least ${MIN_SECRET_LENGTH} characters long`);
  const key = Buffer.from(
    hkdfSync(
      'sha256',
      Buffer.from(secret, 'utf8'),
      Buffer.from('agentpost secret box'),
      Buffer.from('aes-256-gcm v1'),
      32,
    ),
  );
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 16), key };
}

/**
 * Creates a box that seals with `current` and opens what `current` or any of `previous` sealed (secrets of at least
 * {@link MIN_SECRET_LENGTH} characters; the AES keys are derived from them).
 */
export function createSecretBox(
  current: string,
  previous: readonly string[] = [],
  options: { cacheEntries?: number } = {},
): SecretBox {
  const sealing = deriveKey(current);
  const cacheEntries = options.cacheEntries ?? DEFAULT_OPENED_CACHE_ENTRIES;
  /** Opened secrets by sealed value, least recently used first (a Map keeps insertion order). */
  const opened = new Map<string, string>();
  const keys = new Map<string, Buffer>([[sealing.id, sealing.key]]);
  for (const secret of previous) {
    const derived = deriveKey(secret);
    if (!keys.has(derived.id)) keys.set(derived.id, derived.key);
  }
  return {
    keyId: sealing.id,
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', sealing.key, iv);
      // The key id is authenticated too: a value cannot be moved under another id.
      cipher.setAAD(Buffer.from(sealing.id));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${SEALED_PREFIX}${sealing.id}.${iv.toString('base64url')}.${body.toString('base64url')}`;
    },
    open(sealed) {
      const hit = opened.get(sealed);
      if (hit !== undefined) {
        opened.delete(sealed);
        opened.set(sealed, hit);
        return hit;
      }
      const plain = openUncached(sealed);
      if (cacheEntries > 0) {
        opened.set(sealed, plain);
        if (opened.size > cacheEntries) opened.delete(opened.keys().next().value!);
      }
      return plain;
    },
    isSealed: (value) => value.startsWith(SEALED_PREFIX),
    isCurrent: (value) => value.startsWith(`${SEALED_PREFIX}${sealing.id}.`),
  };

  function openUncached(sealed: string): string {
    const parts = sealed.startsWith(SEALED_PREFIX) ? sealed.slice(SEALED_PREFIX.length).split('.') : [];
    if (parts.length !== 3) throw new SecretKeyError('not a sealed secret');
    const [id, ivText, bodyText] = parts as [string, string, string];
    const key = keys.get(id);
    if (!key)
      throw new SecretKeyError(
        `this secret was sealed with key ${id}, which this installation does not hold (AGENTPOST_SECRET_KEY is another)`,
      );
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (iv.length !== 12 || body.length < 16) throw new SecretKeyError('a sealed secret is truncated');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv);
      decipher.setAAD(Buffer.from(id));
      decipher.setAuthTag(body.subarray(body.length - 16));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError('a sealed secret was altered (its authentication tag does not match)');
    }
  }
}

/**
 * A stored secret as its user needs it: opened when sealed, as it is when still clear (a value written before the
 * secret box, or by an older process, which start-up seals: src/secrets/stored-secrets.ts).
 */
export function openStored(box: SecretBox, value: string): string {
  return box.isSealed(value) ? box.open(value) : value;
}
