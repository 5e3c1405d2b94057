/**
 * @module deliverability/signing
 * The one key that signs what the service hands out and later takes back without a lookup table: tracking URLs
 * (pixel and link tokens) and VERP return paths. It is made once per installation (random, 32 bytes), kept in
 * `service_keys` sealed by the secret box, and so shared by every process on the database; nothing else derives
 * from it.
 *
 * - {@link TokenSigner.sign}/{@link TokenSigner.verify}: `<payload>.<mac>` in base64url (URLs; case matters).
 * - {@link TokenSigner.mac}: the raw HMAC, for encodings of their own (VERP local parts are case-insensitive, so
 *   they use base32 of it).
 * Each use passes its own `purpose`, which is part of what is signed: a pixel token is not a link token, and
 * neither is a return path.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import { unixSeconds } from '../time.js';
import { openStored } from '../secrets/index.js';
import type { SigningKeys, TokenSigner } from './contracts.js';

/** The name of the signing key in `service_keys`. */
const KEY_NAME = 'deliverability-signing';
/** Bytes of the key. */
const KEY_BYTES = 32;
/** Bytes of HMAC-SHA256 kept in a token: 128 bits, beyond guessing, and short enough for a URL or a local part. */
export const MAC_BYTES = 16;

/** A signer over a given key. */
export function createTokenSigner(key: Buffer): TokenSigner {
  const mac = (purpose: string, data: string, bytes = MAC_BYTES) =>
    createHmac('sha256', key).update(purpose).update('\0').update(data).digest().subarray(0, bytes);
  const same = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);
  return {
    mac,
    same,
    sign(purpose, payload) {
      return `${Buffer.from(payload).toString('base64url')}.${mac(purpose, payload).toString('base64url')}`;
    },
    verify(purpose, token) {
      const dot = token.indexOf('.');
      if (dot <= 0 || dot !== token.lastIndexOf('.') || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token))
        return undefined;
      const payload = Buffer.from(token.slice(0, dot), 'base64url').toString();
      // base64url decoding is lenient (it skips what it cannot read): re-encode, so one token has one spelling.
      if (Buffer.from(payload).toString('base64url') !== token.slice(0, dot)) return undefined;
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      return same(given, mac(purpose, payload)) ? payload : undefined;
    },
  };
}

/**
 * The installation's signer: the key is read from `service_keys`, or made and stored on first use (two processes
 * racing both read the one that was stored first). Loaded once per process.
 */
export function createSigningKeys(deps: Pick<CoreDeps, 'db' | 'randomBytes' | 'clock' | 'secrets'>): SigningKeys {
  let loading: Promise<TokenSigner> | undefined;
  let loaded: TokenSigner | undefined;
  async function load(): Promise<TokenSigner> {
    const { db } = deps;
    const value = deps.secrets.seal(deps.randomBytes(KEY_BYTES).toString('base64'));
    await db.write((tx) =>
      tx
        .insert(tables.serviceKeys)
        .values({ name: KEY_NAME, value, createdAt: unixSeconds(deps.clock.now()) })
        .onConflictDoNothing(),
    );
    const [row] = await db.orm
      .select({ value: tables.serviceKeys.value })
      .from(tables.serviceKeys)
      .where(eq(tables.serviceKeys.name, KEY_NAME));
    if (!row) throw new Error('the signing key could not be stored');
    return createTokenSigner(Buffer.from(openStored(deps.secrets, row.value), 'base64'));
  }
  return {
    /** The signer (loads the key on first call). */
    async signer(): Promise<TokenSigner> {
      if (loaded) return loaded;
      loading ??= load().then(
        (signer) => (loaded = signer),
        (error: unknown) => {
          loading = undefined;
          throw error;
        },
      );
      return loading;
    },
    /** The signer if it was loaded already (hot paths that cannot wait; call {@link signer} once at start). */
    loadedSigner: (): TokenSigner | undefined => loaded,
  };
}

/** The service's signing keys. */
export type { SigningKeys, TokenSigner } from './contracts.js';
