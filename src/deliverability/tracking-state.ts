/**
 * @module deliverability/tracking-state
 * What the tracking service's parts (./tracking-service.ts) share: its limits, the hit and the tracked message as
 * they travel between answering and recording, the scanner test, and the state `createTrackingService` makes.
 */
import type { tables } from '../../storage/index.js';
import type { CoreDeps } from '../ports/index.js';
import type { GrantService } from '../grants/contracts.js';
import type { SentStateLookup } from '../messages/index.js';
import type { SigningKeys } from './signing.js';
import type { HitSource } from './contracts.js';

export type { HitSource } from './contracts.js';

/** How long a looked-up tracked message (and its links) is reused: a deleted grant's URLs answer for at most this long in other processes. */
export const LOOKUP_TTL_MS = 1_000;
/** How long a hit waits in the buffer before its batch is written. */
export const FLUSH_DELAY_MS = 25;
/** Hits the buffer holds at most; beyond it (the database far behind a flood), hits are answered but not recorded. */
export const MAX_PENDING_HITS = 200_000;
/** Hits this soon after the send are a gateway or proxy fetching ahead of the reader. */
export const EARLY_MS = 10_000;
/** Opens within this of the last counted open of the message count once (Nylas: one minute). */
export const REPEAT_OPEN_MS = 60_000;
/** Recent counted hits a notification lists (`recents`). */
export const RECENT_HITS = 10;

/**
 * User agents of link scanners, security gateways, mail-privacy and image proxies, and scripts: their hits are not
 * people. Matched case-insensitively anywhere in the string; an empty or missing user agent counts as one too.
 */
export const SCANNER_USER_AGENTS = [
  'GoogleImageProxy',
  'YahooMailProxy',
  'Barracuda',
  'Proofpoint',
  'Mimecast',
  'urldefense',
  'BingPreview',
  'SafeLinks',
  'python-requests',
  'python-urllib',
  'aiohttp',
  'curl/',
  'Wget',
  'Go-http-client',
  'libwww-perl',
  'okhttp',
  'Java/',
  'HeadlessChrome',
  'facebookexternalhit',
  'bot',
  'crawler',
  'spider',
  'preview',
  'scanner',
] as const;

const SCANNER_PATTERN = new RegExp(
  SCANNER_USER_AGENTS.map((word) => word.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'),
  'i',
);

/** Whether a user agent is a scanner's or a proxy's (see {@link SCANNER_USER_AGENTS}). */
export function scannerUserAgent(userAgent: string | undefined): boolean {
  return userAgent === undefined || userAgent.trim() === '' || SCANNER_PATTERN.test(userAgent);
}

/** A tracked message as the tracking routes need it. */
export interface TrackedEntry {
  id: string;
  grantId: string;
  opens: boolean;
  links: boolean;
  /** The original URLs, by link index (empty when links are not tracked). */
  urls: string[];
}

/** A hit waiting to be written. */
export interface Hit extends HitSource {
  kind: 'open' | 'click';
  trackingId: string;
  linkIndex: number | null;
  /** Unix milliseconds (deps.clock). */
  at: number;
}

/** A `recents` entry of a notification. */
export interface Recent {
  id: number;
  ip: string;
  linkIndex: number | null;
  at: number;
  userAgent: string;
}

export type TrackedRow = typeof tables.trackedMessages.$inferSelect;

/** Per message, what a batch changes. */
export interface BatchState {
  row: TrackedRow;
  dirty: boolean;
  links: Map<number, { url: string; count: number; dirty: boolean }>;
  recents: Partial<Record<'open' | 'click', Recent[]>>;
}

/** Parts of the tracking service. */
export interface TrackingParts {
  signing: Pick<SigningKeys, 'signer' | 'loadedSigner'>;
  grants: Pick<GrantService, 'require'>;
  sentState: SentStateLookup;
}

/** What the functions of the tracking service share, made once by `createTrackingService`. */
export interface TrackingState {
  db: CoreDeps['db'];
  clock: CoreDeps['clock'];
  newId: CoreDeps['newId'];
  logger: CoreDeps['logger'];
  parts: TrackingParts;
  /** Looked-up tracked messages by tracking id, or the load under way (see {@link LOOKUP_TTL_MS}). */
  cache: Map<string, { entry: TrackedEntry | null; expires: number } | { loading: Promise<TrackedEntry | null> }>;
  /** Hits not yet written. */
  pending: Hit[];
  timer: ReturnType<typeof setTimeout> | undefined;
  writing: Promise<void> | undefined;
  /** Hits answered but not recorded since the last warning (the buffer was full). */
  dropped: number;
  /** Verified tokens with their payload, keyed by purpose and token. */
  verified: Map<string, string>;
}
