/**
 * @module deliverability/tracking-service
 * What happens when a tracking URL is requested, and what a message's engagement is.
 *
 * - **Answering** ({@link TrackingService.open}, {@link TrackingService.click}): the token is checked with the
 *   installation's key (synchronously, once the key is loaded) and the tracked message looked up through a small
 *   cache ({@link LOOKUP_TTL_MS}); a bad token or an unknown message is `undefined` (the route answers 404). A
 *   click leads only to the URL recorded at send time for that link index.
 * - **Recording**: each hit is put in a buffer and written with the others of its batch in ONE transaction, a few
 *   tens of milliseconds later ({@link FLUSH_DELAY_MS}), after the answer went out: a hit never waits on a database
 *   write. A crash loses at most the hits not yet written (the last batch).
 * - **Counting**: every hit is an `engagement_events` row. A hit is recorded but flagged, not counted, when it is a
 *   HEAD request (`head`), comes from a known link scanner or mail-privacy proxy ({@link scannerUserAgent},
 *   `scanner`), arrives within {@link EARLY_MS} of the send (`early`), or is an open within {@link REPEAT_OPEN_MS} of
 *   the message's last counted open (`repeat`). A counted hit bumps the counters and, when that tracking option is
 *   on, records `message.opened` / `message.link_clicked` in the outbox in the same transaction; counted hits of one
 *   kind on one message within one batch give one notification, with the counts and `recents` as of the last of them.
 *   Flagged hits notify nobody.
 * - **Engagement** ({@link TrackingService.engagement}): opens, clicks per link, replies and each recipient's
 *   delivery state of one sent message.
 *
 * The service is plain functions over a small state made here: answering (./tracking-hits.ts), recording
 * (./tracking-recording.ts), engagement (./tracking-engagement.ts), what they share (./tracking-state.ts) and the
 * statements past drizzle's query builder (./tracking-store.ts).
 */
import type { TrackingService } from './contracts.js';
import type { Principal } from '../access.js';
import type { CoreDeps } from '../ports/index.js';
import type { GetMessageEngagementInput } from '../schemas/engagement.js';
import { engagementOf } from './tracking-engagement.js';
import { answerClick, answerOpen, forgetGrant } from './tracking-hits.js';
import { drain } from './tracking-recording.js';
import type { HitSource, TrackingParts, TrackingState } from './tracking-state.js';

export {
  EARLY_MS,
  FLUSH_DELAY_MS,
  LOOKUP_TTL_MS,
  MAX_PENDING_HITS,
  RECENT_HITS,
  REPEAT_OPEN_MS,
  SCANNER_USER_AGENTS,
  scannerUserAgent,
  type HitSource,
  type TrackingParts,
} from './tracking-state.js';

/** Creates the tracking service. */
export function createTrackingService(deps: CoreDeps, parts: TrackingParts): TrackingService {
  const { db, clock, newId, logger } = deps;
  const tracking: TrackingState = {
    db,
    clock,
    newId,
    logger,
    parts,
    cache: new Map(),
    pending: [],
    timer: undefined,
    writing: undefined,
    dropped: 0,
    verified: new Map(),
  };
  const flushAll = () => drain(tracking);

  return {
    /**
     * A pixel request: true (and the hit is recorded) when the token is a pixel token of this installation for a
     * tracked message with opens on; false otherwise. Synchronous when the key and the message are at hand.
     */
    open: (token: string, source: HitSource): boolean | Promise<boolean> => answerOpen(tracking, token, source),

    /**
     * A link request: the original URL recorded for the token's link (and the hit is recorded), or undefined when the
     * token is not a link token of this installation for a link of a tracked message.
     */
    click: (token: string, source: HitSource): string | undefined | Promise<string | undefined> =>
      answerClick(tracking, token, source),

    /** Writes every hit buffered so far (tests; shutdown). */
    flush: flushAll,

    /** Flushes, at shutdown: the hits answered before are written. */
    close: flushAll,

    /** Forgets the cached lookups of a deleted grant, so its tracking URLs answer 404 at once in this process. */
    forgetGrant: (grantId: string): void => forgetGrant(tracking, grantId),

    /** One sent message's engagement: opens, clicks per link, replies, and each recipient's delivery state. */
    engagement: (principal: Principal, input: GetMessageEngagementInput) => engagementOf(tracking, principal, input),
  };
}

/** The tracking service. */
export type { TrackingService } from './contracts.js';
