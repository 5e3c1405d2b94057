/**
 * @module applications/credentials
 * API keys and service-account signatures: how a request proves which application it acts for.
 */
import { createHash, createPublicKey, createVerify, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { MAX_JSON_DEPTH, tooDeep } from '../json-depth.js';

/** Keys look like `agp_` + 43 base64url characters (32 random bytes). */
export const API_KEY_PREFIX = 'agp_';

/** Makes a new API key from 32 random bytes. */
export function newApiKey(random: Buffer): string {
  return `${API_KEY_PREFIX}${random.toString('base64url')}`;
}

/** SHA-256 of a key, hex. API keys are long random strings, so a fast unsalted hash is the right tool. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Compares two hex digests in constant time. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Canonical JSON as the Nylas SDK's service-account signer writes it: object keys sorted, no whitespace,
 * `undefined` members dropped (see `nylas/lib/esm/models/serviceAccount.js`). It recurses once per level, so
 * a value nested more than {@link MAX_JSON_DEPTH} levels is a 400 rather than a stack overflow.
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value === undefined || typeof value === 'function') return 'null';
  if (value !== null && typeof value === 'object' && depth >= MAX_JSON_DEPTH) throw tooDeep('body');
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .filter((key) => record[key] !== undefined && typeof record[key] !== 'function')
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key], depth + 1)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The parts of a signed request that the signature covers. */
export interface SignedRequestParts {
  method: string;
  /** URL path without the query string, exactly as sent. */
  path: string;
  nonce: string;
  timestamp: number;
  /** The raw body for POST, PUT and PATCH requests that carry one. */
  body: string | undefined;
}

const SIGNED_BODY_METHODS = new Set(['post', 'put', 'patch']);

/** The exact string the SDK signs: canonical JSON of `{method, nonce, path, timestamp, payload?}`. */
export function signingString(parts: SignedRequestParts): string {
  const method = parts.method.toLowerCase();
  const envelope: Record<string, unknown> = {
    method,
    nonce: parts.nonce,
    path: parts.path,
    timestamp: parts.timestamp,
  };
  if (parts.body && SIGNED_BODY_METHODS.has(method)) envelope.payload = parts.body;
  return canonicalJson(envelope);
}

/** Verifies an RSA-SHA256 signature (base64) over {@link signingString}. */
export function verifySignature(publicKeyPem: string, parts: SignedRequestParts, signatureBase64: string): boolean {
  try {
    return createVerify('RSA-SHA256')
      .update(signingString(parts))
      .verify(createPublicKey(publicKeyPem), signatureBase64, 'base64');
  } catch {
    return false;
  }
}

/** scrypt parameters for stored passwords (app passwords); OWASP's minimum for scrypt is N=2^17, r=8, p=1. */
const SCRYPT = { N: 1 << 17, r: 8, p: 1, maxmem: 256 * 1024 * 1024 } as const;

function scryptAsync(password: string, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** Hashes a password as `scrypt$<salt b64>$<hash b64>` (on the thread pool, off the event loop). */
export async function hashPassword(password: string, salt: Buffer): Promise<string> {
  const hash = await scryptAsync(password, salt, 32, SCRYPT);
  return `scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** Checks a password against {@link hashPassword}'s output in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, saltText, hashText] = stored.split('$');
  if (scheme !== 'scrypt' || !saltText || !hashText) return false;
  const expected = Buffer.from(hashText, 'base64');
  const actual = await scryptAsync(password, Buffer.from(saltText, 'base64'), expected.length, SCRYPT);
  return timingSafeEqual(actual, expected);
}
