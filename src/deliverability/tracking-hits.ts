/**
 * @module deliverability/tracking-hits
 * Answering a tracking URL (./tracking-service.ts): the token checked with the installation's key (verified tokens
 * kept, {@link VERIFIED_TOKENS}), the tracked message looked up through a small cache ({@link LOOKUP_TTL_MS}), and the
 * hit handed to the recording (./tracking-recording.ts).
 */
import { asc, eq } from 'drizzle-orm';
import { tables } from '../../storage/index.js';
import type { TokenSigner } from './signing.js';
import { CLICK_TOKEN_PURPOSE, OPEN_TOKEN_PURPOSE, readLinkToken } from './tracked-sends.js';
import { remember } from './tracking-recording.js';
import { LOOKUP_TTL_MS, type Hit, type HitSource, type TrackedEntry, type TrackingState } from './tracking-state.js';

/** Tracked messages kept in the lookup cache (least recently added go first). */
const LOOKUP_ENTRIES = 10_000;
/**
 * Tokens already verified, kept with their payload: a token is its own key, so a URL loaded again (repeated opens,
 * proxies, a flood) skips the HMAC. Only good tokens are kept; a forged one is checked every time.
 */
const VERIFIED_TOKENS = 10_000;
/** Longest user agent kept. */
const MAX_USER_AGENT = 512;

/** The payload of a token signed for `purpose` (see {@link VERIFIED_TOKENS}); the purpose is part of the key. */
function verify(
  tracking: TrackingState,
  signer: TokenSigner,
  purpose: string,
  token: string,
  read: (signer: TokenSigner, token: string) => string | undefined,
): string | undefined {
  const key = `${purpose} ${token}`;
  const known = tracking.verified.get(key);
  if (known !== undefined) return known;
  const payload = read(signer, token);
  if (payload === undefined) return undefined;
  if (tracking.verified.size >= VERIFIED_TOKENS) tracking.verified.delete(tracking.verified.keys().next().value!);
  tracking.verified.set(key, payload);
  return payload;
}

async function load(tracking: TrackingState, trackingId: string): Promise<TrackedEntry | null> {
  const [row] = await tracking.db.orm
    .select({
      id: tables.trackedMessages.id,
      grantId: tables.trackedMessages.grantId,
      opens: tables.trackedMessages.opens,
      links: tables.trackedMessages.links,
    })
    .from(tables.trackedMessages)
    .where(eq(tables.trackedMessages.id, trackingId))
    .limit(1);
  if (!row) return null;
  const urls = row.links
    ? (
        await tracking.db.orm
          .select({ url: tables.trackingLinks.url })
          .from(tables.trackingLinks)
          .where(eq(tables.trackingLinks.messageId, trackingId))
          .orderBy(asc(tables.trackingLinks.linkIndex))
      ).map((link) => link.url)
    : [];
  return { ...row, urls };
}

/** The tracked message of a tracking id, from the cache when fresh (one load at a time per id). */
function lookup(tracking: TrackingState, trackingId: string): TrackedEntry | null | Promise<TrackedEntry | null> {
  const cached = tracking.cache.get(trackingId);
  if (cached) {
    if ('loading' in cached) return cached.loading;
    if (cached.expires > performance.now()) return cached.entry;
    tracking.cache.delete(trackingId);
  }
  const loading = load(tracking, trackingId).then(
    (entry) => {
      if (tracking.cache.size >= LOOKUP_ENTRIES) tracking.cache.delete(tracking.cache.keys().next().value!);
      tracking.cache.set(trackingId, { entry, expires: performance.now() + LOOKUP_TTL_MS });
      return entry;
    },
    (error: unknown) => {
      tracking.cache.delete(trackingId);
      throw error;
    },
  );
  tracking.cache.set(trackingId, { loading });
  return loading;
}

/** The signer, synchronously once loaded (the service loads it at start). */
function signerNow(tracking: TrackingState): TokenSigner | Promise<TokenSigner> {
  return tracking.parts.signing.loadedSigner() ?? tracking.parts.signing.signer();
}

function hitOf(
  tracking: TrackingState,
  kind: 'open' | 'click',
  trackingId: string,
  linkIndex: number | null,
  source: HitSource,
): Hit {
  return {
    kind,
    trackingId,
    linkIndex,
    ip: source.ip,
    userAgent: source.userAgent === undefined ? undefined : source.userAgent.slice(0, MAX_USER_AGENT),
    head: source.head,
    at: tracking.clock.now().getTime(),
  };
}

/** `then(value)`, at once when `value` is no promise (the hot path stays synchronous). */
function settle<T, R>(value: T | Promise<T>, then: (value: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(then) : then(value);
}

/**
 * A pixel request: true (and the hit is recorded) when the token is a pixel token of this installation for a
 * tracked message with opens on; false otherwise. Synchronous when the key and the message are at hand.
 */
export function answerOpen(tracking: TrackingState, token: string, source: HitSource): boolean | Promise<boolean> {
  return settle(signerNow(tracking), (signer) => {
    const trackingId = verify(tracking, signer, OPEN_TOKEN_PURPOSE, token, (key, value) =>
      key.verify(OPEN_TOKEN_PURPOSE, value),
    );
    if (trackingId === undefined) return false;
    return settle(lookup(tracking, trackingId), (entry) => {
      if (!entry?.opens) return false;
      remember(tracking, hitOf(tracking, 'open', trackingId, null, source));
      return true;
    });
  });
}

/**
 * A link request: the original URL recorded for the token's link (and the hit is recorded), or undefined when the
 * token is not a link token of this installation for a link of a tracked message.
 */
export function answerClick(
  tracking: TrackingState,
  token: string,
  source: HitSource,
): string | undefined | Promise<string | undefined> {
  return settle(signerNow(tracking), (signer) => {
    const payload = verify(tracking, signer, CLICK_TOKEN_PURPOSE, token, (key, value) => {
      const read = readLinkToken(key, value);
      return read && `${read.trackingId}.${read.linkIndex}`;
    });
    if (payload === undefined) return undefined;
    const dot = payload.lastIndexOf('.');
    const link = { trackingId: payload.slice(0, dot), linkIndex: Number(payload.slice(dot + 1)) };
    return settle(lookup(tracking, link.trackingId), (entry) => {
      const url = entry?.links ? entry.urls[link.linkIndex] : undefined;
      if (url === undefined) return undefined;
      remember(tracking, hitOf(tracking, 'click', link.trackingId, link.linkIndex, source));
      return url;
    });
  });
}

/** Forgets the cached lookups of a deleted grant, so its tracking URLs answer 404 at once in this process. */
export function forgetGrant(tracking: TrackingState, grantId: string): void {
  for (const [id, cached] of tracking.cache) {
    if ('entry' in cached && cached.entry?.grantId === grantId) tracking.cache.delete(id);
    else if ('loading' in cached) tracking.cache.delete(id);
  }
}
